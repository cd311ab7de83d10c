"""Proposition 1: the causal counter, and the exact best bag reader of the cue task.

Oracles: exact Fractions, a masked softmax written out, brute-force enumeration of every sequence, and a
Monte Carlo run of the cue task's own generator (poskernels.tasks.cue).  The article's printed figures
(0.547, 0.234) are checked once, in tests/test_page_order_clocks.py.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.errors import PosKernelsError
from poskernels.tasks.cue import MARK_PROB, N_SYMBOLS, cue_batch, token_id
from poskernels.theory.counting import (
    bag_reader_accuracy,
    bag_reader_accuracy_exact,
    causal_counter,
    causal_uniform_attention,
    expected_max_count,
    expected_max_count_exact,
    position_from_counter,
)

# --------------------------------------------------------------------------- Proposition 1 (i)


def test_counter_is_exact_in_rational_arithmetic():
    # Proposition 1 (i): o_t = e/(t+1) and t = 1/<o_t, e> - 1, exactly, for a rational unit vector e
    e = np.array([Fraction(3, 5), Fraction(4, 5)], dtype=object)
    o = causal_counter(40, e)  # (40, 2)
    for t in range(40):
        assert o[t, 0] == e[0] / (t + 1) and o[t, 1] == e[1] / (t + 1)
    t_hat = position_from_counter(o, e)
    assert all(isinstance(x, Fraction) for x in t_hat)
    assert list(t_hat) == list(range(40))


def test_uniform_attention_is_the_masked_softmax_of_equal_scores():
    # oracle: causal softmax of a constant score matrix, written out
    rng = np.random.default_rng(0)
    n = 12
    V = rng.normal(size=(n, 5))  # (n, 5)
    scores = np.full((n, n), 0.7)  # (n, n)
    scores[np.triu_indices(n, 1)] = -np.inf  # causal mask: key j <= query t
    A = np.exp(scores - scores.max(1, keepdims=True))
    A /= A.sum(1, keepdims=True)  # (n, n)
    assert np.allclose(causal_uniform_attention(V), A @ V, atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 2000), st.integers(1, 6), st.integers(0, 10**6))
def test_counter_recovers_positions_in_floats(n, dim, seed):
    e = np.random.default_rng(seed).normal(size=dim)
    e /= np.linalg.norm(e)
    t_hat = position_from_counter(causal_counter(n, e), e)
    assert np.array_equal(np.rint(t_hat), np.arange(n))
    assert np.max(np.abs(t_hat - np.arange(n))) < 1e-9 * n


# --------------------------------------------------------------------------- E[max count]


def _expected_max_by_enumeration(k: int, S: int) -> Fraction:
    """Average of the largest symbol count over all S^k words of length k."""
    total = sum(max(Counter(word).values(), default=0) for word in itertools.product(range(S), repeat=k))
    return Fraction(total, S**k)


@pytest.mark.parametrize("S", [1, 2, 3, 5])
def test_expected_max_count_against_enumeration(S):
    K = 6 if S <= 3 else 5
    want = [_expected_max_by_enumeration(k, S) for k in range(K + 1)]
    assert expected_max_count_exact(K, S) == want
    assert np.allclose(expected_max_count(K, S), [float(x) for x in want], rtol=1e-13, atol=0)


@pytest.mark.parametrize("S", [2, 7, 8, 13])
def test_expected_max_count_float_against_exact(S):
    # the binary powering over symbols (float) against sequential integer counting (exact)
    K = 40
    exact = np.array([float(x) for x in expected_max_count_exact(K, S)])
    assert np.allclose(expected_max_count(K, S), exact, rtol=1e-12, atol=0)


# --------------------------------------------------------------------------- Proposition 1 (ii): the bag reader


def _bag_reader_by_enumeration(n: int, S: int, p: Fraction) -> Fraction:
    """The best reader of the bag, from the joint law of (bag, target) over every sequence.

    No ordering argument: for each bag, the reader picks the target with the largest joint probability.
    """
    L = n - 1
    joint = defaultdict(Fraction)  # (bag, target) -> probability
    tokens = [(s, marked) for s in range(S) for marked in (False, True)]
    for seq in itertools.product(tokens, repeat=L):
        prob = Fraction(1)
        for _, marked in seq:
            prob *= (p if marked else 1 - p) / S
        if any(marked for _, marked in seq):
            finals = [(seq, prob)]
        else:  # the task marks one uniformly random content token
            finals = [(seq[:j] + ((seq[j][0], True),) + seq[j + 1 :], prob / L) for j in range(L)]
        for final, q in finals:
            target = [s for s, marked in final if marked][-1]
            joint[(tuple(sorted(final)), target)] += q
    best = defaultdict(Fraction)
    for (bag, _), q in joint.items():
        best[bag] = max(best[bag], q)
    return sum(best.values())


@pytest.mark.parametrize(
    ("n", "S", "p"),
    [(2, 3, Fraction(1, 10)), (4, 2, Fraction(1, 10)), (5, 2, Fraction(1, 3)), (4, 3, Fraction(1, 2))],
)
def test_bag_reader_exact_against_enumeration(n, S, p):
    want = _bag_reader_by_enumeration(n, S, p)
    assert bag_reader_accuracy_exact(n, S, p) == want
    assert bag_reader_accuracy(n, S, float(p)) == pytest.approx(float(want), rel=1e-13)


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 30), st.integers(1, 9), st.fractions(0, 1, max_denominator=20))
def test_bag_reader_float_against_exact(n, S, p):
    assert bag_reader_accuracy(n, S, float(p)) == pytest.approx(float(bag_reader_accuracy_exact(n, S, p)), rel=1e-12)


@pytest.mark.parametrize("n", [32, 256])
def test_bag_reader_against_monte_carlo_of_the_cue_generator(n):
    # the task's own generator; the reader sees only the bag: how many of each marked token id there are
    samples = 25_000
    tokens, target = cue_batch(np.random.default_rng(n), samples, n)  # (samples, n), (samples,)
    S = N_SYMBOLS
    counts = np.stack([(tokens == token_id(s, True)).sum(1) for s in range(S)], 1)  # (samples, S)
    guess = counts.argmax(1)  # the most frequent marked symbol
    acc = bag_reader_accuracy(n, S, MARK_PROB)
    assert abs((target == guess).mean() - acc) < 4.5 * np.sqrt(acc * (1 - acc) / samples)


def test_bag_reader_limits():
    # every token marked: the reader is right with probability E[max]/(n-1); none marked: always right
    assert bag_reader_accuracy(10, 8, 0.0) == 1.0
    assert bag_reader_accuracy(10, 8, 1.0) == pytest.approx(float(expected_max_count_exact(9, 8)[9]) / 9, rel=1e-13)


@pytest.mark.parametrize(
    "call",
    [
        lambda: bag_reader_accuracy(1),
        lambda: bag_reader_accuracy(0),
        lambda: bag_reader_accuracy(-4),
        lambda: bag_reader_accuracy(32.0),
        lambda: bag_reader_accuracy(32, 0),
        lambda: bag_reader_accuracy(32, 8, 1.5),
        lambda: bag_reader_accuracy(32, 8, -0.1),
        lambda: bag_reader_accuracy_exact(8, 8, 0.1),
        lambda: expected_max_count(-1),
        lambda: expected_max_count(3.5),
        lambda: expected_max_count_exact(-2),
        lambda: causal_counter(0, [1.0]),
        lambda: causal_counter(3, [[1.0]]),
        lambda: causal_uniform_attention(np.zeros(3)),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(PosKernelsError):
        call()
