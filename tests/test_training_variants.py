"""The training-side variants: the scaled softmax (``s log n``) and randomized positions, on any scheme."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, Scheme, register_scheme
from poskernels.encodings.variants import random_positions, randomized, ssmax, training_positions
from poskernels.errors import PosKernelsError
from poskernels.experiments.filings_reader import recursive_decay
from poskernels.model.config import HeadConfig
from poskernels.model.engine.cut import certified_cut, has_cut
from poskernels.model.engine.stream import stream_logits
from poskernels.model.head import forward, init_params, query_logits, score
from poskernels.model.reading import PLAIN
from poskernels.tasks.cue import cue_batch
from poskernels.theory.scaled_softmax import fading_threshold, max_weight_monte_carlo, top_weight

SCALED = [name for name, s in SCHEMES.items() if s.scale_grows]
RANDOMIZED = [name for name, s in SCHEMES.items() if "random_positions" in s.settings]


def test_the_variants_are_registered_beside_their_bases():
    assert SCALED == ["nope_ssmax", "rope_ssmax"] and RANDOMIZED == ["sinusoidal_randpos", "rope_randpos"]
    for name in SCALED + RANDOMIZED:
        base = SCHEMES[name.rsplit("_", 1)[0]]
        assert SCHEMES[name].where == base.where and not SCHEMES[name].in_article
        assert isinstance(SCHEMES[name], type(base))


# -- the scaled softmax: the paper's property, as theory ------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 17, 1000, 100_000])
@pytest.mark.parametrize("s", [None, 0.1, 0.43, 1.0])
def test_top_weight_is_the_softmax_of_the_vector_written_out(n, s):
    # oracle: the softmax of the paper's Figure 1 vector (-2 everywhere, +3 at the last), computed over all n entries
    z = np.full(n, -2.0)
    z[-1] = 3.0
    z = z * (1.0 if s is None else s * math.log(n))
    e = np.exp(z - z.max())
    assert math.isclose(top_weight(n, 5.0, s), e[-1] / e.sum(), rel_tol=1e-12, abs_tol=1e-300)


@settings(max_examples=60, deadline=None)
@given(delta=st.floats(0.1, 8.0), over=st.floats(1.0, 4.0), n=st.integers(2, 10**9))
def test_scaled_top_weight_stays_above_one_half_past_the_threshold_while_plain_fades(delta, over, n):
    s = over * fading_threshold(delta)  # s delta >= 1: the paper's regime
    assert top_weight(n, delta, s) >= 0.5 - 1e-12
    assert top_weight(n, delta) <= math.exp(delta) / (n - 1 + math.exp(delta)) + 1e-15  # plain: like e^delta / n


@settings(max_examples=30, deadline=None)
@given(delta=st.floats(0.1, 8.0), under=st.floats(0.05, 0.9))
def test_below_the_threshold_the_scaled_weight_fades_too(delta, under):
    s = under * fading_threshold(delta)
    weights = [top_weight(10**k, delta, s) for k in (6, 12, 18)]
    assert weights[-1] < weights[0] and weights[-1] <= 10 ** (-18 * (1 - under)) * 2


def test_monte_carlo_max_weight_fades_plain_and_holds_scaled():
    rng = np.random.default_rng(20250131)
    plain = [max_weight_monte_carlo(n, None, rng, trials=50) for n in (100, 10_000)]
    scaled = [max_weight_monte_carlo(n, 1.0, rng, trials=50) for n in (100, 10_000)]
    assert plain[1][0] < plain[0][0] / 20  # fades like 1 / n
    assert min(m - 4 * se for m, se in scaled) > 0.3  # s log n past sqrt(2 log n): the largest logit dominates
    with pytest.raises(PosKernelsError, match="Generator"):
        max_weight_monte_carlo(10, 1.0, 0)


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
    from poskernels.model.head import cross_entropy, query_backward, query_forward
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
