"""Randomized positions read as Ruoss et al. read them: each test sequence at its own ordered random subset.

Oracle: :func:`poskernels.model.head.forward`, the head written from its definition, called one sequence at a time
at that sequence's positions; and the consecutive reading, which :func:`forward_at` must give when every row of
positions is ``0..n-1``.
"""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.encodings import SCHEMES
from poskernels.errors import PosKernelsError
from poskernels.experiments.held_out import TEST_SEED, head_accuracy, heldout
from poskernels.model import random_reading
from poskernels.model.config import HeadConfig, preset
from poskernels.model.engine.one_head import accuracy
from poskernels.model.head import forward, init_params
from poskernels.model.random_reading import (
    _logits_at,
    forward_at,
    randomized_accuracy,
    randomized_hits,
    sequence_positions,
)
from poskernels.model.trained import TrainedHead

RANDOMIZED = [n for n, s in SCHEMES.items() if s.settings.get("random_positions") is not None]


def _head(scheme: str, seed: int = 0):
    cfg = HeadConfig(scheme=scheme)
    params = init_params(cfg, np.random.default_rng(seed))
    params["W_Q"] = params["W_Q"] * 4.0  # sharper attention: positions matter to the logits
    return cfg, params


@pytest.mark.parametrize("scheme", [*RANDOMIZED, "nope", "xpos", "nope_ssmax"])
def test_each_sequence_is_read_at_its_own_positions(scheme):
    cfg, params = _head(scheme)
    tokens = np.random.default_rng(1).integers(0, cfg.vocab, size=(6, 12))  # (B, n)
    pos = sequence_positions(6, 12, 2048, seed=3)  # (B, n)
    got = forward_at(params, cfg, tokens, pos)  # (B, C)
    for b in range(6):
        one = forward(params, cfg, tokens[b : b + 1], pos[b])[0]  # the definition, one sequence
        np.testing.assert_allclose(got[b : b + 1], one, rtol=0, atol=1e-12)
    consecutive = np.broadcast_to(np.arange(12.0), (6, 12))
    np.testing.assert_allclose(
        forward_at(params, cfg, tokens, consecutive), forward(params, cfg, tokens)[0], atol=1e-12
    )


@pytest.mark.parametrize("block", [random_reading.BLOCK, 24 * 3])
@pytest.mark.parametrize("scheme", [*RANDOMIZED, "nope", "xpos", "partial_rotary", "sinusoidal"])
def test_the_tournaments_reading_is_forward_at_bit_for_bit(scheme, block, monkeypatch):
    # the code and the turns gathered from rows 0..max(pos): forward_at's numbers chunk by chunk, bit for bit, for a
    # code, a turn, a complex turn (xPos), a partial one, and none, the keys turned a chunk or 3 sequences at a time;
    # positions that are not integers go to forward_at
    monkeypatch.setattr(random_reading, "BLOCK", block)
    for seed in (0, 1):
        cfg, params = _head(scheme, seed)
        tokens = np.random.default_rng(seed + 1).integers(0, cfg.vocab, size=(50, 24))  # (B, n)
        pos = sequence_positions(50, 24, 2048, seed=seed + 3)  # (B, n)
        for step, at in ((50, pos), (7, pos), (7, pos + 0.25), (7, pos + random_reading.ROWS_MAX)):
            chunks = [forward_at(params, cfg, tokens[i : i + step], at[i : i + step]) for i in range(0, 50, step)]
            assert np.array_equal(_logits_at(params, cfg, tokens, at, step), np.concatenate(chunks))
        y = np.random.default_rng(seed).integers(0, cfg.n_classes, size=50)
        hits = np.argmax(forward_at(params, cfg, tokens, pos), axis=1) == y
        assert np.array_equal(randomized_hits(params, cfg, tokens, y, 2048, seed + 3, chunk=24 * 7), hits)


def test_the_positions_are_distinct_ordered_and_seeded_by_the_test_set():
    pos = sequence_positions(50, 32, 2048, seed=TEST_SEED)  # (B, n)
    assert pos.shape == (50, 32) and (np.diff(pos, axis=1) > 0).all() and pos.min() >= 0 and pos.max() < 2048
    assert len({tuple(row) for row in pos}) == 50  # each sequence its own subset
    assert np.array_equal(pos, sequence_positions(50, 32, 2048, seed=TEST_SEED))
    assert not pos.flags.writeable  # drawn once, shared by every head read at that length
    assert not np.array_equal(pos, sequence_positions(50, 32, 2048, seed=TEST_SEED + 1))


def test_a_randomized_head_is_read_at_random_positions_and_beside_them_at_consecutive_ones():
    cfg, params = _head("rope_randpos")
    x, y = heldout(64)
    paper = randomized_accuracy(params, cfg, x, y, cfg.random_positions, TEST_SEED)
    plain = accuracy(params, cfg, x, y)
    assert paper != plain  # the two readings differ for a head whose scores read positions

    head = TrainedHead(preset("tournament", "rope_randpos"), 0, params, np.zeros(1), "")
    assert head.head == cfg
    assert head_accuracy(head, 64) == paper  # the paper's reading is the tournament's
    assert head_accuracy(head, 64, consecutive=True) == plain


def test_bad_positions_and_a_bias_scheme_are_refused():
    cfg, params = _head("rope_randpos")
    tokens = np.zeros((2, 4), dtype=np.int64)
    with pytest.raises(PosKernelsError, match=r"shape \(2, 4\)"):
        forward_at(params, cfg, tokens, np.zeros((2, 5)))
    alibi, p = _head("alibi")
    with pytest.raises(PosKernelsError, match="without a bias"):
        forward_at(p, alibi, tokens, np.zeros((2, 4)))
    with pytest.raises(PosKernelsError, match="do not fit"):
        sequence_positions(1, 40, 32, seed=0)
