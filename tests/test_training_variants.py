"""The training-side variants: the scaled softmax (``s log n``) and randomized positions, on any scheme.

The claims of their papers are rows of the one table of trained claims (:mod:`poskernels.claims.training`):
the tests at the end parametrize over them, on the suite's block of ten seeds (``conftest.SEEDS``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claimcheck import assert_claim, assert_reported, claim_id, holds, reported
from conftest import CACHE, SEEDS
from poskernels.claims import by_id, of_suite
from poskernels.claims.training import COST, GAIN, HOLD, RANDOMIZED_LENGTHS
from poskernels.encodings import SCHEMES, Scheme, register_scheme
from poskernels.encodings.variants import random_positions, randomized, ssmax, training_positions
from poskernels.errors import PosKernelsError
from poskernels.experiments.laboratory import run_laboratory
from poskernels.experiments.long_context import run_long_context
from poskernels.experiments.recursive_reader import recursive_decay
from poskernels.model.config import HeadConfig
from poskernels.model.engine.cut import certified_cut, has_cut
from poskernels.model.engine.one_head import query_logits
from poskernels.model.engine.stream import stream_logits
from poskernels.model.head import forward, init_params
from poskernels.model.reading import PLAIN
from poskernels.model.score import score
from poskernels.tasks.cue import cue_batch

SCALED = [name for name, s in SCHEMES.items() if s.scale_grows]
RANDOMIZED = [name for name, s in SCHEMES.items() if "random_positions" in s.settings]


def test_the_variants_are_registered_beside_their_bases():
    assert SCALED == ["nope_ssmax", "rope_ssmax"] and RANDOMIZED == ["sinusoidal_randpos", "rope_randpos"]
    for name in SCALED + RANDOMIZED:
        base = SCHEMES[name.rsplit("_", 1)[0]]
        assert SCHEMES[name].where == base.where and not SCHEMES[name].in_article
        assert isinstance(SCHEMES[name], type(base))


# -- the scaled softmax in a head -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCALED)
def test_the_scale_is_s_log_n_of_the_keys_the_query_sees(scheme):
    cfg = HeadConfig(scheme=scheme)
    params = init_params(cfg, np.random.default_rng(0))
    assert math.isclose(params["ssmax_s"][0], 1 / math.log(cfg.n_train))  # starts as plain softmax at L
    params["ssmax_s"] = np.array([0.7])
    x, _ = cue_batch(np.random.default_rng(1), 3, 50)
    _, cache = forward(params, cfg, x)
    assert math.isclose(cache["lam"], 0.7 * math.log(50))
    h = init_params(HeadConfig(scheme=scheme.replace("_ssmax", "")), np.random.default_rng(0))
    assert all(np.array_equal(h[k], v) for k, v in h.items())  # the base's draws, unchanged
    plain = {k: v for k, v in params.items() if k != "ssmax_s"}
    base_cfg = HeadConfig(scheme=scheme.replace("_ssmax", ""))
    # with s log n = 1 the scaled head is the plain head
    one = {**params, "ssmax_s": np.array([1 / math.log(50)])}
    assert np.allclose(query_logits(one, cfg, x), query_logits(plain, base_cfg, x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scheme", SCALED)
def test_the_streaming_reader_scales_by_log_n_at_long_context(scheme):
    # n = 10^5: the scale is s log 10^5 for every key (the streaming reader's chunks and the far-past counts agree)
    cfg = HeadConfig(scheme=scheme)
    params = {k: 2.0 * v for k, v in init_params(cfg, np.random.default_rng(3)).items()}
    params["ssmax_s"] = np.array([0.5])
    x, _ = cue_batch(np.random.default_rng(4), 2, 100_000)
    ref = query_logits(params, cfg, x)
    assert np.allclose(stream_logits(params, cfg, x, chunk=8192), ref, rtol=1e-9, atol=1e-12)
    small = {**params, "ssmax_s": np.array([0.5 * math.log(1000) / math.log(100_000)])}  # the scale at n = 1000
    assert not np.allclose(query_logits(small, cfg, x), ref)  # the scale read off n changes the logits


def test_no_cut_or_constant_filter_for_a_scale_that_grows_with_n():
    cfg = HeadConfig(scheme="nope_ssmax")
    params = init_params(cfg, np.random.default_rng(0))
    assert not has_cut(params, cfg) and recursive_decay(cfg) is None
    assert recursive_decay(HeadConfig(scheme="nope")) == 1.0
    scaled = register_scheme(ssmax(type(SCHEMES["alibi"]), name="alibi_ssmax_test"))  # a slope, and s log n
    try:
        cfg = HeadConfig(scheme=scaled.name)
        params = init_params(cfg, np.random.default_rng(0))
        assert has_cut(params, HeadConfig(scheme="alibi")) and not has_cut(params, cfg)
        with pytest.raises(PosKernelsError, match="grows with n"):
            certified_cut(params, cfg, [16], 1e-9)
        x, _ = cue_batch(np.random.default_rng(4), 2, 3000)
        exact = query_logits(params, cfg, x)  # stream_many with eps reads such a head in full
        assert np.allclose(stream_logits(params, cfg, x, chunk=512, eps=1e-9), exact, rtol=1e-10, atol=1e-13)
    finally:
        del SCHEMES[scaled.name]


def test_score_reads_n_per_query():
    cfg = HeadConfig(scheme="nope_ssmax")
    params = {**init_params(cfg, np.random.default_rng(0)), "ssmax_s": np.array([0.9])}
    q, k = np.random.default_rng(1).normal(size=(2, 6, cfg.d))
    pos = np.arange(6.0)
    z = score(params, cfg, q, pos, k, pos)  # (6, 6): row t scaled by 0.9 log(t + 1)
    raw = q @ k.T / cfg.tau
    assert np.allclose(z, raw * (0.9 * np.log(np.arange(1, 7)))[:, None], rtol=1e-13, atol=1e-13)


def test_ssmax_of_a_scheme_from_outside_and_what_is_refused():
    class Gauss(Scheme):
        name, title, article, where = "gauss_ssmax_base", "Gaussian bias", "none", "score"

        def bias(self, params, cfg, q, r):
            return -0.5 * (np.asarray(r, dtype=float) / 8.0) ** 2

        def bias_backward(self, dz, params, cfg, q, r):
            return None, {}

    scaled = register_scheme(ssmax(Gauss))
    try:
        assert scaled.name == "gauss_ssmax_base_ssmax" and scaled.scale_grows
        cfg = HeadConfig(scheme=scaled.name)
        p = init_params(cfg, np.random.default_rng(0))
        lam = scaled.logit_scale_at({k: v[None] for k, v in p.items()}, cfg, PLAIN, 32)
        assert np.allclose(lam, 1.0)
    finally:
        del SCHEMES[scaled.name]
    with pytest.raises(PosKernelsError, match="already scales"):
        ssmax(type(SCHEMES["rope_ssmax"]))
    with pytest.raises(PosKernelsError, match="registered Scheme subclass"):
        ssmax("rope")
    with pytest.raises(PosKernelsError, match="but not its backward logit_scale_backward"):

        class NoBackward(Scheme):
            name, title, article = "no_backward", "a scale with no gradient", "none"

            def logit_scale(self, cfg, reading, *, params, n):
                return np.log(n)

    with pytest.raises(PosKernelsError, match="both keywords params and n"):

        class HalfKeywords(Scheme):
            name, title, article = "half_keywords", "a scale of n alone", "none"

            def logit_scale(self, cfg, reading, *, n):
                return np.log(n)


# -- randomized positions ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), extra=st.integers(0, 5000))
def test_random_positions_are_ordered_distinct_in_range_and_reproducible(seed, n, extra):
    L_max = n + extra
    p = random_positions(np.random.default_rng(seed), n, L_max)
    assert p.shape == (n,) and p.dtype == float
    assert (np.diff(p) > 0).all() and p.min() >= 0 and p.max() < L_max and np.array_equal(p, np.rint(p))
    assert np.array_equal(p, random_positions(np.random.default_rng(seed), n, L_max))  # the seed reproduces them


def test_training_positions_only_for_a_head_with_the_setting():
    rng = np.random.default_rng(0)
    assert training_positions(HeadConfig(scheme="rope"), rng, 32) is None
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state  # nothing drawn
    cfg = HeadConfig(scheme="rope_randpos")
    assert cfg.random_positions == 2048
    assert training_positions(cfg, rng, 32).max() < 2048
    off = HeadConfig(scheme="rope_randpos", settings={"random_positions": 0})
    assert training_positions(off, rng, 32) is None
    with pytest.raises(PosKernelsError, match="random_positions must be an integer"):
        HeadConfig(scheme="sinusoidal_randpos", settings={"random_positions": -1})
    with pytest.raises(PosKernelsError, match="absolute code defined everywhere or a rotation"):
        randomized(type(SCHEMES["learned"]))
    with pytest.raises(PosKernelsError, match="do not fit"):
        random_positions(rng, 33, 32)


@pytest.mark.parametrize("scheme", RANDOMIZED)
def test_gradients_at_random_positions_against_central_differences_and_autograd(scheme):
    from poskernels.model.engine.one_head import cross_entropy, query_backward, query_forward
    from poskernels.model.optim import central_difference
    from poskernels.model.reference import torch_loss_and_grad

    rng = np.random.default_rng(11)
    cfg = HeadConfig(scheme=scheme, d=6, vocab=9, n_classes=4, n_train=10)
    params = {k: 3.0 * v for k, v in init_params(cfg, rng).items()}
    tokens, targets = cue_batch(rng, 5, 10, n_symbols=4, mark_prob=0.3)
    pos = random_positions(rng, 10, cfg.random_positions)  # (10,) spread over [0, 2048)
    assert pos.max() > 100  # far from 0..n-1: the check reads the positions, not the default

    def loss():
        return cross_entropy(query_forward(params, cfg, tokens, positions=pos)[0], targets)[0]

    logits, cache = query_forward(params, cfg, tokens, positions=pos)
    grads = query_backward(params, cfg, cache, cross_entropy(logits, targets)[1])
    oracle_loss, oracle = torch_loss_and_grad(params, cfg, tokens, targets, positions=pos)
    assert math.isclose(loss(), oracle_loss, rel_tol=1e-12)
    for name, value in params.items():
        assert np.allclose(grads[name], central_difference(loss, value), rtol=1e-5, atol=1e-8), name
        assert np.allclose(grads[name], oracle[name], rtol=1e-9, atol=1e-12), name
    _, plain = torch_loss_and_grad(params, cfg, tokens, targets)  # at 0..n-1 the gradient differs
    assert not np.allclose(plain["W_Q"], oracle["W_Q"])


def test_training_at_random_positions_is_reproducible_and_each_head_its_own():
    from poskernels.model.config import preset
    from poskernels.model.train import train, train_stack

    config = preset("quick", "rope_randpos")
    stack = train_stack(config, [3, 4, 5])
    again = train(config, 4)
    assert all(np.array_equal(stack[1].params[k], again.params[k]) for k in again.params)  # bit for bit, alone
    plain = train(preset("quick", "rope"), 4)
    assert not np.allclose(plain.params["W_Q"], again.params["W_Q"])  # the positions moved the training
    off = train(replace(config, head=HeadConfig(scheme="rope_randpos", settings={"random_positions": 0})), 4)
    assert all(np.array_equal(plain.params[k], off.params[k]) for k in plain.params)  # setting 0: RoPE's own bits


@pytest.mark.parametrize("scheme", RANDOMIZED)
def test_a_stack_at_per_model_positions_is_each_model_alone_at_its_own_bit_for_bit(scheme):
    from poskernels.model.engine.reductions import stack_cross_entropy, stack_params
    from poskernels.model.engine.stack import stack_backward, stack_forward

    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(5)
    params = stack_params(init_params(cfg, np.random.default_rng(s)) for s in range(3))
    tokens, targets = cue_batch(rng, 3 * 16, cfg.n_train)
    tokens, targets = tokens.reshape(3, 16, -1), targets.reshape(3, 16)  # (M, B, n), (M, B)
    pos = np.stack([random_positions(rng, cfg.n_train, cfg.random_positions) for _ in range(3)])  # (M, n)
    logits, cache = stack_forward(params, cfg, tokens, pos)
    grads = stack_backward(params, cfg, cache, stack_cross_entropy(logits, targets)[1])
    for m in range(3):
        one = {k: v[m : m + 1] for k, v in params.items()}
        z, c = stack_forward(one, cfg, tokens[m : m + 1], pos[m])
        g = stack_backward(one, cfg, c, stack_cross_entropy(z, targets[m : m + 1])[1])
        assert np.array_equal(logits[m], z[0])
        assert all(np.array_equal(grads[k][m], g[k][0]) for k in g), m
    first = {k: v[:1] for k, v in params.items()}
    assert not np.allclose(logits[0], stack_forward(first, cfg, tokens[:1], pos[1])[0][0])  # the rows are read


def test_per_model_positions_are_refused_for_a_bias_and_for_a_wrong_row_count():
    from poskernels.model.engine.reductions import stack_params
    from poskernels.model.engine.stack import stack_forward

    tokens = cue_batch(np.random.default_rng(0), 4, 8)[0].reshape(2, 2, 8)  # (M, B, n)
    pos = np.stack([np.arange(8.0), np.arange(8.0) + 3])  # (M, n)
    alibi = HeadConfig(scheme="alibi")
    params = stack_params(init_params(alibi, np.random.default_rng(s)) for s in range(2))
    with pytest.raises(PosKernelsError, match="per-model positions need a scheme whose position is its code"):
        stack_forward(params, alibi, tokens, pos)
    rope = HeadConfig(scheme="rope")
    params = stack_params(init_params(rope, np.random.default_rng(s)) for s in range(2))
    with pytest.raises(PosKernelsError, match=r"one row per model, \(2, 8\)"):
        stack_forward(params, rope, tokens, pos[:1].repeat(3, axis=0))


# -- the papers' claims, as statistics over the seeds ------------------------------------------------------------------



@pytest.fixture(scope="module")
def numbers():
    tournament = run_laboratory(CACHE, seeds=SEEDS)["tournament"]
    far = run_long_context(CACHE, seeds=SEEDS, lengths=(32,), offsets=(64, 100_000),
                           schemes=("nope", "nope_ssmax", "rope", "rope_ssmax"))  # fmt: skip
    return {"tournament": tournament, "long": far}


@pytest.mark.parametrize("claim", holds("training"), ids=claim_id)
def test_claim_holds(numbers, claim):
    assert_claim(numbers, claim)


@pytest.mark.parametrize("claim", reported("training"), ids=claim_id)
def test_claim_is_reported_not_asserted(numbers, claim):
    assert_reported(numbers, claim)


def test_every_variant_has_its_claim_and_its_finding():
    ids = {c.id for c in of_suite("training")}
    assert {"training.nope_ssmax_finds_the_needle_at_1e5", "training.rope_ssmax_does_not_rescue_rope_at_1e5"} <= ids
    assert "training.sinusoidal_randpos_above_sinusoidal_past_the_window" in ids
    assert all(c.where.startswith(("Nakanishi 2025", "Ruoss et al. 2023")) for c in of_suite("training"))


def test_the_claims_fail_on_numbers_in_which_they_are_false(numbers):
    def setting(section, scheme, x, values):
        d = copy.deepcopy(numbers)
        section(d)[scheme][x] = list(values)
        return d

    needle = lambda d: d["long"]["distance"]["per_seed"]  # noqa: E731
    tour = lambda d: d["tournament"]["per_seed"]  # noqa: E731
    nope_far = np.asarray(needle(numbers)["nope"]["100000"], dtype=float)
    as_nope = setting(needle, "nope_ssmax", "100000", nope_far + GAIN / 2)  # a gain short of the claim's
    assert by_id("training.nope_ssmax_finds_the_needle_at_1e5").check(as_nope).passed is False
    assert by_id("training.nope_ssmax_holds_the_needle_from_64_to_1e5").check(as_nope).passed is False
    rescued = setting(needle, "rope_ssmax", "100000", np.asarray(needle(numbers)["rope"]["100000"]) + 2 * HOLD)
    assert by_id("training.rope_ssmax_does_not_rescue_rope_at_1e5").check(rescued).passed is False
    same = copy.deepcopy(numbers)
    for n in RANDOMIZED_LENGTHS:  # the randomized head reading exactly as the plain one past the window
        tour(same)["sinusoidal_randpos"][n] = list(tour(numbers)["sinusoidal"][n])
    assert by_id("training.sinusoidal_randpos_above_sinusoidal_past_the_window").check(same).passed is False
    consecutive = lambda d: d["tournament"]["consecutive"]  # noqa: E731  the reading at 0..n-1, beside the paper's
    cheap = setting(consecutive, "sinusoidal_randpos", "32", np.asarray(tour(numbers)["sinusoidal"]["32"]) - COST / 2)
    assert by_id("training.sinusoidal_randpos_read_consecutively_pays_at_32").check(cheap).passed is False


def test_a_scheme_file_may_scale_its_own_scheme(tmp_path):
    from poskernels.model.scheme_check import check_scheme
    from poskernels.model.scheme_file import load_scheme_file
    from poskernels.model.scheme_identity import scheme_digest

    source = """import numpy as np
