"""The cue task: the DESIGN convention, its statistics, and the bag reader against exact counting."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.errors import PosKernelsError
from poskernels.tasks.cue import bag_reader_score, cue_batch, cue_vocab, describe, query_token
from poskernels.tasks.registry import get_task, register_task
from poskernels.theory.counting import bag_reader_accuracy


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 70), st.integers(1, 6))
def test_every_sequence_follows_the_convention(seed, n, n_symbols):
    tokens, targets = cue_batch(np.random.default_rng(seed), 30, n, n_symbols=n_symbols)
    assert tokens.shape == (30, n) and (tokens[:, -1] == query_token(n_symbols)).all()
    content = tokens[:, :-1]
    assert content.min() >= 0 and content.max() < 2 * n_symbols
    marked = content >= n_symbols
    assert marked.any(axis=1).all()  # at least one mark: one is forced when none was drawn
    for row, target in zip(content, targets):  # the target is the symbol on the most recent mark
        assert target == row[np.flatnonzero(row >= n_symbols)[-1]] - n_symbols


def test_statistics_of_the_stream():
    tokens, _ = cue_batch(np.random.default_rng(0), 20_000, 33)
    content = tokens[:, :-1]
    marked = content >= 8
    # mark rate: 0.1 per token, plus the forced mark when none was drawn (prob 0.9^32 per sequence)
    expected = 0.1 + 0.9**32 / 32
    assert abs(marked.mean() - expected) < 4 * np.sqrt(expected * (1 - expected) / content.size)
    symbols = np.bincount((content % 8).ravel(), minlength=8) / content.size
    assert np.abs(symbols - 1 / 8).max() < 4 * np.sqrt(1 / 8 * 7 / 8 / content.size)


@pytest.mark.parametrize("n", [2, 5, 32, 256])
def test_bag_reader_on_samples_converges_to_exact_counting(n):
    # oracle: Proposition 1's exact count against the reader applied to 40,000 sampled sequences
    score = bag_reader_score(*cue_batch(np.random.default_rng(n), 40_000, n))
    exact = bag_reader_accuracy(n)
    assert abs(score.mean() - exact) <= 4 * score.std() / np.sqrt(score.size) + 1e-12


def test_same_seed_same_stream_and_registry():
    a = cue_batch(np.random.default_rng(3), 5, 12)
    b = get_task("cue")(np.random.default_rng(3), 5, 12)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(PosKernelsError, match="already registered"):
        register_task("cue", lambda rng, batch, n: a)
    with pytest.raises(PosKernelsError, match="unknown task"):
        get_task("filings-unknown")


def test_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(PosKernelsError, match="n must be >= 2"):
        cue_batch(rng, 3, 1)
    with pytest.raises(PosKernelsError, match="mark_prob"):
        cue_batch(rng, 3, 8, mark_prob=0.0)
    with pytest.raises(PosKernelsError, match="token id"):
        describe([40])
    for bad in ("x", float("nan"), 1.5, True):
        with pytest.raises(PosKernelsError, match=re.escape(f"got {bad!r}")):
            cue_batch(rng, 3, 8, mark_prob=bad)
    for bad in (None, 0, np.random.RandomState(0)):
        with pytest.raises(
            PosKernelsError, match=r"rng must be a numpy\.random\.Generator .*; got " + re.escape(repr(bad))
        ):
            cue_batch(bad, 3, 8)
    assert cue_vocab(8) == 17


@pytest.mark.parametrize(("n_symbols", "mark_prob"), [(8, 0.1), (4, 0.3), (3, 1 / 3), (8, 1.0), (256, 0.05)])
def test_sixteen_bits_a_token_give_the_exact_mark_probability(n_symbols, mark_prob):
    # the mark is Bernoulli(mark_prob) exactly (the threshold's edge takes one more draw), the symbol uniform:
    # over 2,000,000 tokens both rates sit within 5 standard errors of their values
    from poskernels.tasks.cue import _draw_tokens

    symbols, marked = _draw_tokens(np.random.default_rng(n_symbols), (1000, 2000), n_symbols, mark_prob)
    se = np.sqrt(mark_prob * (1 - mark_prob) / marked.size)
    assert abs(marked.mean() - mark_prob) <= 5 * se + 1e-12
    counts = np.bincount(symbols.ravel().astype(np.int64), minlength=n_symbols)
    p = 1 / n_symbols
    assert counts.size == n_symbols
    assert np.all(np.abs(counts / symbols.size - p) <= 5 * np.sqrt(p * (1 - p) / symbols.size))


def test_token_type():
    x, _ = cue_batch(np.random.default_rng(0), 3, 9, dtype=np.int16)
    assert x.dtype == np.int16 and np.array_equal(x, cue_batch(np.random.default_rng(0), 3, 9)[0])
    with pytest.raises(PosKernelsError, match="got float64"):
        cue_batch(np.random.default_rng(0), 3, 9, dtype=float)
    with pytest.raises(PosKernelsError, match="0..600"):
        cue_batch(np.random.default_rng(0), 3, 9, n_symbols=300, dtype=np.uint8)
