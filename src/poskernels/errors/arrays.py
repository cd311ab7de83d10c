"""The validators of arrays: finite numbers of a kind and dimension, per-plane frequencies, a result that must not
overflow float64, and the size budget an array is checked against before it is allocated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import PosKernelsError
from .show import _is_finite_real, _show

__all__ = ["check_array", "check_budget", "check_finite_result", "check_frequencies", "MAX_ELEMENTS"]

#: Size budget of one array the library builds from sizes it is given (``omega(d)``, a ``(W, W)`` Gram matrix,
#: an ``(n, n)`` bias): 2**24 elements, 128 MiB of float64.  The article's largest array (the Gram matrix of
#: 4,096 positions) is exactly at it; a size past it is refused before anything is allocated.
MAX_ELEMENTS = 2**24


def check_array(
    name: str, value: Any, *, ndim: int | None = None, integer: bool = False, complex_ok: bool = False
) -> np.ndarray:
    """Return ``value`` as a finite float64 (int64 with ``integer``, complex128 with ``complex_ok``) array, else raise.

    NaN and infinities are refused: a NaN position turns every score NaN, and an argmax over NaN picks
    class 0, a silently wrong answer.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : array_like
        The numbers given (booleans, strings and ragged lists refused).
    ndim : int, optional
        The dimensions required.
    integer : bool
        Require whole numbers below ``2**53`` in size, returned as int64.
    complex_ok : bool
        Accept complex numbers (returned as complex128).

    Returns
    -------
    ndarray

    Raises
    ------
    PosKernelsError
        If ``value`` is not an array of finite numbers of that kind and dimension.

    Examples
    --------
    >>> check_array("positions", [0, 1.5]).tolist()
    [0.0, 1.5]
    >>> check_array("positions", [0, float("nan")])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: positions must be finite numbers; got [0, nan] (nan at index 1)
    """
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as err:  # ragged lists, objects numpy cannot hold
        raise PosKernelsError(f"{name} must be an array of numbers; got {_show(value)} ({err})") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == object):
        raise PosKernelsError(f"{name} must be an array of numbers; got dtype {arr.dtype}: {_show(value)}")
    if np.issubdtype(arr.dtype, np.complexfloating) and not complex_ok:
        raise PosKernelsError(f"{name} must be real numbers; got dtype {arr.dtype}")
    try:
        out = arr.astype(np.complex128 if complex_ok else np.float64)
    except (ValueError, TypeError, OverflowError):
        raise PosKernelsError(f"{name} must be an array of real numbers; got {_show(value)}") from None
    if ndim is not None and out.ndim != ndim:
        raise PosKernelsError(f"{name} must have {ndim} dimension(s); got shape {out.shape}")
    bad = ~np.isfinite(out)
    if bad.any():
        if out.ndim == 0:
            raise PosKernelsError(f"{name} must be a finite number; got {out.item()!r}")
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        raise PosKernelsError(
            f"{name} must be finite numbers; got {_show(value)} ({out[index].item()!r} at index {where})"
        )
    if integer:
        if not np.all(out == np.round(out)) or np.any(np.abs(out) > 2**53):
            raise PosKernelsError(f"{name} must be whole numbers below 2**53 in size; got {_show(value)}")
        return out.astype(np.int64)
    return out


def check_frequencies(name: str, value: Any) -> np.ndarray:
    """Return per-plane frequencies as a non-empty 1-d float64 array of finite positive numbers, else raise.

    Parameters
    ----------
    name : str
        The value's name, for the message.
    value : array_like
        The frequencies given.

    Returns
    -------
    ndarray, shape (planes,)

    Raises
    ------
    PosKernelsError
        If ``value`` is empty, not 1-d, or holds a number that is not finite and positive.

    Examples
    --------
    >>> check_frequencies("theta", [1.0, 0.1]).tolist()
    [1.0, 0.1]
    >>> check_frequencies("theta", [1.0, 0.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: theta must be ... finite positive frequencies; got array([1., 0.])
    """
    w = check_array(name, value)
    if w.ndim != 1 or w.size == 0 or np.any(w <= 0):
        raise PosKernelsError(f"{name} must be a non-empty 1-d array of finite positive frequencies; got {_show(w)}")
    return w


def check_finite_result(what: str, value: Any, accepted: str, **inputs: Any) -> Any:
    """Return ``value``, computed from finite ``inputs``, if it is finite; else raise, quoting the inputs.

    The edge of float64: a result whose true value lies past float64's largest (or the NaN of ``inf - inf`` such
    an overflow leads to) is refused rather than returned as ``inf`` or NaN.  Compute ``value`` under
    ``np.errstate(over="ignore", invalid="ignore")`` and pass it here.

    Parameters
    ----------
    what : str
        What was computed, for the message.
    value : object
        The result; integer and object (exact) values are returned as they are.
    accepted : str
        What inputs are accepted, for the message.
    **inputs : array_like
        The inputs, each quoted by its largest magnitude.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    PosKernelsError
        If a float or complex ``value`` is not finite.

    Examples
    --------
    >>> check_finite_result("q k", 6.0, "q k must stay below 1.8e308", q=2.0, k=3.0)
    6.0
    >>> check_finite_result("q k", float("inf"), "q k must stay below 1.8e308", q=1e300, k=[1e10])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: q k overflows float64; got largest |q| 1e+300, largest |k| 1e+10 (q k must ...)
    """
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc" or np.all(np.isfinite(arr)):
        return value
    got = []
    for name, given in inputs.items():
        a = np.abs(np.asarray(given))
        got.append(f"largest |{name}| {float(a.max()):.6g}" if a.size else f"{name} empty")
    raise PosKernelsError(f"{what} overflows float64; got {', '.join(got)} ({accepted})")


def check_budget(what: str, elements: Any, limit: int = MAX_ELEMENTS) -> int:
    """Refuse, before it is allocated, an array of ``elements`` entries past ``limit`` (:data:`MAX_ELEMENTS`).

    Parameters
    ----------
    what : str
        The array, for the message.
    elements : int or float
        Its entries (an infinite or NaN count is past any limit).
    limit : int
        The most entries.

    Returns
    -------
    int
        ``elements``.

    Raises
    ------
    PosKernelsError
        If ``elements`` is past ``limit``.

    Examples
    --------
    >>> check_budget("omega(d)", 8)
    8
    >>> check_budget("omega(d)", 5 * 10**8)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: omega(d) would hold 500000000 numbers; the limit is 16777216 ...
    """
    if not _is_finite_real(elements) or elements > limit:  # an infinite or NaN count is past any limit
        n = int(elements) if _is_finite_real(elements) and float(elements).is_integer() else elements
        raise PosKernelsError(
            f"{what} would hold {_show(n)} numbers; the limit is {limit} ({limit * 8 // 2**20} MiB of float64) so "
            "that no call allocates gigabytes or runs for hours; got sizes past it"
        )
    return int(elements)
