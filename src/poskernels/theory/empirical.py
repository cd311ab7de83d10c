"""The article's statements read on measured arrays: what a probe of a released model computes from its weights,
queries and keys (pure functions of arrays; :mod:`poskernels.census.probe` captures the arrays).

* Theorem 1 asked of a learned table (the Toeplitz defect, the table's spectrum) is
  :mod:`poskernels.theory.table_kernel` (its names stay in this module's ``__all__``).
* Proposition 3 (iii) writes a rotary head's score as ``Re sum_p h_p e^{-i r theta_p}``: :func:`kernel_by_offset`
  is the mean logit as a function of the offset ``r = t - j``, :func:`plane_kernels` its split by plane (the planes
  sum to the whole), :func:`plane_energies` the mean norm of each plane's chunk (Barbero et al. 2024).
* :func:`first_token_share` and :func:`previous_token_share` read attention sinks (Gu et al. 2025) and
  previous-token heads from the attention weights.
* A rotary head's polynomial read from its unturned queries and keys, and where it would rebound past the
  training length, is :mod:`poskernels.theory.head_polynomial` (its names stay in this module's ``__all__``).

Queries and keys are in this library's layout, plane ``p`` the pair ``(2p, 2p + 1)``
(:func:`poskernels.encodings.to_half_split` converts from Hugging Face's halves).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_array
from .head_polynomial import head_polynomial, polynomial_rebound  # in __all__ here as before the split
from .table_kernel import (  # Theorem 1 on a table, in __all__ here as before the split
    diagonal_means,
    random_defects,
    table_spectrum,
    toeplitz_defect,
)

__all__ = [
    "diagonal_means",
    "first_token_share",
    "head_polynomial",
    "kernel_by_offset",
    "plane_energies",
    "plane_kernels",
    "plane_kernels_causal",
    "polynomial_rebound",
    "previous_token_share",
    "random_defects",
    "table_spectrum",
    "toeplitz_defect",
]


def _offsets(query_pos: ArrayLike, key_pos: ArrayLike) -> np.ndarray:
    return np.subtract.outer(np.asarray(query_pos), np.asarray(key_pos))  # (S, T): r = t - j


def kernel_by_offset(scores: ArrayLike, query_pos: ArrayLike, key_pos: ArrayLike,
                     max_offset: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Mean score at each offset ``r = t - j`` in ``0..max_offset``, and the standard error of each mean.

    ``scores[..., s, j]`` is query ``query_pos[s]`` against key ``key_pos[j]``; pairs with ``r < 0`` or past
    ``max_offset`` are left out (causal).  Leading axes (heads) are kept.  An offset no pair reaches is NaN.

    Parameters
    ----------
    scores : array_like, shape (..., S, T)
        Scores of ``S`` queries against ``T`` keys.
    query_pos, key_pos : array_like of int, shapes (S,) and (T,)
        The positions of the queries and keys.
    max_offset : int
        Largest offset read.

    Returns
    -------
    mean, stderr : ndarray, shape (..., max_offset + 1)
        The mean score at each offset, and its standard error.

    Raises
    ------
    PosKernelsError
        If ``scores`` does not end with shape ``(S, T)``.

    Examples
    --------
    >>> S = np.subtract.outer(np.arange(4), np.arange(4)).astype(float)  # the score is the offset itself
    >>> kernel_by_offset(S, np.arange(4), np.arange(4), 3)[0].tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    scores = check_array("scores", scores)
    r = _offsets(query_pos, key_pos)
    if scores.shape[-2:] != r.shape:
        raise PosKernelsError(f"scores must end with shape {r.shape} (queries, keys); got {scores.shape}")
    keep = (r >= 0) & (r <= max_offset)
    idx = r[keep]
    flat = scores[..., keep].reshape(-1, idx.size)
    n = np.bincount(idx, minlength=max_offset + 1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.stack([np.bincount(idx, row, max_offset + 1) for row in flat]) / n
        dev = np.stack([np.bincount(idx, (row - m[idx]) ** 2, max_offset + 1) for row, m in zip(flat, mean)])
        err = np.sqrt(dev / np.maximum(n - 1, 1) / n)  # two passes: no cancellation
    shape = scores.shape[:-2] + (max_offset + 1,)
    mean[:, n == 0] = np.nan
    return mean.reshape(shape), err.reshape(shape)


def plane_kernels(q: ArrayLike, k: ArrayLike, query_pos: ArrayLike, key_pos: ArrayLike,
                  max_offset: int) -> np.ndarray:  # fmt: skip
    """Proposition 3 (iii) plane by plane: the mean of plane ``p``'s share of ``<q_t, k_j>`` at each offset.

    ``q`` (S, d) and ``k`` (T, d) are rotated queries and keys; the result (d/2, max_offset + 1) sums over planes to
    :func:`kernel_by_offset` of ``q k^T``.  For an unrotated ``q~, k~`` fixed across positions, plane ``p`` at
    offset ``r`` is ``Re(conj(q~_p) k~_p e^{-i r theta_p})``.

    Parameters
    ----------
    q, k : array_like, shapes (S, d) and (T, d)
        Rotated queries and keys, ``d`` even, planes as consecutive pairs.
    query_pos, key_pos : array_like of int, shapes (S,) and (T,)
        Their positions.
    max_offset : int
        Largest offset read.

    Returns
    -------
    ndarray, shape (d/2, max_offset + 1)
        Plane ``p``'s mean share of the score at each offset.

    Raises
    ------
    PosKernelsError
        If ``q`` and ``k`` are not two matrices of one even width.

    Examples
    --------
    >>> q = np.ones((3, 4)); k = np.ones((3, 4))
    >>> plane_kernels(q, k, np.arange(3), np.arange(3), 2).tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """
    q, k = check_array("q", q), check_array("k", k)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or q.shape[1] % 2:
        raise PosKernelsError(f"q and k must be (S, d) and (T, d) with one even d; got {q.shape} and {k.shape}")
    P = q.shape[1] // 2
    prod = np.einsum("spc,tpc->pst", q.reshape(len(q), P, 2), k.reshape(len(k), P, 2))  # (P, S, T)
    return kernel_by_offset(prod, query_pos, key_pos, max_offset)[0]


def plane_kernels_causal(q: ArrayLike, k: ArrayLike, query_pos: ArrayLike) -> np.ndarray:
    """:func:`plane_kernels` for keys at ``0..T-1`` read to the longest offset ``T - 1``, query by query, every
    head at once.

    The same means as ``plane_kernels(q[h], k[h], query_pos, np.arange(T), T - 1)`` for each head ``h``, without
    the ``(d/2, S, T)`` array of every plane's product: the sum at offset ``r`` over the queries, ``sum_t q_t
    k_{t - r}``, is a cross-correlation of the queries placed at their positions with the keys, read by FFT on
    ``2 T`` points (so nothing wraps) in ``O(d T log T)`` a head.  The probe reads every head so
    (``benchmarks/bench_probe.py``); the FFT rounds differently from the direct sums, so the two agree to rounding
    (``tests/test_probe_theory.py``).

    Parameters
    ----------
    q : array_like, shape (..., S, d)
        Rotated queries, ``d`` even, at the positions ``query_pos``; leading axes (heads) as ``k``'s.
    k : array_like, shape (..., T, d)
        Rotated keys at positions ``0..T-1``.
    query_pos : array_like of int, shape (S,)
        The queries' positions, each in ``[0, T)``.

    Returns
    -------
    ndarray, shape (..., d/2, T)
        Plane ``p``'s mean share of ``<q_t, k_j>`` at offset ``r = t - j``; NaN where no pair has that offset.

    Raises
    ------
    PosKernelsError
        If the shapes do not match, ``d`` is odd, or a query position is outside ``[0, T)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, t = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 6, 4)), np.array([1, 4, 5])
    >>> fast = plane_kernels_causal(q, k, t)  # (2 heads, 2 planes, 6 offsets)
    >>> fast.shape, bool(np.allclose(fast[1], plane_kernels(q[1], k[1], t, np.arange(6), 5), rtol=1e-12, atol=1e-12))
    ((2, 2, 6), True)
    """
    q, k = check_array("q", q), check_array("k", k)
    same = q.ndim >= 2 and q.ndim == k.ndim and q.shape[:-2] == k.shape[:-2] and q.shape[-1] == k.shape[-1]
    if not same or q.shape[-1] % 2:
        raise PosKernelsError(
            f"q and k must be (..., S, d) and (..., T, d) with one even d; got {q.shape} and {k.shape}"
        )
    T, P, lead = k.shape[-2], q.shape[-1] // 2, q.shape[:-2]
    t = np.asarray(query_pos)
    inside = t.size == 0 or (np.issubdtype(t.dtype, np.integer) and t.min() >= 0 and t.max() < T)
    if t.shape != (q.shape[-2],) or not np.issubdtype(t.dtype, np.integer) or not inside:
        raise PosKernelsError(f"query_pos must be {q.shape[-2]} integers in [0, {T}); got {query_pos!r}")
    placed = np.zeros(lead + (2 * T, q.shape[-1]))  # the queries at their positions, zero elsewhere and past T
    np.add.at(np.moveaxis(placed, -2, 0), t, np.moveaxis(q, -2, 0))  # a view: adds into placed
    spectrum = np.fft.rfft(placed, axis=-2) * np.conj(np.fft.rfft(k, n=2 * T, axis=-2))
    summed = np.fft.irfft(spectrum, n=2 * T, axis=-2)[..., :T, :]  # sum_t q_t k_{t - r} at r = 0..T-1 (no wrap)
    total = summed.reshape(lead + (T, P, 2)).sum(-1)  # (..., T, P)
    count = (t[:, None] >= np.arange(T)).sum(0).astype(float)  # queries that reach offset r
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.where(count[:, None] > 0, total, np.nan)
        return np.swapaxes(total / count[:, None], -1, -2)  # (..., P, T); NaN where no query reaches the offset


def plane_energies(x: ArrayLike) -> np.ndarray:
    """Mean norm of each plane's chunk ``(x_{2p}, x_{2p+1})`` over the leading axes: shape (d/2,).

    Parameters
    ----------
    x : array_like, shape (..., d)
        Queries or keys, ``d`` even.

    Returns
    -------
    ndarray, shape (d/2,)
        ``mean ||(x_{2p}, x_{2p+1})||`` for each plane ``p``.

    Raises
    ------
    PosKernelsError
        If the last axis is not of even length.

    Examples
    --------
    >>> plane_energies([[3.0, 4.0, 0.0, 1.0]]).tolist()
    [5.0, 1.0]
    """
    x = check_array("x", x)
    if x.ndim < 1 or x.shape[-1] % 2:
        raise PosKernelsError(f"x must have shape (..., d) with d even; got {x.shape}")
    planes = x.reshape(-1, x.shape[-1] // 2, 2)
    return np.sqrt((planes**2).sum(-1)).mean(0)


def _weights(weights: ArrayLike, query_pos: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    w = check_array("weights", weights)
    t = np.asarray(query_pos)
    if w.ndim < 2 or w.shape[-2] != t.size:
        raise PosKernelsError(f"weights must be (..., queries, keys) with {t.size} queries; got {w.shape}")
    return w, t


def first_token_share(weights: ArrayLike, query_pos: ArrayLike) -> np.ndarray:
    """Mean attention weight on the first key, over the queries past position 0 (an attention sink's mark).

    Parameters
    ----------
    weights : array_like, shape (..., S, T)
        Attention weights of ``S`` queries over ``T`` keys.
    query_pos : array_like of int, shape (S,)
        The queries' positions.

    Returns
    -------
    ndarray, shape (...)
        The mean weight on key 0, per leading index (head).

    Raises
    ------
    PosKernelsError
        If ``weights`` does not have one row per query.

    Examples
    --------
    >>> first_token_share(np.array([[[1.0, 0.0], [0.5, 0.5]]]), [0, 1]).tolist()
    [0.5]
    """
    w, t = _weights(weights, query_pos)
    return w[..., t > 0, 0].mean(-1)


def previous_token_share(weights: ArrayLike, query_pos: ArrayLike) -> np.ndarray:
    """Mean attention weight of query ``t`` on key ``t - 1`` (keys at positions ``0..T-1``), over ``t > 0``.

    Parameters
    ----------
    weights : array_like, shape (..., S, T)
        Attention weights of ``S`` queries over ``T`` keys.
    query_pos : array_like of int, shape (S,)
        The queries' positions.

    Returns
    -------
    ndarray, shape (...)
        The mean weight on the previous token, per leading index (head).

    Raises
    ------
    PosKernelsError
        If ``weights`` does not have one row per query.

    Examples
    --------
    >>> previous_token_share(np.array([[[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.0]]]), [0, 1, 2]).tolist()
    [0.95]
    """
    w, t = _weights(weights, query_pos)
    s = np.flatnonzero(t > 0)
    return w[..., s, t[s] - 1].mean(-1)
