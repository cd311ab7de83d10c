"""Relative position in the score, Theorem 3: ALiBi is a product kernel.

A causal head scores the query at position ``t`` against keys ``j <= t``; the offset is ``r = t - j``, and ALiBi
subtracts ``s r``.  Theorem 3 reads ALiBi's weights as a Nadaraya-Watson smoother whose kernel is a content kernel
times ``e^{-s r}``, and bounds the weight past any offset ``D``.  Definition 3's other relative schemes (Shaw's
keys, T5's buckets) are :mod:`poskernels.theory.relative_bias` (their names stay in this module's ``__all__``).

Content scores in this module are indexed **by offset**: ``c[r]`` is the content score
``q_t k_{t-r}^T / tau`` of the key ``r`` positions back, for ``r = 0..t``, so ``alpha[r]`` is the
article's ``alpha_r``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..errors import (
    PosKernelsError,
    check_array,
    check_budget,
    check_finite_result,
    check_positive_int,
    check_positive_real,
    check_real,
)
from .relative_bias import (  # Definition 3, in __all__ here as before the split
    shaw_scores,
    t5_bias,
    t5_bucket_ranges,
    t5_last_bucket_first_offset,
    t5_log_reach,
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
    return _alibi_weights(_check_scores(c), check_positive_real("the ALiBi slope s", s))


def _alibi_weights(c: np.ndarray, s: float) -> np.ndarray:
    """:func:`alibi_weights` of checked scores ``c`` (t + 1,) and slope ``s``."""
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
    return _alibi_tail_weight(check_array("alpha", alpha, ndim=1), _check_nonneg_real("the offset D", D))


def _alibi_tail_weight(alpha: np.ndarray, D: float) -> float:
    """:func:`alibi_tail_weight` of checked weights ``alpha`` (t + 1,) and offset ``D >= 0``."""
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
    s = check_positive_real("the ALiBi slope s", s)
    c = np.where(np.arange(n) >= D, W, 0.0)  # (n,) worst content by offset
    return _alibi_tail_weight(_alibi_weights(c, s), D)