from poskernels.encodings import Scheme
from poskernels.encodings.variants import ssmax


class Bump(Scheme):
    name, title, article, where = "bump_file", "a bump", "none", "score"

    def bias(self, params, cfg, q, r):
        return -0.25 * np.minimum(np.asarray(r, dtype=float), 6.0)

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {}

    def reference_bias(self, tp, cfg, q, r, dtype):
        import torch
        return torch.tensor(-0.25 * np.minimum(np.asarray(r, dtype=float), 6.0), dtype=dtype)


BumpSSMax = ssmax(Bump)
"""
    before = dict(SCHEMES)
    try:
        path = tmp_path / "bump.py"
        path.write_text(source)
        assert sorted(load_scheme_file(path)) == ["bump_file", "bump_file_ssmax"]  # the factory's class is the file's
        assert all(c.ok for c in check_scheme("bump_file_ssmax"))  # gradients, engine, stack, autograd
        digest = scheme_digest("bump_file_ssmax")
        SCHEMES.clear()
        SCHEMES.update(before)
        path.write_text(source.replace("-0.25", "-0.5"))  # the base edited: the scaled scheme's heads are new ones
        load_scheme_file(path)
        assert scheme_digest("bump_file_ssmax") != digest
    finally:
        SCHEMES.clear()
        SCHEMES.update(before)
