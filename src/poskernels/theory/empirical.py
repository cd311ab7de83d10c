"""The article's statements read on measured arrays: what a probe of a released model computes from its weights,
queries and keys (pure functions of arrays; :mod:`poskernels.probe` captures the arrays).

* Theorem 1 asks whether a code is a stationary kernel: :func:`toeplitz_defect` is the share of a Gram matrix's
  squared norm not explained by its average along each diagonal (0 exactly for the sinusoidal code), and
  :func:`table_spectrum` the power of a table along the position axis (which frequencies it uses, Herglotz's reading).
* Proposition 3 (iii) writes a rotary head's score as ``Re sum_p h_p e^{-i r theta_p}``: :func:`kernel_by_offset`
  is the mean logit as a function of the offset ``r = t - j``, :func:`plane_kernels` its split by plane (the planes
  sum to the whole), :func:`plane_energies` the mean norm of each plane's chunk (Barbero et al. 2024).
* :func:`first_token_share` and :func:`previous_token_share` read attention sinks (Gu et al. 2025) and
  previous-token heads from the attention weights.

Queries and keys are in this library's layout, plane ``p`` the pair ``(2p, 2p + 1)``
(:func:`poskernels.encodings.to_half_split` converts from Hugging Face's halves).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_array

__all__ = [
    "diagonal_means",
    "first_token_share",
    "kernel_by_offset",
    "plane_energies",
    "plane_kernels",
    "previous_token_share",
    "random_defects",
    "table_spectrum",
    "toeplitz_defect",
]


def _matrix(name: str, G: ArrayLike) -> np.ndarray:
    G = check_array(name, G)
    if G.ndim != 2 or 0 in G.shape:
        raise PosKernelsError(f"{name} must be a nonempty matrix; got shape {G.shape}")
    return G


def diagonal_means(G: ArrayLike) -> np.ndarray:
    """The best function of the offset in least squares: each entry replaced by its diagonal's mean.

    >>> diagonal_means([[1.0, 2.0], [4.0, 3.0]]).tolist()
    [[2.0, 2.0], [4.0, 2.0]]
    """
    G = _matrix("G", G)
    n, m = G.shape
    r = np.subtract.outer(np.arange(n), np.arange(m)) + (m - 1)  # offset t - j, shifted to be >= 0
    sums = np.bincount(r.ravel(), weights=G.ravel(), minlength=n + m - 1)
    counts = np.bincount(r.ravel(), minlength=n + m - 1)
    return (sums / counts)[r]


def toeplitz_defect(G: ArrayLike) -> float:
    """``||G - T(G)||^2 / ||G||^2``, ``T(G)`` the diagonal means: 0 for a stationary kernel (Theorem 1), 1 at most.

    >>> from poskernels.encodings import sinusoidal_code
    >>> P = sinusoidal_code(np.arange(64), 16)
    >>> toeplitz_defect(P @ P.T) < 1e-20
    True
    >>> round(toeplitz_defect([[1.0, 0.0], [0.0, -1.0]]), 12)
    1.0
    """
    G = _matrix("G", G)
    total = float((G**2).sum())
    if total == 0.0:
        raise PosKernelsError("G is zero: its Toeplitz defect is undefined")
    return float(((G - diagonal_means(G)) ** 2).sum() / total)


def random_defects(n: int, width: int, norm: float, rng: np.random.Generator, draws: int = 64,
                   table: ArrayLike | None = None, rank: int | None = None) -> np.ndarray:  # fmt: skip
    """Toeplitz defects of random matrices, ``draws`` of them: ``G G^T`` for a Gaussian ``(n, width)`` table ``G``,
    or, given ``table``, ``P W P^T`` for ``W = A B^T`` (Gaussian ``(width, rank)`` factors) of Frobenius norm ``norm``
    (a random ``W_Q W_K^T`` beside a head's).

    >>> d = random_defects(32, 8, 1.0, np.random.default_rng(0), draws=4)
    >>> d.shape, bool((d > 0.1).all())
    ((4,), True)
    """
    out = np.empty(draws)
    for i in range(draws):
        if table is None:
            G = rng.standard_normal((n, width))
            out[i] = toeplitz_defect(G @ G.T)
            continue
        W = rng.standard_normal((width, rank or width)) @ rng.standard_normal((width, rank or width)).T
        W *= norm / np.linalg.norm(W)
        out[i] = toeplitz_defect(np.asarray(table) @ W @ np.asarray(table).T)
    return out


def table_spectrum(P: ArrayLike) -> np.ndarray:
    """The share of a table's power at each frequency ``f / n`` of the position axis (columns centred), summing to 1.

    >>> s = table_spectrum(np.cos(2 * np.pi * 3 * np.arange(16) / 16)[:, None])
    >>> int(s.argmax()), round(float(s.sum()), 12)
    (3, 1.0)
    """
    P = _matrix("P", P)
    power = (np.abs(np.fft.rfft(P - P.mean(0), axis=0)) ** 2).sum(1)
    return power / power.sum()


def _offsets(query_pos: ArrayLike, key_pos: ArrayLike) -> np.ndarray:
    return np.subtract.outer(np.asarray(query_pos), np.asarray(key_pos))  # (S, T): r = t - j


def kernel_by_offset(scores: ArrayLike, query_pos: ArrayLike, key_pos: ArrayLike,
                     max_offset: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Mean score at each offset ``r = t - j`` in ``0..max_offset``, and the standard error of each mean.

    ``scores[..., s, j]`` is query ``query_pos[s]`` against key ``key_pos[j]``; pairs with ``r < 0`` or past
    ``max_offset`` are left out (causal).  Leading axes (heads) are kept.  An offset no pair reaches is NaN.

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


def plane_energies(x: ArrayLike) -> np.ndarray:
    """Mean norm of each plane's chunk ``(x_{2p}, x_{2p+1})`` over the leading axes: shape (d/2,).

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

    >>> first_token_share(np.array([[[1.0, 0.0], [0.5, 0.5]]]), [0, 1]).tolist()
    [0.5]
    """
    w, t = _weights(weights, query_pos)
    return w[..., t > 0, 0].mean(-1)


def previous_token_share(weights: ArrayLike, query_pos: ArrayLike) -> np.ndarray:
    """Mean attention weight of query ``t`` on key ``t - 1`` (keys at positions ``0..T-1``), over ``t > 0``.

    >>> previous_token_share(np.array([[[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.0]]]), [0, 1, 2]).tolist()
    [0.95]
    """
    w, t = _weights(weights, query_pos)
    s = np.flatnonzero(t > 0)
    return w[..., s, t[s] - 1].mean(-1)
