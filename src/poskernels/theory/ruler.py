"""Theorem 1 (ii): the stationary kernel's limit, the cosine integral ``I_b``, read as a logarithmic ruler.

As ``d`` grows, ``(2/d) kappa_d(Delta)`` (:func:`poskernels.theory.kernel.normalized_kernel`) tends to
``I_b(Delta) = (Ci(|Delta|) - Ci(|Delta|/b)) / ln b``, and ``I_b`` is a logarithmic ruler:
``1 - (gamma + ln|Delta|)/ln b`` up to ``(2/|Delta| + Delta^2/(4 b^2))/ln b``; one octave of offsets costs
``ln 2 / ln b`` of it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE
from ..errors import PosKernelsError, check_array, check_base

__all__ = [
    "I_b",
    "octave_cost",
    "ruler",
    "ruler_error_bound",
]


def _offsets(delta, *, nonzero: bool = False) -> np.ndarray:
    """Offsets as a float array; finite, and nonzero where the formula divides by ``|Delta|``."""
    out = check_array("offsets Delta", delta)
    if nonzero and np.any(out == 0):
        raise PosKernelsError(f"offsets Delta must be nonzero here (the ruler has ln|Delta|); got {delta!r}")
    return out


def I_b(delta: ArrayLike, b: float = DEFAULT_BASE) -> np.ndarray:
    """The cosine-integral limit ``I_b(Delta) = (Ci(|Delta|) - Ci(|Delta|/b)) / ln b`` (Theorem 1 (ii)).

    Parameters
    ----------
    delta : array_like, shape (...,)
        Offsets; ``I_b(0) = 1`` (the limit of ``(2/d) kappa_d(0) = 1``).
    b : float
        Base, > 1.

    Returns
    -------
    ndarray, shape (...,)
        ``int_0^1 cos(Delta b^-u) du``, the limit of ``(2/d) kappa_d(Delta)`` as ``d -> infinity``.

    Examples
    --------
    >>> I_b([1, 4, 1024]).round(3).tolist()
    [0.974, 0.772, 0.185]
    """
    from scipy.special import sici  # here: scipy.special costs ~0.15 s at the start of every command

    b = check_base(b)
    x = np.abs(_offsets(delta))
    lnb = math.log(b)
    big = x >= 1.0
    safe = np.where(big, x, 1.0)
    ci_hi, ci_lo = sici(safe)[1], sici(safe / b)[1]  # Ci(|Delta|), Ci(|Delta|/b)
    # |Delta| < 1: Ci(x) = gamma + ln x + S(x) (DLMF 6.6.6), so the logs cancel by hand and I_b = 1 - O(Delta^2)
    small = np.where(big, 0.0, x)
    return np.where(big, (ci_hi - ci_lo) / lnb, 1.0 + (_ci_series(small) - _ci_series(small / b)) / lnb)


def _ci_series(x: np.ndarray) -> np.ndarray:
    """``Ci(x) - gamma - ln x = sum_k (-1)^k x^(2k) / (2k (2k)!)`` for ``0 <= x <= 1`` (12 terms: below 1e-30)."""
    total = np.zeros_like(x)
    term = np.ones_like(x)  # (-1)^k x^(2k) / (2k)!
    for k in range(1, 13):
        term = -term * x * x / ((2 * k - 1) * (2 * k))
        total = total + term / (2 * k)
    return total


def ruler(delta: ArrayLike, b: float = DEFAULT_BASE) -> np.ndarray:
    """The logarithmic ruler ``1 - (gamma + ln|Delta|)/ln b`` (Theorem 1 (ii)).

    Parameters
    ----------
    delta : array_like
        Nonzero offsets ``Delta``.
    b : float, optional
        The base; default 10,000.

    Returns
    -------
    ndarray
        The ruler's similarity, of `delta`'s shape; it approximates ``I_b(Delta)`` within :func:`ruler_error_bound`.

    Raises
    ------
    PosKernelsError
        If an offset is 0 or not finite, or `b` is not a base above 1.

    Examples
    --------
    >>> ruler([1, 1024]).round(3).tolist()
    [0.937, 0.185]
    """
    b = check_base(b)
    x = np.abs(_offsets(delta, nonzero=True))
    return 1.0 - (np.euler_gamma + np.log(x)) / math.log(b)


def ruler_error_bound(delta: ArrayLike, b: float = DEFAULT_BASE) -> np.ndarray:
    """Bound on ``|I_b(Delta) - ruler(Delta)|``: ``(2/|Delta| + Delta^2/(4 b^2)) / ln b`` (Theorem 1 (ii)).

    Parameters
    ----------
    delta : array_like
        Nonzero offsets ``Delta``.
    b : float, optional
        The base; default 10,000.

    Returns
    -------
    ndarray
        The bound, of `delta`'s shape (``inf`` for an offset near float64's largest).

    Raises
    ------
    PosKernelsError
        If an offset is 0 or not finite, or `b` is not a base above 1.

    Examples
    --------
    >>> float(ruler_error_bound(64).round(4))
    0.0034
    """
    b = check_base(b)
    x = np.abs(_offsets(delta, nonzero=True))
    with np.errstate(over="ignore"):  # an offset near float64's largest: the bound is infinite, and says so
        return (2.0 / x + np.square(x / (2.0 * b))) / math.log(b)  # Delta^2/(4 b^2), without overflowing b**2


def octave_cost(b: float = DEFAULT_BASE) -> float:
    """Similarity lost per doubling of the offset on the ruler: ``ln 2 / ln b`` (Theorem 1 (ii)).

    Parameters
    ----------
    b : float, optional
        The base; default 10,000.

    Returns
    -------
    float
        ``ln 2 / ln b``.

    Raises
    ------
    PosKernelsError
        If `b` is not a base above 1.

    Examples
    --------
    >>> round(octave_cost(), 3)
    0.075
    """
    return math.log(2.0) / math.log(check_base(b))
