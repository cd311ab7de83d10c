"""Theorem 5 (iv): how far a score can stray between two trained offsets, and Chen et al.'s constant.

Between two offsets ``D1 < D2`` a RoPE score ``a(Delta) = Re sum_j h_j e^{i Delta theta_j}`` stays within
``(Delta - D1)(D2 - Delta)/2 * sum_j |h_j| theta_j**2`` of its chord (the interpolation bound, with the constant
``sum_j theta_j**2``); Chen et al.'s stated constant ``d/(4 ln b)`` is too small, and
:func:`chen_counterexample` is a score that breaks it.

Each public function checks its arguments once and computes through unchecked cores (``_interpolation_error``,
``_chen_constant``...), so :func:`chen_counterexample`, which reads three of them, checks ``d``, ``b`` and the
interval once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE
from ..encodings.codes import plane_frequencies
from ..errors import (
    PosKernelsError,
    check_array,
    check_base,
    check_budget,
    check_even_dimension,
    check_finite_result,
    check_real,
)
from .decay import _check_planes, _offset_score_complex

__all__ = [
    "ChenCounterexample",
    "chen_constant",
    "chen_counterexample",
    "chen_ratio",
    "chen_stated_bound",
    "interpolation_bound",
    "interpolation_error",
    "sum_theta_sq",
]


def sum_theta_sq(d: int, b: float = DEFAULT_BASE) -> float:
    """Theorem 5 (iv): ``sum_j theta_j**2 = (1 - b**-2) / (1 - b**(-4/d))``, a geometric sum.

    Parameters
    ----------
    d : int
        The even head width.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)``; default 10,000.

    Returns
    -------
    float
        The constant of Theorem 5 (iv)'s interpolation bound.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `b` not a finite base above 1.

    Examples
    --------
    >>> round(sum_theta_sq(16), 4), round(sum_theta_sq(128), 4)
    (1.1111, 3.9983)
    """
    return _sum_theta_sq(check_even_dimension(d), check_base(b))


def _sum_theta_sq(d: int, b: float) -> float:
    """:func:`sum_theta_sq` of a checked ``d`` and ``b``."""
    return -math.expm1(-2 * math.log(b)) / -math.expm1(-4 * math.log(b) / d)


def _check_interval(D1, D2, D) -> tuple[float, float, np.ndarray]:
    D1, D2 = check_real("D1", D1), check_real("D2", D2)
    D = check_array("D", D)
    if not D1 < D2:
        raise PosKernelsError(f"need finite offsets D1 < D2; got D1 = {D1!r}, D2 = {D2!r}")
    check_finite_result("the interval width D2 - D1", D2 - D1, "D1 and D2 must lie within 1.8e308", D1=D1, D2=D2)
    if np.any(D < D1) or np.any(D > D2):
        raise PosKernelsError(f"Delta must lie in [D1, D2] = [{D1!r}, {D2!r}]; got {D!r}")
    return D1, D2, D


def interpolation_error(h: ArrayLike, theta: ArrayLike, D1: float, D2: float, D: ArrayLike) -> np.ndarray:
    """``|a(Delta) - l(Delta)|``: ``a = Re sum_j h_j e^{i Delta theta_j}`` against its chord between ``D1`` and ``D2``.

    Parameters
    ----------
    h : array_like, shape (P,)
        The plane weights ``h_j`` (real or complex).
    theta : array_like, shape (P,)
        The frequencies ``theta_j``.
    D1, D2 : float
        The two trained offsets, ``D1 < D2``, between which the chord is drawn.
    D : array_like
        Offsets in ``[D1, D2]``.

    Returns
    -------
    ndarray
        The distance of the score from its chord, of `D`'s shape.

    Raises
    ------
    PosKernelsError
        If ``D1 < D2`` fails, an offset of `D` lies outside ``[D1, D2]``, or an array is not finite.

    Examples
    --------
    >>> float(interpolation_error([1.0], [np.pi], 0, 2, 1.0))  # cos: chord at 1, curve at -1
    2.0
    """
    D1, D2, D = _check_interval(D1, D2, D)
    h, theta = _check_planes(h, theta)
    return _interpolation_error(h, theta, D1, D2, D)


def _interpolation_error(h: np.ndarray, theta: np.ndarray, D1: float, D2: float, D: np.ndarray) -> np.ndarray:
    """:func:`interpolation_error` of checked arguments (``h`` complex (P,), ``theta`` (P,), ``D1 <= D <= D2``)."""
    a1, a2, aD = (_offset_score_complex(h, np.asarray(x, dtype=np.float64), theta).real for x in (D1, D2, D))
    chord = a1 + (a2 - a1) * (D - D1) / (D2 - D1)  # shape of D
    return np.abs(aD - chord)


def interpolation_bound(h: ArrayLike, theta: ArrayLike, D1: float, D2: float, D: ArrayLike) -> np.ndarray:
    """Theorem 5 (iv): ``|a - l| <= (1/2) (Delta - D1)(D2 - Delta) sum_j |h_j| theta_j**2``.

    Parameters
    ----------
    h : array_like, shape (P,)
        The plane weights ``h_j`` (real or complex).
    theta : array_like, shape (P,)
        The frequencies ``theta_j``.
    D1, D2 : float
        The two trained offsets, ``D1 < D2``, between which the chord is drawn.
    D : array_like
        Offsets in ``[D1, D2]``.

    Returns
    -------
    ndarray
        The bound on :func:`interpolation_error`, of `D`'s shape.

    Raises
    ------
    PosKernelsError
        If ``D1 < D2`` fails, an offset lies outside ``[D1, D2]``, `h` and `theta` are not 1-d of one shape, or the
        bound
        passes float64's largest value.

    Examples
    --------
    >>> round(float(interpolation_bound([1.0], [np.pi], 0, 2, 1.0)), 4)  # pi^2 / 2
    4.9348
    """
    D1, D2, D = _check_interval(D1, D2, D)
    h, theta = _check_planes(h, theta)
    return _interpolation_bound(h, theta, D1, D2, D)


def _interpolation_bound(h: np.ndarray, theta: np.ndarray, D1: float, D2: float, D: np.ndarray) -> np.ndarray:
    """:func:`interpolation_bound` of checked arguments."""
    with np.errstate(over="ignore", invalid="ignore"):  # a bound past float64's largest (or inf * 0): refused below
        curvature = float((np.abs(h) * theta**2).sum())  # bound on |a''|
        bound = 0.5 * (D - D1) * (D2 - D) * curvature
    return check_finite_result(
        "the interpolation bound", bound, "the bound must stay below 1.8e308", h=h, theta=theta, D1=D1, D2=D2
    )


def chen_constant(d: int, b: float = DEFAULT_BASE) -> float:
    """Chen et al. (2023, Theorem 2.1)'s stated constant ``d / (4 ln b)`` in place of ``sum_j theta_j**2``.

    Parameters
    ----------
    d : int
        The even head width.
    b : float, optional
        The base; default 10,000.

    Returns
    -------
    float
        ``d / (4 ln b)``.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `b` not a finite base above 1.

    Examples
    --------
    >>> round(chen_constant(128), 4)
    3.4744
    """
    return _chen_constant(check_even_dimension(d), check_base(b))


def _chen_constant(d: int, b: float) -> float:
    """:func:`chen_constant` of a checked ``d`` and ``b``."""
    return d / (4 * math.log(b))


def chen_ratio(d: int, b: float = DEFAULT_BASE) -> float:
    """How many times too small the stated constant is: ``sum_j theta_j**2 / (d / (4 ln b))`` (Theorem 5 (iv)).

    Parameters
    ----------
    d : int
        The even head width.
    b : float, optional
        The base; default 10,000.

    Returns
    -------
    float
        :func:`sum_theta_sq` over :func:`chen_constant`; above 1 where the stated constant is too small.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `b` not a finite base above 1.

    Examples
    --------
    >>> round(chen_ratio(16), 2), round(chen_ratio(128), 2)
    (2.56, 1.15)
    """
    d, b = check_even_dimension(d), check_base(b)
    return _sum_theta_sq(d, b) / _chen_constant(d, b)


def chen_stated_bound(h_max: float, d: int, b: float, D1: float, D2: float, D: ArrayLike) -> np.ndarray:
    """Chen et al.'s stated bound ``(1/2)(Delta - D1)(D2 - Delta) max_j |h_j| d / (4 ln b)``.

    Parameters
    ----------
    h_max : float
        ``max_j |h_j|``, at least 0.
    d : int
        The even head width.
    b : float
        The base.
    D1, D2 : float
        The two trained offsets, ``D1 < D2``.
    D : array_like
        Offsets in ``[D1, D2]``.

    Returns
    -------
    ndarray
        The stated bound, of `D`'s shape.

    Raises
    ------
    PosKernelsError
        If ``D1 < D2`` fails, an offset lies outside ``[D1, D2]``, `h_max` is negative, or the bound passes float64's
        largest value.

    Examples
    --------
    >>> round(float(chen_stated_bound(1.0, 128, 1e4, 0, 1, 0.5)), 3)
    0.434
    """
    D1, D2, D = _check_interval(D1, D2, D)
    h_max = check_real("h_max = max_j |h_j|", h_max, 0)
    return _chen_stated_bound(h_max, _chen_constant(check_even_dimension(d), check_base(b)), D1, D2, D)


def _chen_stated_bound(h_max: float, C: float, D1: float, D2: float, D: np.ndarray) -> np.ndarray:
    """:func:`chen_stated_bound` of checked arguments, with Chen et al.'s constant ``C`` computed."""
    with np.errstate(over="ignore", invalid="ignore"):  # a bound past float64's largest (or inf * 0): refused below
        bound = 0.5 * (D - D1) * (D2 - D) * h_max * C
    return check_finite_result(
        "Chen et al.'s stated bound", bound, "the bound must stay below 1.8e308", h_max=h_max, D1=D1, D2=D2
    )


