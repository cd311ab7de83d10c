"""Relative position in the score, Definition 3: Shaw's clipped relative keys and T5's buckets.

A causal head scores the query at position ``t`` against keys ``j <= t``; the offset is ``r = t - j``.
Shaw et al. add a learned vector ``a_min(r, K)`` to the key, and T5 adds a learned scalar per bucket of ``r``:
exact buckets for the small offsets, logarithmic ones up to ``max_distance``, and one last bucket for every offset
past it.  ALiBi, the third relative scheme of the article (Theorem 3), is :mod:`poskernels.theory.alibi`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import t5_bucket
from ..encodings.relative import t5_bucket_core
from ..errors import (
    PosKernelsError,
    check_array,
    check_bool,
    check_budget,
    check_int,
    check_positive_int,
    check_positive_real,
)

__all__ = [
    "shaw_scores",
    "t5_bias",
    "t5_bucket_ranges",
    "t5_last_bucket_first_offset",
    "t5_log_reach",
]


def _t5_causal_share(num_buckets: int, max_distance: int, bidirectional: bool) -> tuple[int, int]:
    """(buckets on the causal side, exact buckets) as T5's bucket function splits them."""
    num_buckets = check_int("num_buckets", num_buckets, 1, 2**20, "one learned scalar per bucket")
    check_positive_int("max_distance", max_distance)
    check_bool("bidirectional", bidirectional)
    check_budget(f"the T5 offsets 0..max_distance = {max_distance}", max_distance + 1)
    side = num_buckets // 2 if bidirectional else num_buckets
    if side < 2:
        raise PosKernelsError(f"num_buckets must be >= {4 if bidirectional else 2}; got {num_buckets}")
    max_exact = side // 2
    if max_distance <= max_exact:
        raise PosKernelsError(f"max_distance must exceed the exact range {max_exact}; got {max_distance}")
    return side, max_exact


def t5_last_bucket_first_offset(num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = False) -> int:
    """Definition 3 (T5): the first causal offset ``r`` that lands in the last bucket.

    Every offset from this one on shares one learned scalar, so they are indistinguishable.
    Found by scanning :func:`poskernels.encodings.t5_bucket` over ``r = 0..max_distance``
    (``r = max_distance`` always lands in the last bucket).

    Parameters
    ----------
    num_buckets, max_distance, bidirectional
        As in :func:`poskernels.encodings.t5_bucket`; the article's T5 uses 32, 128, causal.

    Returns
    -------
    int

    Examples
    --------
    >>> t5_last_bucket_first_offset()
    113
    """
    side, _ = _t5_causal_share(num_buckets, max_distance, bidirectional)
    r = np.arange(max_distance + 1)  # (max_distance + 1,) causal offsets
    buckets = t5_bucket_core(-r, int(num_buckets), int(max_distance), bool(bidirectional))  # (max_distance + 1,)
    return int(np.flatnonzero(buckets == side - 1)[0])


def t5_log_reach(num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = False) -> float:
    """Definition 3 (T5): the real offset at which the logarithmic map reaches the last bucket.

    T5's map is ``E + N ln(n/E) / ln(max_distance/E)`` with ``E`` exact buckets and ``N`` log-spaced
    ones; it reaches the last bucket ``E + N - 1`` at ``n = E (max_distance/E)**((N-1)/N)``,
    not at ``max_distance``.

    Parameters
    ----------
    num_buckets : int, optional
        T5's bucket count; default 32.
    max_distance : int, optional
        T5's ``max_distance``; default 128.
    bidirectional : bool, optional
        Whether the buckets are split between the two directions (half each); default False (causal).

    Returns
    -------
    float
        The offset ``n`` at which the map first gives the last bucket.

    Raises
    ------
    PosKernelsError
        If the bucket count or the distance is out of range.

    Examples
    --------
    >>> round(t5_log_reach(), 1)  # 16 * 8**(15/16)
    112.4
    """
    side, max_exact = _t5_causal_share(num_buckets, max_distance, bidirectional)
    n_log = side - max_exact  # N: log-spaced buckets
    # solve  E + N ln(n/E)/ln(M/E) = E + N - 1  for n
    return max_exact * (max_distance / max_exact) ** ((n_log - 1) / n_log)


