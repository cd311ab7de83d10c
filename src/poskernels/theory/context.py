"""What a RoPE's frequencies mean for context length: turns, the critical dimension, the planes a map leaves unseen.

Readings of the frequencies ``theta_j`` a model trained with at length ``L`` (and of the frequencies ``f_j`` an
extension map gives it at a target length ``N``):

- **Critical dimension** (Liu et al. 2023, "Scaling Laws of RoPE-based Extrapolation"): the planes whose
  wavelength ``lambda_j = 2 pi / theta_j`` fits in the training length turn a whole circle in training;
  ``d_extra = 2 ceil((d/2) log_b(L / 2 pi))`` counts their dimensions, and the first plane past them, of
  wavelength ``T_extra = 2 pi b**(d_extra / d)``, bounds extrapolation.
- **Theorem 5 (i) verdicts** at ``N``: a plane that never turned in training sees, past ``L``, angles training
  never produced; after a map, the test angles reach ``(N - 1) f_j`` against the trained arc ``(L - 1) theta_j``.

The kernel's first zero and Men et al.'s base bound, the third reading, are :mod:`poskernels.theory.base_bound`
(its names stay in this module's ``__all__``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import DEFAULT_BASE, omega  # noqa: F401  (omega: the Examples)
from ..errors import PosKernelsError, check_array, check_base, check_even_dimension, check_int, check_length
from .base_bound import (  # the kernel's first zero, in __all__ here as before the split (and its core)
    CHUNK,  # noqa: F401  (importable from here as before)
    MAX_SCAN,
    BaseBounds,
    _first_negative_offset,
    base_bounds,
    first_negative_offset,
    smallest_nonnegative_base,
)

__all__ = [
    "BaseBounds",
    "ContextVerdict",
    "base_bounds",
    "context_verdicts",
    "critical_dimension",
    "extrapolation_bound",
    "first_negative_offset",
    "smallest_nonnegative_base",
    "unseen_planes",
]


def critical_dimension(L: int, d: int, b: float = DEFAULT_BASE) -> int:
    """Liu et al. (2023): ``d_extra = 2 ceil((d/2) log_b(L / 2 pi))``, the dimensions whose planes turn in ``L``.

    Held within ``0..d`` (a length shorter than one turn of plane 0 gives 0; every plane turning gives ``d``).

    Parameters
    ----------
    L : int
        The training length.
    d : int
        The even head width.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)``; default 10,000.

    Returns
    -------
    int
        ``d_extra``, even, in ``0..d``.

    Raises
    ------
    PosKernelsError
        If `L` is not a positive integer, `d` not a positive even integer or `b` not a base above 1.

    Examples
    --------
    >>> critical_dimension(4096, 128, 1e4)  # Llama 2: Liu et al.'s 92
    92
    >>> critical_dimension(4, 16)
    0
    """
    L = check_length("the training length L", L)
    d, b = check_even_dimension(d), check_base(b)
    return _critical_dimension(L, d, b)


def _critical_dimension(L: int, d: int, b: float) -> int:
    """:func:`critical_dimension` of checked arguments."""
    x = (d / 2) * math.log(L / (2 * math.pi)) / math.log(b)
    return int(min(max(2 * math.ceil(x), 0), d))


def extrapolation_bound(L: int, d: int, b: float = DEFAULT_BASE) -> float:
    """Liu et al. (2023): ``T_extra = 2 pi b**(d_extra / d)``, the wavelength of the first plane that never turned.

    ``inf`` when every plane turns (no plane is left to produce unseen angles).

    Parameters
    ----------
    L : int
        The training length.
    d : int
        The even head width.
    b : float, optional
        The base of ``theta_j = b**(-2j/d)``; default 10,000.

    Returns
    -------
    float
        ``T_extra`` in positions.

    Raises
    ------
    PosKernelsError
        If `L` is not a positive integer, `d` not a positive even integer or `b` not a base above 1.

    Examples
    --------
    >>> round(extrapolation_bound(4096, 128, 1e4))  # Llama 2
    4712
    """
    L = check_length("the training length L", L)
    d, b = check_even_dimension(d), check_base(b)
    d_extra = _critical_dimension(L, d, b)
    if d_extra >= d:
        return math.inf
    return 2 * math.pi * b ** (d_extra / d)


def unseen_planes(theta: ArrayLike, inv_freq: ArrayLike, L: int, N: int) -> np.ndarray:
    """Theorem 5 (i) at a target length: the planes whose test angles leave the arc training produced.

    Plane ``j`` trained at ``theta_j`` over offsets ``0..L-1`` has seen every angle if it turned a whole circle,
    ``(L - 1) theta_j >= 2 pi``; otherwise only ``[0, (L - 1) theta_j]``.  Read at frequency ``f_j``
    (``inv_freq``; ``theta`` itself when no map is applied) up to offset ``N - 1``, it reaches
    ``(N - 1) f_j``.  A plane is counted when that passes the trained arc by more than one position's angle
    ``theta_j`` (Theorem 5 (ii): PI lands within one position of the trained range, and is not counted).

    Parameters
    ----------
    theta : array_like, shape (P,)
        The trained frequencies ``theta_j``.
    inv_freq : array_like, shape (P,)
        The frequencies the planes are read at (after an extension map).
    L : int
        The training length.
    N : int
        The target length.

    Returns
    -------
    ndarray of int
        The plane indices.

    Raises
    ------
    PosKernelsError
        If `theta` and `inv_freq` are not 1-d of one shape, or `L` or `N` is not a positive integer.

    Examples
    --------
    >>> th = omega(16, 1e4)
    >>> unseen_planes(th, th, 32, 128).tolist()  # native frequencies at 4 L: the planes that never turned
    [2, 3, 4, 5, 6, 7]
    >>> unseen_planes(th, th / 4, 32, 128).tolist()  # PI at kappa = 4
    []
    """
    theta, inv_freq = check_array("theta", theta), check_array("inv_freq", inv_freq)
    if theta.ndim != 1 or theta.shape != inv_freq.shape:
        raise PosKernelsError(f"theta and inv_freq must be 1-d of one shape (P,); got {theta.shape}, {inv_freq.shape}")
    L, N = check_length("the training length L", L), check_length("the target length N", N)
    return _unseen_planes(theta, inv_freq, L, N)


def _unseen_planes(theta: np.ndarray, inv_freq: np.ndarray, L: int, N: int) -> np.ndarray:
    """:func:`unseen_planes` of checked arguments."""
    turned = (L - 1) * theta >= 2 * math.pi  # (P,)
    past = (N - 1) * inv_freq > L * theta * (1 + 1e-12)  # (P,) beyond the arc by more than one position
    return np.flatnonzero(~turned & past)


@dataclass(frozen=True)
class ContextVerdict:
    """What one set of frequencies means at a target length: the kernel's first zero and the planes left unseen.

    Attributes
    ----------
    first_negative_offset : int or None
        :func:`~poskernels.theory.base_bound.first_negative_offset` of the frequencies up to the largest offset
        asked (None: nonnegative throughout).
    unseen_planes : ndarray of int
        :func:`unseen_planes` of the frequencies against the trained ones.
    """

    first_negative_offset: int | None
    unseen_planes: np.ndarray


def context_verdicts(
    theta: ArrayLike, freqs: Mapping[str, ArrayLike], L: int, N: int, max_offset: int
) -> dict[str, ContextVerdict]:
    """Each set of frequencies read at ``N``: the kernel's first zero up to ``max_offset`` and Theorem 5 (i)'s planes.

    One call for every map a census reads: ``theta``, ``L``, ``N`` and ``max_offset`` are checked once, each set of
    frequencies once, and every verdict is computed from the checked arrays (the same numbers as
    :func:`~poskernels.theory.base_bound.first_negative_offset` and :func:`unseen_planes` called one by one).

    Parameters
    ----------
    theta : array_like, shape (P,)
        The trained frequencies ``theta_j``.
    freqs : mapping of str to array_like, shape (P,)
        The frequencies each reading uses (``theta`` itself for the native one, a map's ``inv_freq``).
    L : int
        The training length.
    N : int
        The target length.
    max_offset : int
        The last offset the kernel is scanned to, at most :data:`~poskernels.theory.base_bound.MAX_SCAN`.

    Returns
    -------
    dict of str to ContextVerdict
        One verdict per name of ``freqs``, in its order.

    Raises
    ------
    PosKernelsError
        If ``theta`` or a set of frequencies is not a non-empty 1-d finite array of one shape, ``L`` or ``N`` not a
        positive integer, or ``max_offset`` out of range.

    Examples
    --------
    >>> th = omega(16, 1e4)
    >>> v = context_verdicts(th, {"native": th, "pi": th / 4}, 32, 128, 127)
    >>> v["native"].first_negative_offset, v["native"].unseen_planes.tolist(), v["pi"].unseen_planes.tolist()
    (91, [2, 3, 4, 5, 6, 7], [])
    >>> context_verdicts(th, {"native": th[:3]}, 32, 128, 127)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: theta and inv_freq must be 1-d of one shape (P,); got (8,), (3,)
    """
    theta = check_array("theta", theta)
    if theta.ndim != 1 or theta.size == 0:
        raise PosKernelsError(f"theta must be a non-empty 1-d array of frequencies; got shape {theta.shape}")
    L, N = check_length("the training length L", L), check_length("the target length N", N)
    max_offset = check_int("the largest offset", max_offset, 0, MAX_SCAN, "the kernel is scanned offset by offset")
    names = list(freqs)
    for name in names:
        if np.shape(freqs[name]) != theta.shape:
            shape = np.shape(freqs[name])
            raise PosKernelsError(f"theta and inv_freq must be 1-d of one shape (P,); got {theta.shape}, {shape}")
    # every reading's frequencies in one check: maps that agree (PI's and the config's own) are one value
    stacked = check_array("inv_freq", [freqs[name] for name in names]).reshape(len(names), theta.size)  # (M, P)
    return {
        name: ContextVerdict(_first_negative_offset(f, max_offset), _unseen_planes(theta, f, L, N))
        for name, f in zip(names, stacked)
    }
