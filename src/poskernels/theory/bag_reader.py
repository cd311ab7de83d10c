"""Proposition 1 (ii): one causal layer sees its prefix as a multiset, and the exact best bag reader of the cue task.

A single head without positions reads the cue task from a bag of tokens; the best bag reader answers the symbol
that occurs most often among the marked tokens, so its accuracy is an expected maximum count of a multinomial,
computed here exactly, by counting, with no sampling (:func:`expected_max_count` in float64 by binary powering over
the symbols, :func:`expected_max_count_exact` in integers).

The cue task: ``n - 1`` content tokens, symbols uniform over ``n_symbols``, each marked with
probability ``p_mark``; if none is marked, one uniformly random content token is marked; a query token ends
the sequence; the target is the symbol on the most recent marked token.

Each public function checks its arguments once; the bag reader computes through the unchecked cores
(``_expected_max_count``), not through the checking entry points.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from ..errors import PosKernelsError, check_int, check_positive_int

__all__ = [
    "bag_reader_accuracy",
    "bag_reader_accuracy_exact",
    "expected_max_count",
    "expected_max_count_exact",
]


# --------------------------------------------------------------------------- E[max count] of a multinomial


def _check_task(n, n_symbols, p_mark, exact: bool) -> tuple[int, int]:
    n = check_positive_int("n (sequence length)", n)
    if n < 2:
        raise PosKernelsError(f"n must be >= 2 (at least one content token before the query); got {n}")
    _check_draws(n - 1)  # n - 1 content tokens: the draws of E[max count]
    n_symbols = _check_symbols(n_symbols)
    ok_type = isinstance(p_mark, Fraction | int) if exact else isinstance(p_mark, numbers.Real)
    if isinstance(p_mark, bool) or not ok_type or not 0 <= p_mark <= 1:
        kind = "a Fraction or int" if exact else "a number"
        raise PosKernelsError(f"p_mark must be {kind} in [0, 1]; got {p_mark!r}")
    if exact and Fraction(p_mark).denominator > 2**32:  # exact powers of p grow with its denominator's digits
        raise PosKernelsError(f"p_mark's denominator must be at most 2**32 for exact arithmetic; got {p_mark!r}")
    return n, n_symbols


#: Largest number of draws :func:`expected_max_count` takes: its cost grows as ``K**3`` (K = 512: about 0.3 s).
MAX_DRAWS = 512

#: Budget of :func:`expected_max_count_exact`, ``K**3 * n_symbols`` (K = 63 at 8 symbols: about 0.1 s).
EXACT_BUDGET = 64**3 * 8


def _check_draws(K) -> int:
    check_int("K (number of draws)", K, 0)
    if K > MAX_DRAWS:
        raise PosKernelsError(
            f"K (number of draws) must be at most {MAX_DRAWS} (the cost grows as K**3; a bag reader at length n "
            f"takes K = n - 1); got {K!r}"
        )
    return int(K)


def binomial_pmf(i, k, q: float) -> np.ndarray:
    """``Binom(k, q)(i) = C(k, i) q^i (1 - q)^(k - i)``, zero outside ``0 <= i <= k``, broadcasting ``i`` and ``k``.

    Through ``log C(k, i) = lgamma(k + 1) - lgamma(i + 1) - lgamma(k - i + 1)`` (``scipy.special``): the same
    values as ``scipy.stats.binom.pmf`` to ~1e-13 relative for ``k`` in the hundreds, without importing
    ``scipy.stats`` (about a second at the start of every command).

    Parameters
    ----------
    i, k : array_like of int
        Successes and trials, broadcast against each other.
    q : float
        The success probability, in ``[0, 1]``.

    Returns
    -------
    ndarray
        The probabilities, of the broadcast shape of `i` and `k`.  The arguments are not checked (a `q` outside
        ``[0, 1]`` gives NaN): the callers pass counts they computed.

    Examples
    --------
    >>> binomial_pmf(np.arange(4), 3, 0.5).tolist()
    [0.125, 0.375, 0.375, 0.125]
    >>> float(binomial_pmf(2, 1, 0.3)), float(binomial_pmf(0, 5, 0.0)), float(binomial_pmf(5, 5, 1.0))
    (0.0, 1.0, 1.0)
    """
    from scipy.special import gammaln, xlog1py, xlogy

    i, k = np.broadcast_arrays(np.asarray(i, dtype=float), np.asarray(k, dtype=float))
    inside = (i >= 0) & (i <= k)
    j, kk = np.where(inside, i, 0.0), np.where(inside, k, 0.0)
    log = gammaln(kk + 1) - gammaln(j + 1) - gammaln(kk - j + 1) + xlogy(j, q) + xlog1py(kk - j, -q)
    return np.where(inside, np.exp(log), 0.0)


def _check_symbols(n_symbols) -> int:
    return check_int("n_symbols", n_symbols, 1, 2**20, "the merge count grows as log2 of it")


def expected_max_count(K: int, n_symbols: int = 8) -> np.ndarray:
    """``E[max_s c_s]`` for ``(c_s)`` multinomial with ``k`` draws over ``n_symbols`` equally likely symbols.

    Parameters
    ----------
    K : int
        Largest number of draws, >= 0.
    n_symbols : int

    Returns
    -------
    ndarray, shape (K + 1,)
        Entry ``k`` is ``E[max count | k draws]``.

    Notes
    -----
    ``E[max] = sum_{m >= 0} (1 - F(m, k))`` with ``F(m, k) = P(every count <= m)``.  ``F`` for ``s + t``
    symbols comes from ``s`` and ``t`` symbols by splitting the ``k`` draws binomially:
    ``F_{s+t}(m, k) = sum_i Binom(k, s/(s+t))(i) F_s(m, i) F_t(m, k - i)``.  Symbols are merged by
    repeated doubling, so ``log2(n_symbols)`` merges of positive terms, each exact up to rounding.

    Examples
    --------
    >>> expected_max_count(3, 2).round(6).tolist()
    [0.0, 1.0, 1.5, 2.25]
    """
    return _expected_max_count(_check_draws(K), _check_symbols(n_symbols))


def _expected_max_count(K: int, n_symbols: int) -> np.ndarray:
    """:func:`expected_max_count` of a checked ``K`` and ``n_symbols``."""
    m = np.arange(K + 1)  # (K+1,)

    def merge(Fs, s, Ft, t):
        q = s / (s + t)
        r = np.arange(K + 1)
        weights = binomial_pmf(r[None, :], r[:, None], q)  # (K+1, K+1): [k, i] = Binom(k, q)(i)
        out = np.empty_like(Fs)  # (m, k)
        for k in range(K + 1):
            out[:, k] = (Fs[:, : k + 1] * Ft[:, k::-1]) @ weights[k, : k + 1]
        return out

    one = (m[None, :] <= m[:, None]).astype(float)  # (m, k): F_1(m, k) = [k <= m]
    acc, acc_s, power, power_s, left = None, 0, one, 1, n_symbols
    while left:  # binary powering over the number of symbols
        if left & 1:
            acc, acc_s = (power, power_s) if acc is None else (merge(acc, acc_s, power, power_s), acc_s + power_s)
        left >>= 1
        if left:
            power, power_s = merge(power, power_s, power, power_s), 2 * power_s
    assert acc is not None  # n_symbols >= 1: the loop ran
    return (1.0 - acc).sum(axis=0)  # (K+1,): sum over m of P(max > m)


def expected_max_count_exact(K: int, n_symbols: int = 8) -> list[Fraction]:
    """Exact rational ``E[max_s c_s]`` for ``k = 0..K`` draws over ``n_symbols`` symbols, by integer counting.

    ``N_s(m, k)``, the number of length-``k`` words over ``s`` symbols with every count ``<= m``, satisfies
    ``N_{s+1}(m, k) = sum_i C(k, i) N_s(m, k - i)`` over ``i <= m``; ``F(m, k) = N(m, k)/n_symbols^k``.

    Parameters
    ----------
    K : int
        The most draws, at least 0.
    n_symbols : int, optional
        The alphabet's size; default 8.

    Returns
    -------
    list of fractions.Fraction
        ``E[max_s c_s]`` at ``k = 0, 1, ..., K`` draws.

    Raises
    ------
    PosKernelsError
        If `K` is negative or `n_symbols` not a positive integer, or the count passes the work budget.

    Examples
    --------
    >>> [str(x) for x in expected_max_count_exact(3, 2)]
    ['0', '1', '3/2', '9/4']
    """
    return _expected_max_count_exact(_check_draws(K), _check_symbols(n_symbols))


def _expected_max_count_exact(K: int, S: int) -> list[Fraction]:
    """:func:`expected_max_count_exact` of a checked ``K`` and ``S`` symbols: its work budget, then the counts."""
    if K**3 * S > EXACT_BUDGET:
        raise PosKernelsError(
            f"K = {K} draws over {S} symbols is past the exact budget K**3 * n_symbols <= {EXACT_BUDGET} "
            "(about a second of integer arithmetic); use expected_max_count"
        )
    out = [Fraction(0)] * (K + 1)
    for m in range(K):
        N = [1 if r <= m else 0 for r in range(K + 1)]  # one symbol: N_1(m, r) = [r <= m]
        for _ in range(S - 1):
            N = [sum(math.comb(r, i) * N[r - i] for i in range(min(m, r) + 1)) for r in range(K + 1)]
        for k in range(m + 1, K + 1):  # P(max > m) = 1 - N(m, k)/S^k, zero for k <= m
            out[k] += 1 - Fraction(N[k], S**k)
    return out


# --------------------------------------------------------------------------- Proposition 1 (ii): the bag reader


def bag_reader_accuracy(n: int, n_symbols: int = 8, p_mark: float = 0.1) -> float:
    """Exact accuracy of the best multiset ("bag") reader on the cue task at length ``n``, by counting.

    Parameters
    ----------
    n : int
        Sequence length, >= 2 (``n - 1`` content tokens and the query).
    n_symbols : int
        Alphabet size of the content symbols.
    p_mark : float
        Probability that a content token is marked.

    Returns
    -------
    float
        ``sum_k P(M = k) E[max_s c_s | k] / k`` over the number ``M`` of marked tokens.

    Notes
    -----
    Proposition 1 (ii): a head without positions sees a bag.  Given the bag, every ordering is equally
    likely, so the most recent marked token is uniform among the ``M`` marked ones, and the best guess is
    the most frequent marked symbol, right with probability ``max_s c_s / M``.  ``M`` is
    Binomial(n - 1, p_mark), except that ``M = 0`` becomes ``M = 1`` (one forced mark), read with certainty.

    Examples
    --------
    >>> round(bag_reader_accuracy(32), 3), round(bag_reader_accuracy(256), 3)
    (0.547, 0.234)
    """
    n, n_symbols = _check_task(n, n_symbols, p_mark, exact=False)
    L = n - 1  # content tokens
    k = np.arange(L + 1)  # (L+1,)
    pk = binomial_pmf(k, L, float(p_mark))  # (L+1,): P(M = k) before the forced mark
    emax = _expected_max_count(L, n_symbols)  # (L+1,)
    return float(pk[0] + (pk[1:] * emax[1:] / k[1:]).sum())


def bag_reader_accuracy_exact(n: int, n_symbols: int = 8, p_mark: Fraction | float = Fraction(1, 10)) -> Fraction:
    """The same accuracy as :func:`bag_reader_accuracy`, as an exact rational (for small ``n``; Proposition 1 (ii)).

    Parameters
    ----------
    n : int
        The sequence length (``n - 1`` content tokens and the query).
    n_symbols : int, optional
        The alphabet's size; default 8.
    p_mark : fractions.Fraction or int, optional
        Each content token's chance of being marked, exact; default 1/10.

    Returns
    -------
    fractions.Fraction
        The best bag reader's accuracy on the cue task.

    Raises
    ------
    PosKernelsError
        If `n` is below 2, `n_symbols` not a positive integer, or `p_mark` is not a fraction or int in
        ``[0, 1]``.

    Examples
    --------
    >>> bag_reader_accuracy_exact(3, 2, Fraction(1, 2))
    Fraction(15, 16)
    """
    n, n_symbols = _check_task(n, n_symbols, p_mark, exact=True)
    L, p = n - 1, Fraction(p_mark)
    emax = _expected_max_count_exact(L, n_symbols)
    pk = [math.comb(L, k) * p**k * (1 - p) ** (L - k) for k in range(L + 1)]
    return pk[0] + sum(pk[k] * emax[k] / k for k in range(1, L + 1))
