"""The engine equals the readable head: the stacked trainer, the streaming reader and the readers of every position
give the numbers of :func:`poskernels.model.head.forward` / :func:`~poskernels.model.head.backward`, for every
registered scheme and for schemes registered from outside the package (a learned Gaussian bias, a rotation with
decay, a scaled softmax); the readable backward itself against central differences."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.encodings import BUILT_IN, SCHEMES, Scheme, Setting, omega, register_scheme
from poskernels.model.all_positions import score_all
from poskernels.model.config import HeadConfig
from poskernels.model.engine.one_head import cross_entropy, query_backward, query_forward
from poskernels.model.engine.stream import recent_weights, stream_logits
from poskernels.model.head import backward, forward, init_params
from poskernels.model.optim import central_difference
from poskernels.model.reading import Reading
from poskernels.tasks.cue import cue_batch


class GaussBias(Scheme):
    """A learned Gaussian bias over offsets, ``b(r) = -r^2 / (2 w^2)`` with ``w = e^{c}`` (outside the package)."""

    name, title, article, where = "test_gauss", "Gaussian bias (test)", "none", "score"
    settings = {"test_gauss_width": Setting(4.0, 0.0, None, "the initial width w")}

    def init(self, cfg, rng):
        return {"c": np.full(1, np.log(cfg.test_gauss_width))}  # (1,)

    def bias(self, params, cfg, q, r):
        return -0.5 * r**2 * np.exp(-2 * params["c"])  # (M, n) or (n, n)

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {"c": (dz * (r**2 * np.exp(-2 * params["c"]))[:, None, :]).sum(axis=(1, 2))[:, None]}

    def far_past(self, cfg):
        return None


class DecayedRotation(Scheme):
    """RoPE with a fixed decay per plane (xPos's form): complex frequencies ``theta - i gamma``."""

    name, title, article, where = "test_decay", "decayed rotation (test)", "none", "rotation"

    def transform(self, cfg, reading):
        theta = omega(cfg.d, cfg.base)
        return theta - 1j * 0.02 * (1 + np.arange(cfg.d // 2)) / (cfg.d // 2)  # (d/2,) complex


class ScaledSoftmax(Scheme):
    """ALiBi whose logits are scaled by ``lambda = 1.5``: a logit scale on a scheme that does not turn."""

    name, title, article, where = "test_scaled", "scaled ALiBi (test)", "none", "score"

    def bias(self, params, cfg, q, r):
        return -0.25 * r

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {}

    def logit_scale(self, cfg, reading):
        return 1.5 * reading.logit_scale

    def linear_slope(self, cfg):
        return 0.25


OUTSIDE = (GaussBias, DecayedRotation, ScaledSoftmax)


@pytest.fixture(autouse=True, scope="module")
def outside():
    for cls in OUTSIDE:
        register_scheme(cls)
    yield
    for cls in OUTSIDE:
        del SCHEMES[cls.name]


NAMES = [*(n for n in SCHEMES if n in BUILT_IN), *(c.name for c in OUTSIDE)]  # every built-in one, and ours
SMALL = dict(d=6, vocab=9, n_classes=4, n_train=10, settings={"t5_buckets": 8, "t5_max_distance": 12, "shaw_clip": 3})


def _heavy(cfg, seed, scale=3.0):
    p = {k: scale * v for k, v in init_params(cfg, np.random.default_rng(seed)).items()}
    for k in ("beta", "c"):  # a trained-looking T5 beta, a width that is not its default
        if k in p:
            p[k] = np.random.default_rng(seed + 100).normal(size=p[k].shape)
    return p


def test_every_registered_scheme_is_tested_here():
    assert sorted(SCHEMES) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_trainer_equals_the_readable_head(name):
    cfg = HeadConfig(scheme=name, **SMALL)
    params = _heavy(cfg, 1, scale=2.0)
    tokens, targets = cue_batch(np.random.default_rng(2), 6, 10, n_symbols=4, mark_prob=0.3)
    tokens[1, -1] = 2  # a second query token: the engine's per-query-token tables
    logits, cache = forward(params, cfg, tokens)
    fast, fast_cache = query_forward(params, cfg, tokens)
    assert np.allclose(fast, logits, rtol=1e-10, atol=1e-12)
    assert np.allclose(fast_cache["a"], cache["a"], rtol=1e-10, atol=1e-13)
    _, dlogits = cross_entropy(logits, targets)
    slow, quick = backward(params, cfg, cache, dlogits), query_backward(params, cfg, fast_cache, dlogits)
    assert sorted(slow) == sorted(params)
    for k in params:
        assert np.allclose(quick[k], slow[k], rtol=1e-8, atol=1e-11), k


@pytest.mark.parametrize("name", NAMES)
def test_the_readable_backward_against_central_differences(name):
    cfg = HeadConfig(scheme=name, **SMALL)
    params = _heavy(cfg, 3, scale=1.5)
    tokens, targets = cue_batch(np.random.default_rng(4), 4, 10, n_symbols=4, mark_prob=0.3)
    logits, cache = forward(params, cfg, tokens)
    grads = backward(params, cfg, cache, cross_entropy(logits, targets)[1])

    def total():
        return cross_entropy(forward(params, cfg, tokens)[0], targets)[0]

    for k, value in params.items():
        assert np.allclose(grads[k], central_difference(total, value), rtol=1e-5, atol=1e-8), k


@pytest.mark.parametrize("name", NAMES)
def test_the_streaming_reader_and_every_position_equal_the_head(name):
    cfg = HeadConfig(scheme=name)
    params = _heavy(cfg, 5, scale=1.0)
    x, _ = cue_batch(np.random.default_rng(6), 3, 32 if name == "learned" else 90)
    readings = [Reading()] + ([Reading(omega(16) / 3, 1.2)] if SCHEMES[name].rotary else [])
    for reading in readings:
        logits, cache = forward(params, cfg, x, reading=reading)
        assert np.allclose(stream_logits(params, cfg, x, reading=reading, chunk=16), logits, rtol=1e-8, atol=1e-10)
        assert np.allclose(score_all(params, cfg, x, reading=reading)[:, -1], logits, rtol=1e-9, atol=1e-11)
        weights = recent_weights(params, cfg, x, 8, reading=reading, chunk=16)  # (B, 8), offsets 0..7
        assert np.allclose(weights, cache["a"][:, ::-1][:, :8], rtol=1e-8, atol=1e-12)


def test_a_scheme_from_outside_reaches_the_certified_cut():
    from poskernels.model.engine.cut import certified_cut, has_cut

    cfg = HeadConfig(scheme="test_scaled")
    params = _heavy(cfg, 7, scale=2.0)
    assert has_cut(params, cfg)
    x, _ = cue_batch(np.random.default_rng(8), 4, 400)
    cut = certified_cut(params, cfg, np.unique(x[:, -1]), 1e-9)
    exact = forward(params, cfg, x)[0]
    assert 0 < cut.D < 399
    assert np.abs(stream_logits(params, cfg, x, eps=1e-9) - exact).max() <= cut.logit_bound + 1e-12


def test_decay_makes_the_far_past_weigh_less():
    # the decayed rotation's score of a key r back carries e^{-gamma r}: far keys' scores shrink towards 0
    cfg = HeadConfig(scheme="test_decay")
    p = init_params(cfg, np.random.default_rng(0))
    q, k = np.ones((1, 16)), np.ones((1, 16))
    far = [abs(forward_score(p, cfg, q, k, r)) for r in (0, 200, 400)]
    assert far[0] > far[1] > far[2]


def forward_score(p, cfg, q, k, r):
    from poskernels.model.score import score

    return score(p, cfg, q, [float(r)], k, [0.0])[0, 0]
