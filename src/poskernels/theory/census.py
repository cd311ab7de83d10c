"""Past the training window: Definition 5's maps seen per plane, and Theorem 5 (i)-(iii) (wavelength census and
rescalings).

Plane ``j`` of RoPE turns at ``theta_j = b**(-2j/d)`` radians per position; its wavelength is
``lambda_j = 2 pi / theta_j``.  A head trained on offsets ``0..L-1`` has seen plane ``j`` only on the arc
``[0, (L-1) theta_j]``; the maps of :mod:`poskernels.extension` (PI, NTK-aware, YaRN) pull test angles
back into, or near, that arc.  Part (iv), how far a score can stray between two trained offsets and Chen et al.'s
constant, is :mod:`poskernels.theory.interpolation` (its names stay in this module's ``__all__``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..encodings import DEFAULT_BASE, omega
from ..errors import PosKernelsError, check_budget, check_kappa, check_length
from ..extension import extend
from .interpolation import (  # Theorem 5 (iv), in __all__ here as before the split
    ChenCounterexample,
    chen_constant,
    chen_counterexample,
    chen_ratio,
    chen_stated_bound,
    interpolation_bound,
    interpolation_error,
    sum_theta_sq,
)

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
