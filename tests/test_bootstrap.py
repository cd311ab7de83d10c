"""The test-draw error resampled from the reads already made (:mod:`poskernels.experiments.bootstrap`).

Oracles: the bootstrap SD of a mean of independent items tends to the closed form ``sqrt(var(h) / Q)`` of the
per-item means ``h`` (the plug-in variance, ``ddof=0``); of a ratio over clusters, to the delta method's
``sqrt(sum_f (c_f - p n_f)^2) / sum_f n_f``; 1,000 resamples read either to a few percent.  A head's 0/1 reads
average to the accuracy the page prints, bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from poskernels.experiments.bootstrap import RESAMPLES, draw_sd, draw_sd_table, resample_counts
from poskernels.experiments.held_out import head_accuracy, head_hits, hit_rate
from poskernels.experiments.rescaled import rescaled_reading
from poskernels.model.config import preset
from poskernels.model.train import train_stack

# the SD of B resamples' SD estimate is about 1 / sqrt(2 B) relative: 2.2% at 1,000; 5 of those
TOL = 5 / np.sqrt(2 * RESAMPLES)


@pytest.mark.parametrize("p", [0.05, 0.5, 0.93])
def test_independent_items_match_the_closed_form(p):
    rng = np.random.default_rng(int(p * 100))
    hits = rng.random((10, 2000)) < p  # (S, Q)
    h = hits.mean(axis=0)
    assert draw_sd(hits) == pytest.approx(np.sqrt(h.var() / h.size), rel=TOL)


def test_clusters_match_the_delta_method_and_are_resampled_whole():
    rng = np.random.default_rng(7)
    sizes = rng.integers(5, 30, size=100)  # queries per filing
    groups = np.repeat(np.arange(sizes.size), sizes)
    level = rng.random(sizes.size)[groups]  # each filing its own difficulty: its queries are not independent
    hits = rng.random((10, groups.size)) < level
    h = hits.mean(axis=0)
    right, asked = np.bincount(groups, weights=h), np.bincount(groups).astype(float)
    p = right.sum() / asked.sum()
    delta = np.sqrt(((right - p * asked) ** 2).sum()) / asked.sum()
    assert draw_sd(hits, groups) == pytest.approx(delta, rel=2 * TOL)  # the delta method is itself first-order
    assert draw_sd(hits, groups) > 3 * draw_sd(hits)  # one filing's queries move together


def test_an_item_without_counted_queries_is_still_drawn():
    hits = np.array([[1.0, 0.0, 1.0, 1.0]])
    groups = np.array([0, 0, 2, 2])  # filings 1, 3 and 4 have no query counted here
    w = resample_counts(5)  # (B, 5): every filing drawn, as a new draw of five filings would draw them
    right, asked = w @ [1.0, 0.0, 2.0, 0.0, 0.0], w @ [2.0, 0.0, 2.0, 0.0, 0.0]
    kept = asked > 0
    assert draw_sd(hits, groups, items=5) == pytest.approx((right[kept] / asked[kept]).std(ddof=1), rel=1e-12)
    assert draw_sd(hits, groups, items=5) != draw_sd(hits, groups)  # without ``items``: three filings, 0, 1, 2


def test_the_resamples_are_seeded_and_read_only():
    a, b = resample_counts(100), resample_counts(100)
    assert a is b and not a.flags.writeable
    assert np.array_equal(a, resample_counts.__wrapped__(100))  # drawn again from the same seed
    assert (a.sum(axis=1) == 100).all()


def test_a_table_of_cells_is_each_cells_draw_sd():
    rng = np.random.default_rng(3)
    cells = {"a": {"32": rng.random((3, 500)) < 0.5, "64": [None]}, "b": {"32": rng.random((3, 200)) < 0.9}}
    table = draw_sd_table(cells)
    assert table["a"]["64"] is None and list(table["a"]) == ["32", "64"]
    for row, col in (("a", "32"), ("b", "32")):
        assert table[row][col] == pytest.approx(draw_sd(cells[row][col]), rel=1e-12)


def test_no_read_no_error():
    assert draw_sd(None) is None and draw_sd([None, [1, 0]]) is None


@pytest.fixture(scope="module")
def rope_heads():
    # two short heads: the reads, not the training, are under test
    config = dataclasses.replace(preset("tournament", "rope"), steps=40)
    return train_stack(config, (0, 1))


def test_a_heads_reads_average_to_the_accuracy_it_prints(rope_heads):
    head = rope_heads[0]
    for n in (32, 64):
        hits = head_hits(head, n)
        assert hits.shape == (2000,) and hits.dtype == bool
        assert hit_rate(hits) == head_accuracy(head, n)  # the same float, bit for bit
        reading = rescaled_reading(head, "pi", n)
        assert hit_rate(head_hits(head, n, reading)) == head_accuracy(head, n, reading)


def test_the_draw_error_of_trained_heads_matches_the_closed_form(rope_heads):
    hits = np.array([head_hits(h, 64) for h in rope_heads])
    h = hits.mean(axis=0)
    assert draw_sd(hits) == pytest.approx(np.sqrt(h.var() / h.size), rel=TOL)
