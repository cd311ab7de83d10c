"""The validators of one number: an integer or a real in a range, a positive one, a length, a bool.

Each returns the value as the plain Python type (``int``, ``float``, ``bool``) or raises
:class:`~poskernels.errors.PosKernelsError` quoting it and saying what range would be accepted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import PosKernelsError
from .show import _is_finite_real, _is_int, _show

__all__ = [
    "check_bool",
    "check_int",
    "check_length",
    "check_open_unit",
    "check_positive_int",
    "check_positive_real",
    "check_real",
]


def check_positive_int(name: str, value: Any) -> int:
    """Return ``value`` as ``int`` if it is a positive integer, else raise.

    Parameters
    ----------
    name, value : str, object
        The value's name in the message, and the value.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``value`` is not a positive integer (a bool is not).

    Examples
    --------
    >>> check_positive_int("n", 32)
    32
    """
    if not _is_int(value) or value <= 0:
        raise PosKernelsError(f"{name} must be a positive integer; got {_show(value)}")
    return int(value)


def check_length(name: str, value: Any) -> int:
    """Return a length (a positive integer at most 2**53, so float64 holds it and every offset below it exactly).

    Parameters
    ----------
    name, value : str, object
        The value's name in the message, and the value.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``value`` is not an integer in ``[1, 2**53]``.

    Examples
    --------
    >>> check_length("the training length L", 4096)
    4096
    """
    return check_int(name, value, 1, 2**53, "float64 holds every offset below it exactly")


def check_positive_real(name: str, value: Any) -> float:
    """Return ``value`` as ``float`` if it is a finite positive number, else raise.

    Parameters
    ----------
    name, value : str, object
        The value's name in the message, and the value.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``value`` is not a finite number > 0.

    Examples
    --------
    >>> check_positive_real("s", 0.5)
    0.5
    """
    if not _is_finite_real(value) or value <= 0 or float(value) == 0:
        raise PosKernelsError(f"{name} must be a finite positive number; got {_show(value)}")
    return float(value)


def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None, why: str = "") -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[lo, hi]`` (a bound None is open), else raise.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given (a bool is refused).
    lo, hi : int or None
        The bounds.
    why : str
        The reason for ``hi``, added to the message, so a refused size says its limit and the reason.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``value`` is not an integer in the bounds.

    Examples
    --------
    >>> check_int("seed", 3, 0, 2**63 - 1)
    3
    >>> check_int("d", 20000, 2, 4096, "each d x d map is float64")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: d must be an integer in [2, 4096] (each d x d map is float64); got 20000
    """
    if not _is_int(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"in [{lo}, {hi}]" if lo is not None and hi is not None else f">= {lo}" if lo is not None else (
            f"<= {hi}" if hi is not None else "")  # fmt: skip
        reason = f" ({why})" if why else ""
        raise PosKernelsError(f"{name} must be an integer {span}{reason}; got {_show(value)}".replace("  ", " "))
    return int(value)


def check_real(
    name: str, value: Any, lo: float | None = None, hi: float | None = None, *, open_lo: bool = False
) -> float:
    """Return ``value`` as ``float`` if it is a finite real in ``[lo, hi]`` (``(lo, hi]`` with ``open_lo``), else raise.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given (a bool is refused).
    lo, hi : float or None
        The bounds (None: open).
    open_lo : bool
        Whether ``lo`` itself is refused.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``value`` is not a finite real number in the bounds.

    Examples
    --------
    >>> check_real("beta1", 0.9, 0, 1)
    0.9
    >>> check_real("beta1", False, 0, 1)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: beta1 must be a finite number in [0, 1]; got False
    """
    ok = _is_finite_real(value)
    if ok:
        x = float(value)
        ok = (lo is None or (x > lo if open_lo else x >= lo)) and (hi is None or x <= hi)
    if not ok:
        left = "(" if open_lo else "["
        span = (
            ""
            if lo is None and hi is None
            else f" in {left}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
        )
        raise PosKernelsError(f"{name} must be a finite number{span}; got {_show(value)}")
    return x


def check_open_unit(name: str, value: Any, why: str = "") -> float:
    """Return ``value`` as ``float`` if it is a finite number strictly between 0 and 1, else raise (``why`` explains).

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given.
    why : str
        What the value is, added to the message.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``value`` is not in ``(0, 1)``.

    Examples
    --------
    >>> check_open_unit("eps", 1e-12)
    1e-12
    >>> check_open_unit("eps", 1, "the weight a cut may drop")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: eps must be a finite number in (0, 1) (the weight a cut may drop); got 1
    """
    if not _is_finite_real(value) or not 0 < float(value) < 1:
        reason = f" ({why})" if why else ""
        raise PosKernelsError(f"{name} must be a finite number in (0, 1){reason}; got {_show(value)}")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (a NumPy bool too), else raise: ``"no"`` is not False.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : object
        The value given.

    Returns
    -------
    bool

    Raises
    ------
    PosKernelsError
        If ``value`` is not a bool.

    Examples
    --------
    >>> check_bool("truncate", np.True_)
    True
    >>> check_bool("truncate", "no")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: truncate must be True or False; got 'no'
    """
    if not isinstance(value, bool | np.bool_):
        raise PosKernelsError(f"{name} must be True or False; got {_show(value)}")
    return bool(value)