def t5_bucket_ranges(num_buckets: int = 32, max_distance: int = 128) -> list[tuple[int, int, int | None]]:
    """Definition 3 (T5): which causal offsets share each bucket, as ``(bucket, first r, last r)``.

    The last bucket is open-ended (``last r`` is ``None``); a bucket no offset lands in is left out.

    Parameters
    ----------
    num_buckets : int, optional
        T5's bucket count; default 32.
    max_distance : int, optional
        T5's ``max_distance``; default 128.

    Returns
    -------
    list of tuple
        ``(bucket, first r, last r)`` in bucket order.

    Raises
    ------
    PosKernelsError
        If the bucket count or the distance is out of range.

    Examples
    --------
    >>> t5_bucket_ranges()[15:18]
    [(15, 15, 15), (16, 16, 18), (17, 19, 20)]
    >>> t5_bucket_ranges()[-1]
    (31, 113, None)
    """
    side, _ = _t5_causal_share(num_buckets, max_distance, False)
    r = np.arange(max_distance + 1)  # (max_distance + 1,)
    buckets = t5_bucket_core(-r, int(num_buckets), int(max_distance), False)  # (max_distance + 1,)
    # the bucket never decreases with the offset: each bucket is one run of offsets, found in one pass
    present, first = np.unique(buckets, return_index=True)  # (buckets with an offset,) each
    last = np.append(first[1:] - 1, r[-1])  # the run ends where the next one starts
    return [(int(b), int(r[f]), None if b == side - 1 else int(r[e])) for b, f, e in zip(present, first, last)]


def t5_bias(n: int, beta: ArrayLike, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Definition 3 (T5): the causal score bias ``beta[bucket(t - j)]``, ``-inf`` above the diagonal.

    Parameters
    ----------
    n : int
        Sequence length.
    beta : array_like, shape (num_buckets,)
        One learned scalar per bucket.

    Returns
    -------
    ndarray, shape (n, n)
        Row ``t`` is the query, column ``j`` the key.

    Examples
    --------
    >>> t5_bias(3, np.arange(32.0)).tolist()
    [[0.0, -inf, -inf], [1.0, 0.0, -inf], [2.0, 1.0, 0.0]]
    """
    n = check_positive_int("n", n)
    num_buckets = check_positive_int("num_buckets", num_buckets)
    check_budget(f"the ({n}, {n}) T5 bias", n * n)
    beta = check_array("beta", beta)
    if beta.shape != (num_buckets,):
        raise PosKernelsError(f"beta must have shape ({num_buckets},), one scalar per bucket; got {beta.shape}")
    t = np.arange(n)
    rel = t[None, :] - t[:, None]  # (n, n) key - query, T5's sign
    bias = beta[t5_bucket(rel, num_buckets, max_distance)]  # (n, n)
    return np.where(rel <= 0, bias, -np.inf)


def shaw_scores(q: ArrayLike, k: ArrayLike, a: ArrayLike, tau: float = 1.0) -> np.ndarray:
    """Definition 3 (Shaw et al. 2018): causal scores ``q_t (k_j + a_min(t-j, K))^T / tau``.

    Parameters
    ----------
    q, k : array_like, shape (n, d)
        Queries and keys.
    a : array_like, shape (K + 1, d)
        Relative key vectors for clipped offsets ``0..K``.
    tau : float
        Temperature.

    Returns
    -------
    ndarray, shape (n, n)
        ``-inf`` above the diagonal.

    Examples
    --------
    >>> q = k = np.eye(3)
    >>> shaw_scores(q, k, np.ones((2, 3))).tolist()
    [[2.0, -inf, -inf], [1.0, 2.0, -inf], [1.0, 1.0, 2.0]]
    """
    q, k, a = (check_array(name, x) for name, x in (("q", q), ("k", k), ("a", a)))
    if q.ndim != 2 or q.shape != k.shape or a.ndim != 2 or a.shape[1] != q.shape[1] or a.shape[0] < 2:
        raise PosKernelsError(
            f"need q, k of shape (n, d) and a of shape (K + 1, d) with K >= 1; got {q.shape}, {k.shape}, {a.shape}"
        )
    tau = check_positive_real("tau", tau)
    n, K = q.shape[0], a.shape[0] - 1
    check_budget(f"Shaw's ({n}, {n}, {q.shape[1]}) relative keys", n * n * q.shape[1])
    t = np.arange(n)
    r = t[:, None] - t[None, :]  # (n, n) causal offset
    rel = np.einsum("td,tjd->tj", q, a[np.clip(r, 0, K)])  # (n, n) q_t a_min(r,K)
    scores = (q @ k.T + rel) / tau  # (n, n)
    return np.where(r >= 0, scores, -np.inf)
