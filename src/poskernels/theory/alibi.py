"""Relative position in the score: Definition 3 (Shaw, T5) and Theorem 3 (ALiBi is a product kernel).

A causal head scores the query at position ``t`` against keys ``j <= t``; the offset is ``r = t - j``.
Shaw et al. add a learned vector ``a_min(r, K)`` to the key, T5 adds a learned scalar per bucket of
``r``, and ALiBi subtracts ``s r``.  Theorem 3 reads ALiBi's weights as a Nadaraya-Watson smoother
whose kernel is a content kernel times ``e^{-s r}``, and bounds the weight past any offset ``D``.

Content scores in this module are indexed **by offset**: ``c[r]`` is the content score
``q_t k_{t-r}^T / tau`` of the key ``r`` positions back, for ``r = 0..t``, so ``alpha[r]`` is the
article's ``alpha_r``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import t5_bucket
from ..errors import (
    PosKernelsError,
    check_array,
    check_bool,
    check_budget,
    check_finite_result,
    check_int,
    check_positive_int,
    check_positive_real,
    check_real,
)

__all__ = [
    "alibi_horizon",
    "alibi_offset_ratio_bound",
    "alibi_tail_bound",
    "alibi_tail_weight",
    "alibi_time_kernel",
    "alibi_weights",
    "alibi_worst_tail_weight",
    "shaw_scores",
    "t5_bias",
    "t5_bucket_ranges",
    "t5_last_bucket_first_offset",
    "t5_log_reach",
]


def _check_scores(c) -> np.ndarray:
    c = check_array("c", c)
    if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)):
        raise PosKernelsError(f"content scores c must be a non-empty finite 1-d array (c[r], r = 0..t); got {c!r}")
    return c


def _check_nonneg_real(name: str, value) -> float:
    return check_real(name, value, 0)


# --------------------------------------------------------------------------------------------------
# Definition 3: T5 buckets and Shaw's clipped relative keys
# --------------------------------------------------------------------------------------------------


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
    buckets = t5_bucket(-r, num_buckets, max_distance, bidirectional)  # (max_distance + 1,)
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
    buckets = t5_bucket(-r, num_buckets, max_distance)  # (max_distance + 1,)
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


# --------------------------------------------------------------------------------------------------
# Theorem 3: ALiBi is a product kernel
# --------------------------------------------------------------------------------------------------


def alibi_weights(c: ArrayLike, s: float) -> np.ndarray:
    """Theorem 3 (i): one causal ALiBi query's attention weights, the softmax of ``c_r - s r``.

    Parameters
    ----------
    c : array_like, shape (t + 1,)
        Content scores by offset: ``c[r] = q_t k_{t-r}^T / tau``.
    s : float
        ALiBi slope, > 0.

    Returns
    -------
    ndarray, shape (t + 1,)
        ``alpha[r]``, the weight on the key ``r`` positions back; sums to 1.

    Notes
    -----
    ``alpha_r = e^{c_r} e^{-s r} / sum_r' e^{c_r'} e^{-s r'}``: a Nadaraya-Watson smoother whose
    kernel is the content kernel ``e^{c}`` times the time kernel ``e^{-s r}``.

    Examples
    --------
    >>> alibi_weights([0.0, 0.0, 0.0], np.log(2)).round(4).tolist()  # 1 : 1/2 : 1/4
    [0.5714, 0.2857, 0.1429]
    """
    c = _check_scores(c)
    s = check_positive_real("the ALiBi slope s", s)
    with np.errstate(over="ignore"):  # a slope so large that s r overflows gives those keys weight 0, as it should
        logits = c - s * np.arange(c.size)  # (t + 1,)
    with np.errstate(over="ignore"):  # a logit below the largest by more than 1.8e308: -inf, weight 0, as it should
        w = np.exp(logits - logits.max())  # (t + 1,)
    return w / w.sum()


def alibi_time_kernel(positions: ArrayLike, s: float) -> np.ndarray:
    """Theorem 3 (i): the bidirectional time kernel ``e^{-s |t - j|}`` (Matern, smoothness 1/2).

    Parameters
    ----------
    positions : array_like, shape (n,)
        Positions (reals allowed).
    s : float
        Slope, > 0.

    Returns
    -------
    ndarray, shape (n, n)
        Its Gram matrix, positive semi-definite.

    Examples
    --------
    >>> bool(np.linalg.eigvalsh(alibi_time_kernel(np.arange(50), 0.5)).min() > 0)
    True
    """
    s = check_positive_real("the ALiBi slope s", s)
    x = check_array("positions", positions)
    if x.ndim != 1:
        raise PosKernelsError(f"positions must be a finite 1-d array; got {x!r}")
    check_budget(f"the ({x.size}, {x.size}) time kernel", x.size * x.size)
    with np.errstate(over="ignore"):  # s |i - j| past float64: the kernel is e^{-inf} = 0 there, as it should be
        return np.exp(-s * np.abs(x[:, None] - x[None, :]))  # (n, n)


def alibi_tail_weight(alpha: ArrayLike, D: float) -> float:
    """Total weight on offsets ``r >= D`` (the left side of Theorem 3 (ii)).

    Parameters
    ----------
    alpha : array_like, shape (n,)
        Attention weights by causal offset ``r = 0..n-1`` (:func:`alibi_weights`).
    D : float
        The offset the tail starts at, at least 0.

    Returns
    -------
    float
        ``sum_{r >= D} alpha_r``, to set against :func:`alibi_tail_bound`.

    Examples
    --------
    >>> alibi_tail_weight([0.5, 0.25, 0.25], 1)
    0.5
    """
    alpha = check_array("alpha", alpha, ndim=1)
    D = _check_nonneg_real("the offset D", D)
    with np.errstate(over="ignore", invalid="ignore"):  # weights summing past float64's largest: refused below
        tail = float(alpha[int(math.ceil(D)) :].sum())
    return check_finite_result("the tail weight", tail, "weights must sum below 1.8e308", alpha=alpha)


def alibi_tail_bound(W: float, s: float, D: float) -> float:
    """Theorem 3 (ii): at every length, the weight on offsets ``r >= D`` is at most ``e^W e^{-sD}/(1 - e^{-s})``.

    Parameters
    ----------
    W : float
        Width of the interval holding the content scores, >= 0.
    s : float
        ALiBi slope, > 0.
    D : float
        Offset, >= 0.

    Returns
    -------
    float
        The bound (``inf`` where ``e^{W - sD}`` passes float64; a weight is at most 1 anyway).

    Raises
    ------
    PosKernelsError
        If `W` or `D` is negative or `s` is not positive.

    Examples
    --------
    >>> [float(f"{alibi_tail_bound(20, 0.5, D):.3g}") for D in (40, 60, 80)]
    [2.54, 0.000115, 5.24e-09]
    """
    W = _check_nonneg_real("the content width W", W)
    s = check_positive_real("the ALiBi slope s", s)
    D = _check_nonneg_real("the offset D", D)
    exponent = W - s * D
    if exponent > 700:  # e^W e^(-sD) past float64: the bound is vacuous (a weight is at most 1)
        return math.inf
    return math.exp(exponent) / -math.expm1(-s)


def alibi_offset_ratio_bound(W: float, s: float, r: ArrayLike) -> np.ndarray:
    """Theorem 3 (iii): ``alpha_r / alpha_0 <= e^{W - s r}`` for every offset ``r``.

    Parameters
    ----------
    W : float
        Width of the interval holding the content scores, >= 0.
    s : float
        ALiBi slope, > 0.
    r : array_like
        Causal offsets, >= 0.

    Returns
    -------
    ndarray
        The bound on the weight at offset ``r`` over the weight at offset 0, of `r`'s shape.

    Raises
    ------
    PosKernelsError
        If `W` or an offset is negative, or `s` is not positive.

    Examples
    --------
    >>> alibi_offset_ratio_bound(20, 0.5, [0, 40, 60]).round(4).tolist()
    [485165195.4098, 1.0, 0.0]
    """
    W = _check_nonneg_real("the content width W", W)
    s = check_positive_real("the ALiBi slope s", s)
    r = check_array("r", r)
    if np.any(r < 0):
        raise PosKernelsError(f"causal offsets r must be >= 0; got min {r.min().item()!r}")
    with np.errstate(over="ignore"):  # past float64 the ratio bound is +inf, vacuous and true
        return np.exp(W - s * r)


def alibi_horizon(W: float, s: float) -> float:
    """Theorem 3 (iii): the horizon ``W / s``; a key farther back gets less weight than the query's own position.

    Parameters
    ----------
    W : float
        The spread of the content scores (largest minus smallest), at least 0.
    s : float
        The head's slope, positive.

    Returns
    -------
    float
        The offset past which ALiBi's penalty outweighs any content score.

    Examples
    --------
    >>> alibi_horizon(20, 0.5)
    40.0
    """
    W = _check_nonneg_real("the content width W", W)
    s = check_positive_real("the ALiBi slope s", s)
    return W / s


def alibi_worst_tail_weight(W: float, s: float, D: int, n: int) -> float:
    """The largest weight past ``D`` any content can buy at length ``n`` (how tight Theorem 3 (ii) is).

    The tail fraction grows with ``c_r`` for ``r >= D`` and falls with ``c_r`` for ``r < D``, so the
    worst content within width ``W`` is ``0`` on offsets below ``D`` and ``W`` from ``D`` on.

    Parameters
    ----------
    W : float
        Width of the interval holding the content scores, >= 0.
    s : float
        ALiBi slope, > 0.
    D : int
        Offset, >= 0.
    n : int
        The sequence length: offsets ``0..n-1``.

    Returns
    -------
    float
        The weight ALiBi puts on offsets ``r >= D`` under that worst content.

    Raises
    ------
    PosKernelsError
        If `W` or `D` is negative, `s` not positive, `n` not a positive integer, or `n` past the work budget.

    Examples
    --------
    >>> round(alibi_worst_tail_weight(20, 0.5, 40, 8192), 3)  # the bound, 2.54, is vacuous here
    0.5
    """
    W = _check_nonneg_real("the content width W", W)
    n = check_positive_int("n", n)
    D = int(math.ceil(_check_nonneg_real("the offset D", D)))
    check_budget(f"the worst content at length n = {n}", n)
    c = np.where(np.arange(n) >= D, W, 0.0)  # (n,) worst content by offset
    return alibi_tail_weight(alibi_weights(c, s), D)
