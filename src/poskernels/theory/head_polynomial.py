"""Proposition 3 (iii) read on a measured head: its trigonometric polynomial and where it would rebound.

A rotary head's score at offset ``r`` is ``Re sum_p h_p e^{-i r theta_p}``.  :func:`head_polynomial` reads the
coefficients ``h_p`` from a head's unturned queries and keys (the mean query against the mean key), and
:func:`polynomial_rebound` where the polynomial would rebound past the training length: the article's rebound,
``max_{r >= L} s(r) - s(L - 1) > 0`` (:func:`poskernels.experiments.rebound.rebound_height`), read on it.
Queries and keys are in this library's layout, plane ``p`` the pair ``(2p, 2p + 1)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_array

__all__ = [
    "head_polynomial",
    "polynomial_rebound",
]


def head_polynomial(q: ArrayLike, k: ArrayLike, q_pos: ArrayLike, k_pos: ArrayLike, theta: ArrayLike) -> np.ndarray:
    """A rotary head's plane weights ``h_p = conj(mean_t q~_t,p) mean_j k~_j,p`` from its turned queries and keys.

    ``q`` (S, d) at positions ``q_pos`` and ``k`` (T, d) at ``k_pos`` are turned by ``t theta`` (this library's
    pairs); each is turned back (``q~_t = R(-t theta) q_t``) and averaged over positions, so the head is read as
    one query against the mean key (the rebound experiment reads a trained head so): its score at offset ``r`` is
    ``Re sum_p h_p e^{-i r theta_p}`` (Proposition 3 (iii)).

    Parameters
    ----------
    q, k : array_like, shapes (S, d) and (T, d)
        Turned queries and keys, ``d = 2 len(theta)``.
    q_pos, k_pos : array_like, shapes (S,) and (T,)
        Their positions.
    theta : array_like, shape (d/2,)
        The head's frequencies.

    Returns
    -------
    ndarray of complex, shape (d/2,)
        The plane weights ``h_p``.

    Raises
    ------
    PosKernelsError
        If the shapes of ``q``, ``k`` and ``theta`` do not agree.

    Examples
    --------
    >>> theta = np.array([0.5])
    >>> t = np.arange(4)
    >>> turned = np.stack([np.cos(t * 0.5), np.sin(t * 0.5)], 1)  # the vector (1, 0) turned by t theta
    >>> np.round(head_polynomial(turned, 2 * turned, t, t, theta), 12).tolist()
    [(2+0j)]
    """
    q, k, th = check_array("q", q), check_array("k", k), check_array("theta", theta)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or q.shape[1] != 2 * th.size:
        raise PosKernelsError(f"q and k must be (S, d) and (T, d) with d = 2 len(theta) = {2 * th.size}; got "
                              f"{q.shape} and {k.shape}")  # fmt: skip

    def unturned_mean(x, pos):
        z = x[:, 0::2] + 1j * x[:, 1::2]  # (N, P)
        return (z * np.exp(-1j * np.outer(np.asarray(pos, dtype=float), th))).mean(0)

    return np.conj(unturned_mean(q, q_pos)) * unturned_mean(k, k_pos)


def polynomial_rebound(h: ArrayLike, theta: ArrayLike, training_length: int, horizon: int) -> dict:
    """Where the kernel ``s(r) = Re sum_p h_p e^{-i r theta_p}`` would rebound past the training length ``L``.

    The article's rebound: some offset past the window outscores the window's edge, ``max_{L <= r <= horizon} s(r)
    - s(L - 1) > 0`` (:func:`poskernels.experiments.rebound.rebound_height`; a climb below ``1e-9 sum_p |h_p|``
    is rounding and not counted).  For one plane of frequency ``theta`` with ``L < pi / theta`` the score climbs back
    over ``s(L - 1)`` at the first integer past ``2 pi / theta - (L - 1)`` and peaks at the full turn ``2 pi /
    theta``; a head whose planes all turn by less than ``pi`` within ``horizon`` does not rebound.

    Parameters
    ----------
    h : array_like of complex, shape (P,)
        The plane weights (:func:`head_polynomial`).
    theta : array_like, shape (P,)
        The planes' frequencies.
    training_length : int
        ``L``, the window's length.
    horizon : int
        Largest offset read, ``>= L``.

    Returns
    -------
    dict
        ``rebounds`` (bool), ``first`` (the first offset ``r >= L`` with ``s(r) > s(L - 1)``, or None), ``peak``
        (the offset of the largest ``s`` in ``L..horizon``), ``height`` (``max s - s(L - 1)``), ``fall``
        (``s(0) - s(L - 1)``, the scale the height is read on).

    Raises
    ------
    PosKernelsError
        If ``h`` is not finite, ``h`` and ``theta`` are not two vectors of one length, or ``horizon < L``.

    Examples
    --------
    >>> out = polynomial_rebound([1.0], [2 * np.pi / 100], 30, 120)  # one plane, a full turn at r = 100
    >>> out["rebounds"], out["first"], out["peak"]
    (True, 72, 100)
    >>> polynomial_rebound([1.0], [2 * np.pi / 1000], 30, 120)["rebounds"]  # it turns far past the horizon
    False
    """
    h = np.asarray(h, dtype=complex)
    th = check_array("theta", theta)
    if not np.isfinite(h).all():
        raise PosKernelsError("h must be finite")
    L, R = int(training_length), int(horizon)
    if h.shape != th.shape or h.ndim != 1:
        raise PosKernelsError(f"h and theta must be two vectors of one length; got {h.shape} and {th.shape}")
    if not 1 <= L <= R:
        raise PosKernelsError(f"the horizon must reach past the training length; got L = {L}, horizon = {R}")

    def score(r):
        return np.real(np.exp(-1j * np.outer(r, th)) @ h)

    top, edge = score(np.array([0.0, L - 1.0])).tolist()
    tol = 1e-9 * float(np.abs(h).sum())
    first, peak, best = None, L, -np.inf
    for start in range(L, R + 1, 4096):  # chunks of offsets: memory stays flat in the horizon
        r = np.arange(start, min(start + 4096, R + 1), dtype=float)
        s = score(r)
        if s.max() > best:
            best, peak = float(s.max()), int(r[np.argmax(s)])
        over = np.flatnonzero(s > edge + tol)
        if first is None and over.size:
            first = int(r[over[0]])
    return {"rebounds": first is not None, "first": first, "peak": peak, "height": best - edge,
            "fall": float(top - edge)}  # fmt: skip
