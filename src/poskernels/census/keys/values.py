"""One value of a config read and checked: a number, a count, a list of factors, and where it was read.
"""

from __future__ import annotations

import math
import numbers
import reprlib

from ...errors import PosKernelsError

__all__ = ["count", "factor_list", "number", "where"]


# Validators of one key, naming it as scope.key and quoting the value
def where(key: str, scope: str) -> str:
    """The dotted name of ``key`` inside ``scope``, as errors quote it.

    Parameters
    ----------
    key : str
        A config key.
    scope : str
        The dict it lies in (``""``: the top level).

    Returns
    -------
    str
        ``scope.key``, or ``key`` at the top level.

    Examples
    --------
    >>> where("factor", "rope_parameters"), where("head_dim", "")
    ('rope_parameters.factor', 'head_dim')
    """
    return key if not scope else f"{scope}.{key}"


def number(raw: dict, key: str, scope: str = "", default=None, required: bool = True) -> float | None:
    """The finite number under ``key``, else raise naming ``scope.key`` and quoting the value.

    Parameters
    ----------
    raw : dict
        The dict holding the key.
    key : str
        The key read.
    scope : str
        Where ``raw`` lies, for the error (:func:`where`).
    default : float, optional
        Returned when the key is missing or null.
    required : bool
        Whether a missing key (without ``default``) is refused; else None is returned.

    Returns
    -------
    float or None
        The value as a float, ``default``, or None.

    Raises
    ------
    PosKernelsError
        If the value is not a finite real number (booleans refused), or a required key is missing.

    Examples
    --------
    >>> number({"factor": 8}, "factor"), number({}, "factor", default=1.0)
    (8.0, 1.0)
    >>> number({"factor": "x"}, "factor", "rope_parameters")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_parameters.factor' must be a finite number; got 'x'
    """
    if key not in raw or raw[key] is None:
        if default is not None or not required:
            return default
        raise PosKernelsError(f"config key {where(key, scope)!r} is missing; a RoPE config needs it")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite(value):
        raise PosKernelsError(f"config key {where(key, scope)!r} must be a finite number; got {shown(value)}")
    return float(value)


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past float64 (10**400)
        return False


def shown(value) -> str:
    """A short quote of a config value (a 5,000-digit integer is cut).

    Parameters
    ----------
    value : object
        A config value.

    Returns
    -------
    str
        Its ``reprlib`` quote, or an integer's first 20 digits and ``...`` past ``10**30``.

    Examples
    --------
    >>> shown([1, 2]), shown(10**40)
    ('[1, 2]', '10000000000000000000...')
    """
    return reprlib.repr(value) if not isinstance(value, int) or abs(value) < 10**30 else f"{str(value)[:20]}..."


#: Largest count a config may give (head_dim, max_position_embeddings, ...): a signed 64-bit integer, as in the
#: frameworks that read these files.  The rotary width itself is bounded by :data:`poskernels.errors.MAX_D`.
MAX_COUNT = 2**63 - 1


def count(raw: dict, key: str, scope: str = "", required: bool = True) -> int | None:
    """The positive integer under ``key``, kept exact, else raise naming ``scope.key`` and quoting the value.

    Parameters
    ----------
    raw : dict
        The dict holding the key.
    key : str
        The key read.
    scope : str
        Where ``raw`` lies, for the error (:func:`where`).
    required : bool
        Whether a missing key is refused; else None is returned.

    Returns
    -------
    int or None
        The count (an int stays exact: ``2**53 + 1`` is not rounded), or None when missing and not required.

    Raises
    ------
    PosKernelsError
        If the value is not a positive integer up to :data:`MAX_COUNT`, or a required key is missing.

    Examples
    --------
    >>> count({"head_dim": 2**53 + 1}, "head_dim")
    9007199254740993
    >>> count({"head_dim": 1.5}, "head_dim")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'head_dim' must be a positive integer up to 9223372036854775807;
    got 1.5
    """
    value = number(raw, key, scope, required=required)
    if value is None:
        return None
    exact = raw.get(key)  # an int is kept exact, not rounded through float (2**53 + 1 stays odd)
    if value <= 0 or not float(value).is_integer() or value > MAX_COUNT:
        raise PosKernelsError(
            f"config key {where(key, scope)!r} must be a positive integer up to {MAX_COUNT}; got {shown(exact)}"
        )
    return exact if isinstance(exact, int) and not isinstance(exact, bool) else int(value)


def factor_list(raw: dict, key: str, scope: str, planes: int) -> list[float]:
    """LongRoPE's list of per-plane factors under ``key``: one positive number per plane.

    Parameters
    ----------
    raw : dict
        The RoPE dict.
    key : str
        The list's key (a map's per-plane option, LongRoPE's ``short_factor`` or ``long_factor``).
    scope : str
        Where ``raw`` lies, for the error (:func:`where`).
    planes : int
        The number of rotated planes (half the rotated width).

    Returns
    -------
    list of float

    Raises
    ------
    PosKernelsError
        If the key is missing, or is not a list of ``planes`` positive finite numbers.

    Examples
    --------
    >>> factor_list({"long_factor": [1, 2.5]}, "long_factor", "rope_parameters", 2)
    [1.0, 2.5]
    >>> factor_list({"long_factor": [1.0]}, "long_factor", "rope_parameters", 2)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_parameters.long_factor' must be a list of 2 positive
    numbers (one per plane); got 1 values: [1.0]
    """
    if key not in raw or raw[key] is None:
        raise PosKernelsError(f"config key {where(key, scope)!r} is missing; LongRoPE needs one factor per plane")
    values = raw[key]
    ok = isinstance(values, list) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in values
    )
    if not ok or len(values) != planes:
        count = f"{len(values)} values: " if isinstance(values, list) else ""
        raise PosKernelsError(
            f"config key {where(key, scope)!r} must be a list of {planes} positive numbers (one per plane); "
            f"got {count}{reprlib.repr(values)}"
        )
    return [float(v) for v in values]