@dataclass(frozen=True)
class ChenCounterexample:
    """Theorem 5 (iv) against Chen et al.'s constant at ``h_j = 1``, interval ``[0, 1]``, ``Delta = 1/2``.

    Attributes
    ----------
    error : float
        ``|a(1/2) - l(1/2)|``.
    stated : float
        Chen et al.'s bound, which ``error`` exceeds.
    corrected : float
        The bound with ``sum_j theta_j**2``, which holds.
    """

    error: float
    stated: float
    corrected: float


def chen_counterexample(d: int = 128, b: float = DEFAULT_BASE) -> ChenCounterexample:
    """The counterexample to the stated constant (Theorem 5 (iv), after Chen et al. 2023).

    At ``h_j = 1`` on ``[0, 1]``, ``Delta = 1/2``, the score strays from its chord by more than the stated bound and
    less than the corrected one.

    Parameters
    ----------
    d : int, optional
        The even head width; default 128.
    b : float, optional
        The base; default 10,000.

    Returns
    -------
    ChenCounterexample
        The error, the stated bound and the corrected bound.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `b` not a finite base above 1.

    Examples
    --------
    >>> c = chen_counterexample()
    >>> round(c.error, 3), round(c.stated, 3), round(c.corrected, 3)
    (0.459, 0.434, 0.5)
    """
    d, b = check_even_dimension(d), check_base(b)
    check_budget(f"omega(d) at d = {d}", d // 2)
    theta = plane_frequencies(d, b)  # (d/2,) omega(d, b)
    h = np.ones_like(theta)  # (d/2,)
    D1, D2, D = 0.0, 1.0, np.array(0.5)  # the interval [0, 1] and its midpoint
    hc = h.astype(np.complex128)  # (d/2,) as the checked entry points hold h
    return ChenCounterexample(
        error=float(_interpolation_error(hc, theta, D1, D2, D)),
        stated=float(_chen_stated_bound(1.0, _chen_constant(d, b), D1, D2, D)),
        corrected=float(_interpolation_bound(hc, theta, D1, D2, D)),
    )
