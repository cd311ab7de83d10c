"""The relative biases of Definition 3: ALiBi's linear penalty, T5's buckets, Shaw's clipped offsets.

Each acts on the score, not on the vectors: a function of the causal offset ``r = t - j`` added to the
logit of query ``t`` and key ``j``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import (
    PosKernelsError,
    check_array,
    check_bool,
    check_budget,
    check_int,
    check_length,
    check_positive_int,
    check_positive_real,
)

__all__ = ["alibi_bias", "alibi_slopes", "shaw_clip", "t5_bucket"]


def alibi_slopes(H: int) -> np.ndarray:
    """ALiBi slopes ``s_h = 2**(-8h/H)`` for heads ``h = 1..H`` (Definition 3).

    A geometric sequence from ``2**(-8/H)`` down to ``2**-8`` at every head count.  Where ``H`` is a power of two
    this is Press et al.'s slopes exactly (and BLOOM's, ``transformers``' ``_get_alibi_slopes``, which writes out
    theirs).  Where it is not, theirs differ: they take the slopes of the nearest power of two below,
    ``n = 2**floor(log2 H)``, then every other slope of ``2n`` heads for the ``H - n`` heads left, so their
    sequence is not geometric and not sorted.  At ``H = 12`` Press's are ``2**-1 .. 2**-8`` then
    ``2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5``; these are ``2**(-2/3) .. 2**-8`` (``tests/test_alibi_slopes.py``
    checks both against ``transformers``).  Load Press's slopes yourself for a checkpoint trained with them.

    Parameters
    ----------
    H : int
        Number of heads, at least 1.

    Returns
    -------
    ndarray, shape (H,)
        The slope of head ``h = 1..H``, decreasing.

    Examples
    --------
    >>> alibi_slopes(8)[:2]
    array([0.5 , 0.25])
    >>> alibi_slopes(12)[[0, 2, -1]].round(4)  # 2**(-8/12), 2**(-24/12), 2**-8: not Press et al.'s at H = 12
    array([0.63  , 0.25  , 0.0039])
    """
    H = check_positive_int("H (number of heads)", H)
    check_budget(f"alibi_slopes at H = {H}", H)
    return 2.0 ** (-8.0 * np.arange(1, H + 1) / H)  # (H,)


def alibi_bias(n: int, s: float) -> np.ndarray:
    """Causal ALiBi bias ``-s (t - j)`` for ``j <= t`` and ``-inf`` above the diagonal.

    Parameters
    ----------
    n : int
        The sequence length, at least 1.
    s : float
        The head's slope, positive (:func:`alibi_slopes`).

    Returns
    -------
    ndarray, shape (n, n)
        Row ``t`` is the query, column ``j`` the key.

    Examples
    --------
    >>> alibi_bias(3, 0.5).tolist()
    [[0.0, -inf, -inf], [-0.5, 0.0, -inf], [-1.0, -0.5, 0.0]]
    """
    n = check_positive_int("n", n)
    s = check_positive_real("the ALiBi slope s", s)
    check_budget(f"the ({n}, {n}) ALiBi bias", n * n)
    t = np.arange(n)
    r = t[:, None] - t[None, :]  # (n, n)
    with np.errstate(over="ignore"):  # s r past float64's largest: -inf, the weight e^{-inf} = 0 it stands for
        return np.where(r >= 0, -s * r, -np.inf)


def t5_bucket(
    relative_position: ArrayLike, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = False
) -> np.ndarray:
    """T5's relative-position bucket (Raffel et al. 2020, Mesh TensorFlow's definition).

    Parameters
    ----------
    relative_position : array_like of int
        ``key_position - query_position`` as T5 defines it (so a causal offset ``r = t - j``
        is ``-r``).
    num_buckets : int
        Total buckets; half of them (of the causal share) are exact.
    max_distance : int
        Distance at which the logarithmic map reaches the last bucket.
    bidirectional : bool
        If true, half of the buckets are for keys after the query.

    Returns
    -------
    ndarray of int, same shape as ``relative_position``

    Notes
    -----
    For ``n = max(-relative_position, 0)`` (causal) and ``E = num_buckets/2``: bucket ``n`` if
    ``n < E``, else ``min(E + floor(ln(n/E)/ln(max_distance/E) * (num_buckets - E)), num_buckets - 1)``.

    Examples
    --------
    >>> t5_bucket(-np.array([0, 15, 16, 112, 113, 1000]))
    array([ 0, 15, 16, 30, 31, 31])
    """
    num_buckets = check_int("num_buckets", num_buckets, 1, 2**20, "one learned scalar per bucket")
    max_distance = check_length("max_distance", max_distance)
    bidirectional = check_bool("bidirectional", bidirectional)
    if num_buckets < (4 if bidirectional else 2):
        raise PosKernelsError(f"num_buckets must be >= {4 if bidirectional else 2}; got {num_buckets}")
    rel = np.asarray(relative_position) if isinstance(relative_position, np.ndarray) else check_array(
        "relative_position", relative_position, integer=True)  # fmt: skip
    if not np.issubdtype(rel.dtype, np.integer):
        raise PosKernelsError(f"relative_position must be integers; got dtype {rel.dtype}")
    if rel.size and np.abs(rel).max() >= 2**62:
        raise PosKernelsError(f"relative_position must lie within +-2**62; got {rel.min()!r} .. {rel.max()!r}")
    return t5_bucket_core(rel, num_buckets, max_distance, bidirectional)


def t5_bucket_core(rel: np.ndarray, num_buckets: int, max_distance: int, bidirectional: bool) -> np.ndarray:
    """:func:`t5_bucket` on arguments its caller checked as :func:`t5_bucket` does: it trusts them (integers within
    +-2**62, an int count, a positive int distance, a bool).  A core shared with theory
    (:mod:`poskernels.theory.relative_bias` reads the buckets of every offset up to `max_distance`); not in
    ``__all__``.  It still refuses a `max_distance` within the exact range.

    Parameters
    ----------
    rel : ndarray of int
        Relative positions ``key - query``.
    num_buckets, max_distance, bidirectional
        As :func:`t5_bucket` takes them, checked.

    Returns
    -------
    ndarray of int64
        The bucket of each relative position.

    Examples
    --------
    >>> t5_bucket_core(-np.array([0, 15, 16, 112, 113, 1000]), 32, 128, False)
    array([ 0, 15, 16, 30, 31, 31])
    """
    n = -rel.astype(np.int64)
    ret = np.zeros_like(n)
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n < 0).astype(np.int64) * num_buckets
        n = np.abs(n)
    else:
        n = np.maximum(n, 0)
    max_exact = num_buckets // 2
    if max_distance <= max_exact:
        raise PosKernelsError(f"max_distance must exceed the exact range {max_exact}; got {max_distance}")
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (
            np.log(np.maximum(n, 1) / max_exact) / np.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return ret + np.where(is_small, n, large)


def shaw_clip(r: ArrayLike, K: int) -> np.ndarray:
    """Shaw et al.'s clipped offset ``min(r, K)`` for causal offsets ``r >= 0`` (Definition 3).

    Parameters
    ----------
    r : array_like of int
        Causal offsets ``t - j``, at least 0.
    K : int
        The clip, at least 1: every offset past ``K`` shares one learned vector.

    Returns
    -------
    ndarray of int, the shape of ``r``
        The index of each offset's learned vector.

    Examples
    --------
    >>> shaw_clip([0, 3, 9], 4)
    array([0, 3, 4])
    """
    K = check_positive_int("the Shaw clip K", K)
    r = np.asarray(r) if isinstance(r, np.ndarray) and np.issubdtype(r.dtype, np.integer) else check_array(
        "the offsets r", r, integer=True)  # fmt: skip
    if np.any(r < 0):
        raise PosKernelsError(f"causal offsets must be >= 0; got min {r.min().item()!r}")
    return np.minimum(r, min(K, 2**62))
