"""Theorem 3 on the trained ALiBi heads far past the window, and the long-context measurements' shape.

Every claim is tested on the tournament's heads (trained once through ``train_many``, cached under
``.cache/poskernels``), over the seed block (ten seeds, from ``POSKERNELS_FIRST_SEED``).  The statistical claims
are the records of the suite ``long_context`` of :data:`poskernels.claims.CLAIMS`; the per-head bounds of
Theorem 3 are asserted here head by head, exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck import assert_claim, assert_reported, claim_id, holds, reported
from conftest import CACHE, SEEDS
from poskernels.claims.long_context import BEYOND as CLAIM_BEYOND
from poskernels.claims.long_context import INSIDE as CLAIM_INSIDE
from poskernels.experiments.long_context import LONG_READERS, run_long_context
from poskernels.experiments.long_cuts import tail_cut_rows
from poskernels.experiments.long_sets import sequences
from poskernels.model.config import preset
from poskernels.model.engine.cut import certified_cut
from poskernels.model.engine.stream import recent_weights
from poskernels.model.train import train_many
from poskernels.tasks.cue import cue_batch
from poskernels.tasks.needle import needle_batch
from poskernels.theory.alibi import alibi_tail_bound

INSIDE = tuple(int(r) for r in CLAIM_INSIDE)  # the offsets the claims read (poskernels.claims.long_context)
BEYOND = tuple(int(r) for r in CLAIM_BEYOND)


@pytest.fixture(scope="module")
def alibi_heads():
    return train_many([(preset("tournament", "alibi"), s) for s in SEEDS], CACHE)


@pytest.fixture(scope="module")
def distance():
    return run_long_context(CACHE, seeds=SEEDS, lengths=(32,), offsets=INSIDE + BEYOND, schemes=("alibi",))


@pytest.fixture(scope="module")
def numbers(distance):
    cue = run_long_context(CACHE, seeds=SEEDS, lengths=(100, 100_000), offsets=(1,), schemes=("alibi",))
    assert cue["count"] == distance["count"]
    return {"long": {**distance, "length": cue["length"]}}


@pytest.mark.parametrize("claim", holds("long_context"), ids=claim_id)
def test_claim_holds(numbers, claim):
    assert_claim(numbers, claim)


@pytest.mark.parametrize("claim", reported("long_context"), ids=claim_id)
def test_claim_is_reported_not_asserted(numbers, claim):
    assert_reported(numbers, claim)


def test_weights_at_1e5_equal_those_at_100_within_theorem_3(alibi_heads):
    # Theorem 3 (ii): the keys past offset 100 carry at most e^W e^{-100 s} / (1 - e^{-s}) of the weight, so the
    # weights on the 100 most recent keys at n = 10^5 and at n = 100 differ by at most that in total, head by head
    x, _ = cue_batch(np.random.default_rng(np.random.SeedSequence([11, 100_000])), 2, 100_000)
    for h in alibi_heads:
        cut = certified_cut(h.params, h.head, [16], 1e-12)
        bound = alibi_tail_bound(cut.W, cut.s, 100)
        long = recent_weights(h.params, h.head, x, 100)  # (2, 100) exact, all 10^5 keys in the normalizer
        short = recent_weights(h.params, h.head, x[:, -100:], 100)  # (2, 100) the same keys alone
        assert np.abs(long - short).sum(axis=1).max() <= bound + 1e-12, h.seed


def test_a_needle_past_the_horizon_weighs_less_than_the_query(alibi_heads):
    # Theorem 3 (iii): alpha_r <= e^{W - s r} alpha_0 for every offset, read exactly at n = r + 1
    for h in alibi_heads:
        cut = certified_cut(h.params, h.head, [16], 1e-12)
        for r in (8, 40, 120, 4096):
            x, _ = needle_batch(np.random.default_rng(r), 4, r)
            w = recent_weights(h.params, h.head, x, r + 1)  # (4, r + 1) by offset
            assert np.all(w[:, r] <= math.exp(cut.W - cut.s * r) * w[:, 0] * (1 + 1e-9)), (h.seed, r)


def test_the_offsets_beyond_lie_beyond_twice_every_horizon(distance):
    horizons = [row["horizon"] for row in distance["distance"]["horizon"].values()]
    assert min(BEYOND) > 2 * max(horizons), horizons


def test_the_measurement_has_every_reader_and_the_learned_table_refuses(distance):
    for part, xs in (("length", ["32"]), ("distance", [str(r) for r in INSIDE + BEYOND])):
        table = distance[part]
        assert set(table["accuracy"]) == set(LONG_READERS)
        for x in xs:
            values = table["per_seed"]["alibi"][x]
            assert len(values) == len(SEEDS) >= 10
            assert table["stderr"]["alibi"][x] == pytest.approx(np.std(values, ddof=1) / math.sqrt(len(values)))
            assert table["accuracy"]["rope"][x] is None  # not read in this run


def test_sequences_are_fixed_and_as_described():
    a, ya = sequences("length", 100, 30)
    b, yb = sequences("length", 100, 30)
    assert np.array_equal(a, b) and np.array_equal(ya, yb) and a.shape == (30, 100)
    t, y = sequences("distance", 40, 20)
    assert t.shape == (20, 41)
    marked = (t[:, :-1] >= 8) & (t[:, :-1] < 16)
    assert np.array_equal(marked.sum(axis=1), np.ones(20)) and np.all(marked[:, 0])
    assert np.array_equal(t[:, 0] - 8, y)


def test_lab_view_and_figure_carry_the_measurement(distance, tmp_path):
    from poskernels.lab import long_view
    from poskernels.lab.figures import draw_figures
    from poskernels.lab.payload import Sources, viz_payload

    part = long_view.build(Sources({"long": distance}, None))
    for r in INSIDE + BEYOND:
        i = part["offsets"].index(r)
        assert part["distance"]["alibi"][i] == round(distance["distance"]["accuracy"]["alibi"][str(r)], 3)
    assert [h["seed"] for h in part["horizons"]] == [str(s) for s in SEEDS]
    assert part["x_distance"]["min"] == min(INSIDE) and part["x_distance"]["max"] == max(BEYOND)
    payload = viz_payload({"long": distance})
    assert payload["long"] == part and "long" in payload["figures"]["B"]
    written, _ = draw_figures(payload, tmp_path)
    assert tmp_path / "long_context.png" in written


def test_a_sweep_with_the_long_reading_gives_the_sections_numbers(tmp_path, distance):
    # the evaluation as a sweep setting: needle points of a sweep equal the section's per-seed figures
    import sys

    from poskernels.experiments.long_sets import TEST_SEED
    from poskernels.sweep.backends import local_backend
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.runner import run_sweep
    from poskernels.sweep.store import Store

    seed = SEEDS[0]
    grid = parse_grid(
        f'[fixed]\nscheme = "alibi"\ntest_task = "needle"\ntest_size = {distance["count"]}\n'
        f"test_seed = {TEST_SEED}\ntest_lengths = [4, 16, 256]\nseed = {seed}\n"
    )
    with Store(tmp_path / "s.sqlite") as store:
        s = run_sweep(grid, store, local_backend(1), cache_dir=CACHE, stream=sys.stdout)
        rows = store.rows()
    assert (s.done, s.failed, s.trained) == (1, 0, 0)
    acc = rows[0]["metrics"]["accuracy"]
    assert acc == {r: distance["distance"]["per_seed"]["alibi"][r][0] for r in ("4", "16", "256")}


def test_the_cut_reading_of_the_trained_heads_is_within_its_certificate(alibi_heads):
    # the certified cut against the exact one-pass reader, on the trained heads at n = 3,000
    from poskernels.model.engine.one_head import query_logits
    from poskernels.model.engine.stream import stream_logits

    x, _ = cue_batch(np.random.default_rng(5), 40, 3000)
    for h in alibi_heads:
        cut = certified_cut(h.params, h.head, [16], 1e-12)
        exact = query_logits(h.params, h.head, x)
        got = stream_logits(h.params, h.head, x, eps=1e-12)
        assert np.abs(got - exact).max() <= cut.logit_bound + 1e-12, h.seed
        assert np.array_equal(got.argmax(axis=1), exact.argmax(axis=1)), h.seed


def test_the_tail_cut_reads_its_learned_numbers_off_the_scheme():
    import ast
    import inspect
    from types import SimpleNamespace

    from poskernels.model import HeadConfig
    from poskernels.model.head import init_params

    def head(scheme, **learned):
        cfg = HeadConfig(scheme=scheme)
        params = {**init_params(cfg, np.random.default_rng(0)), **learned}
        return SimpleNamespace(head=cfg, params=params, seed=7)

    a = {"kerple_a1": np.array([2.0]), "kerple_a2": np.array([-0.2])}
    rows = tail_cut_rows([head("kerple_log", **a), head("kerple_power", **a), head("alibi")])
    assert set(rows) == {"kerple_log", "kerple_power"}  # ALiBi's cut is Theorem 3's, by its slope
    log, power = rows["kerple_log"]["7"], rows["kerple_power"]["7"]
    assert (log["r1"], log["r2"]) == pytest.approx((math.exp(2.0), math.exp(-0.2)), rel=1e-15)  # e^{a1}, e^{a2}
    assert (power["r1"], power["r2"]) == pytest.approx((math.exp(2.0), 2 / (1 + math.exp(0.2))), rel=1e-15)
    assert list(power) == ["r1", "r2", "W", "cut_D"]
    code = ast.parse(inspect.getsource(tail_cut_rows)).body[0]
    code.body = code.body[1:]  # the docstring's example may name a scheme; the code may not
    assert "kerple_" not in ast.unparse(code)  # the scheme's class states its own numbers


def test_a_kerple_head_whose_tail_bound_stays_above_eps_is_read_in_full():
    # a finite tail bound (has_cut) that never falls to EPS is a heavy tail: the cut's row says None, not a crash
    from poskernels.experiments.long_cuts import EPS
    from poskernels.model import HeadConfig
    from poskernels.model.config import TrainConfig
    from poskernels.model.engine.cut import HeavyTail, has_cut
    from poskernels.model.train import train
    from poskernels.tasks.cue import query_token

    head = train(TrainConfig(head=HeadConfig(scheme="kerple_log"), steps=3, batch=8), seed=0)
    assert has_cut(head.params, head.head)
    with pytest.raises(HeavyTail):
        certified_cut(head.params, head.head, [query_token(8)], EPS)
    row = tail_cut_rows([head])["kerple_log"]["0"]
    assert row["cut_D"] is None and row["W"] is None and row["r1"] > 0
