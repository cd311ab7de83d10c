"""Past the training window: Definition 5's maps seen per plane, and Theorem 5 (wavelength census and rescalings).

Plane ``j`` of RoPE turns at ``theta_j = b**(-2j/d)`` radians per position; its wavelength is
``lambda_j = 2 pi / theta_j``.  A head trained on offsets ``0..L-1`` has seen plane ``j`` only on the arc
``[0, (L-1) theta_j]``; the maps of :mod:`poskernels.extension` (PI, NTK-aware, YaRN) pull test angles
back into, or near, that arc.  Part (iv) bounds how far a score can stray between two trained offsets,
with the constant ``sum_j theta_j**2``; Chen et al.'s stated constant ``d/(4 ln b)`` is too small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE, omega
from ..errors import (
    PosKernelsError,
    check_array,
    check_base,
    check_budget,
    check_even_dimension,
    check_finite_result,
    check_kappa,
    check_length,
    check_real,
)
from ..extension import extend
from .decay import offset_score_complex

__all__ = [
    "CensusRow",
    "ChenCounterexample",
    "chen_constant",
    "chen_counterexample",
    "chen_ratio",
    "chen_stated_bound",
    "full_turn_planes",
    "interpolation_bound",
    "interpolation_error",
    "pi_mapped_offsets",
    "rescaling_factors",
    "sum_theta_sq",
    "wavelength_census",
    "wavelengths",
]


def wavelengths(d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """Theorem 5: ``lambda_j = 2 pi / theta_j``, the positions plane ``j`` takes to turn once.

    Parameters
    ----------
    d : int
        The even head width; the planes are ``j = 0..d/2 - 1``.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)`` (Definition 4); default 10,000.

    Returns
    -------
    ndarray, shape (d/2,)
        ``lambda_j`` in positions; ``inf`` for a frequency that underflows to 0.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `b` is not a finite base above 1.

    Examples
    --------
    >>> wavelengths(16).round(1).tolist()
    [6.3, 19.9, 62.8, 198.7, 628.3, 1986.9, 6283.2, 19869.2]
    """
    with np.errstate(divide="ignore", over="ignore"):  # a frequency that underflows to 0 never turns: lambda = inf
        return 2 * math.pi / omega(d, b)  # (d/2,)


def full_turn_planes(L: int, d: int, b: float = DEFAULT_BASE) -> np.ndarray:
    """Theorem 5 (i): the planes that turn through a whole circle over offsets ``0..L-1``, ``(L-1) theta_j >= 2 pi``.

    Parameters
    ----------
    L : int
        The training length; the head has seen offsets ``0..L-1``.
    d : int
        The even head width.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)``; default 10,000.

    Returns
    -------
    ndarray of int
        Plane indices; the page reports their count.

    Raises
    ------
    PosKernelsError
        If `L` is not a positive integer, `d` not a positive even integer or `b` not a finite base above 1.

    Examples
    --------
    >>> full_turn_planes(32, 16).tolist()
    [0, 1]
    """
    L = check_length("the training length L", L)
    return np.flatnonzero((L - 1) * omega(d, b) >= 2 * math.pi)


@dataclass(frozen=True)
class CensusRow:
    """One plane of the wavelength census (Theorem 5 (i)).

    Attributes
    ----------
    plane : int
    wavelength : float
        ``lambda_j``.
    turns : float
        Turns over the training offsets, ``(L-1) theta_j / (2 pi)``.
    full_turn : bool
        Whether ``turns >= 1``: past ``L`` a plane with ``full_turn`` false shows angles never seen.
    """

    plane: int
    wavelength: float
    turns: float
    full_turn: bool


def wavelength_census(L: int, d: int, b: float = DEFAULT_BASE) -> list[CensusRow]:
    """Theorem 5 (i): plane, wavelength, turns within the training offsets, and whether a turn completes.

    Parameters
    ----------
    L : int
        The training length; the head has seen offsets ``0..L-1``.
    d : int
        The even head width.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)``; default 10,000.

    Returns
    -------
    list of CensusRow
        One row per plane ``j = 0..d/2 - 1``, fastest first.

    Raises
    ------
    PosKernelsError
        If `L` is not a positive integer, `d` not a positive even integer or `b` not a finite base above 1.

    Examples
    --------
    >>> [(r.plane, round(r.turns, 2), r.full_turn) for r in wavelength_census(32, 16)[:3]]
    [(0, 4.93, True), (1, 1.56, True), (2, 0.49, False)]
    """
    L = check_length("the training length L", L)
    lam = wavelengths(d, b)  # (d/2,)
    turns = (L - 1) / lam  # (d/2,)  (L-1) theta_j / 2 pi
    return [CensusRow(j, float(lam[j]), float(turns[j]), bool(turns[j] >= 1)) for j in range(lam.size)]


def rescaling_factors(name: str, d: int, b: float = DEFAULT_BASE, kappa: float = 4.0, L: int = 32) -> np.ndarray:
    """Definition 5 per plane: the factor a map of :data:`poskernels.extension.MAPS` puts on ``theta_j``.

    Parameters
    ----------
    name : str
        A map of :data:`poskernels.extension.MAPS` (``"pi"``, ``"ntk"``, ``"yarn"``, ...).
    d : int
        The even head width.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)``; default 10,000.
    kappa : float, optional
        The extension ratio ``kappa = L' / L`` (test length over training length), at least 1; default 4.
    L : int, optional
        The training length, read by the maps that look at wavelengths (YaRN); default 32.

    Returns
    -------
    ndarray, shape (d/2,)
        The factor ``theta'_j / theta_j`` of each plane.

    Raises
    ------
    PosKernelsError
        If `name` is not a known map, or `d`, `b`, `kappa` or `L` is out of range.

    Examples
    --------
    >>> rescaling_factors("ntk", 16).round(3).tolist()
    [1.0, 0.82, 0.673, 0.552, 0.453, 0.371, 0.305, 0.25]
    >>> rescaling_factors("yarn", 16).round(3).tolist()[:3]
    [0.349, 0.265, 0.25]
    """
    return extend(name, omega(d, b), kappa, L).factors  # (d/2,)


def pi_mapped_offsets(L: int, kappa: float) -> np.ndarray:
    """Theorem 5 (ii): PI's image ``Delta / kappa`` of the test offsets ``Delta = 0..kappa L - 1``.

    All lie in ``[0, L - 1/kappa]``, within one position of the trained range.

    Parameters
    ----------
    L : int
        The training length.
    kappa : float
        The extension ratio; the test length ``L' = kappa L`` must be a whole number.

    Returns
    -------
    ndarray, shape (kappa L,)
        ``Delta / kappa`` for ``Delta = 0..kappa L - 1``.

    Raises
    ------
    PosKernelsError
        If `L` is not a positive integer, `kappa` is below 1, or ``kappa L`` is not a whole number.

    Examples
    --------
    >>> pi_mapped_offsets(4, 2).tolist()
    [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    """
    L = check_length("the training length L", L)
    kappa = check_kappa(kappa)
    check_budget(f"the test offsets 0..kappa L - 1 (kappa = {kappa!r}, L = {L})", kappa * L)
    L_test = round(kappa * L)
    if abs(L_test - kappa * L) > 1e-9 * kappa * L:
        raise PosKernelsError(f"the test length kappa L must be a whole number; got kappa = {kappa!r}, L = {L!r}")
    return np.arange(L_test) / kappa  # (kappa L,)


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
    d = check_even_dimension(d)
    b = check_base(b)
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
    a1, a2, aD = (offset_score_complex(h, x, theta).real for x in (D1, D2, D))
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
    h, theta = check_array("h", h, complex_ok=True), check_array("theta", theta)
    if h.ndim != 1 or h.shape != theta.shape:
        raise PosKernelsError(f"h and theta must be 1-d of one shape (P,); got {h.shape} and {theta.shape}")
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
    d = check_even_dimension(d)
    return d / (4 * math.log(check_base(b)))


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
    return sum_theta_sq(d, b) / chen_constant(d, b)


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
    C = chen_constant(d, b)
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
    theta = omega(d, b)  # (d/2,)
    h = np.ones_like(theta)  # (d/2,)
    return ChenCounterexample(
        error=float(interpolation_error(h, theta, 0, 1, 0.5)),
        stated=float(chen_stated_bound(1.0, d, b, 0, 1, 0.5)),
        corrected=float(interpolation_bound(h, theta, 0, 1, 0.5)),
    )
