"""Oracle: every hand-written gradient of every scheme against float64 central differences."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.encodings import SCHEMES
from poskernels.model.config import HeadConfig
from poskernels.model.embedding import EMBEDDINGS
from poskernels.model.engine.one_head import cross_entropy, loss_and_grad, query_backward, query_forward
from poskernels.model.engine.reductions import stack_cross_entropy, stack_params
from poskernels.model.engine.stack import stack_backward, stack_forward
from poskernels.model.head import init_params
from poskernels.model.optim import central_difference
from poskernels.model.reading import PLAIN, Reading
from poskernels.tasks.cue import cue_batch

# A small head that still exercises every branch: T5's logarithmic buckets (offsets past 4 with
# 8 buckets and max distance 12) and Shaw's clip (offsets past 3) are reached at n = 10.
SMALL = dict(d=6, vocab=9, n_classes=4, n_train=10, settings={"t5_buckets": 8, "t5_max_distance": 12, "shaw_clip": 3})


def _scaled(params, factor):
    # larger weights than at init, so that softmax is far from uniform and every term matters
    return {k: v * factor for k, v in params.items()}


def _check(cfg, params, tokens, targets, reading=PLAIN, entries=None, rng=None):
    def loss():
        logits, _ = query_forward(params, cfg, tokens, reading=reading)
        return cross_entropy(logits, targets)[0]

    logits, cache = query_forward(params, cfg, tokens, reading=reading)
    grads = query_backward(params, cfg, cache, cross_entropy(logits, targets)[1])
    assert sorted(grads) == sorted(params)
    for name, value in params.items():
        if entries is None:
            numeric = central_difference(loss, value)
            analytic = grads[name]
        else:  # a random subset of entries of a full-size head
            idx = rng.choice(value.size, size=min(entries, value.size), replace=False)
            flat = value.reshape(-1)
            numeric = np.empty(idx.size)
            for i, k in enumerate(idx):
                view = flat[k : k + 1]
                numeric[i] = central_difference(loss, view)[0]
            analytic = grads[name].reshape(-1)[idx]
        assert np.allclose(analytic, numeric, rtol=1e-5, atol=1e-8), (cfg.scheme, name)
        assert np.abs(analytic).max() > 1e-6, (cfg.scheme, name)  # the check is not vacuous


@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_every_parameter_small_head(scheme, embedding):
    rng = np.random.default_rng(7)
    cfg = HeadConfig(scheme=scheme, embedding=embedding, **SMALL)
    params = _scaled(init_params(cfg, rng), 4.0)
    tokens, targets = cue_batch(rng, 5, 10, n_symbols=4, mark_prob=0.3)
    _check(cfg, params, tokens, targets)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_every_parameter_many_query_tokens(scheme):
    # a stream whose last token varies (the filings' windows): several rows of the score table
    rng = np.random.default_rng(5)
    cfg = HeadConfig(scheme=scheme, **SMALL)
    params = _scaled(init_params(cfg, rng), 4.0)
    tokens = rng.integers(0, cfg.vocab, size=(6, 10))
    targets = rng.integers(0, cfg.n_classes, size=6)
    assert np.unique(tokens[:, -1]).size > 2
    _check(cfg, params, tokens, targets)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_tournament_head_random_entries(scheme):
    rng = np.random.default_rng(11)
    cfg = HeadConfig(scheme=scheme)
    params = _scaled(init_params(cfg, rng), 3.0)
    tokens, targets = cue_batch(rng, 6, 32)
    _check(cfg, params, tokens, targets, entries=25, rng=rng)


@pytest.mark.parametrize("name", ["pi", "yarn"])
def test_rope_gradients_under_a_rescaled_reading(name):
    # the backward also carries a reading's frequencies and logit scale (YaRN's (0.1 ln 4 + 1)^2)
    from poskernels.encodings import omega
    from poskernels.extension import extend

    rng = np.random.default_rng(3)
    cfg = HeadConfig(scheme="rope", **SMALL)
    params = _scaled(init_params(cfg, rng), 4.0)
    tokens, targets = cue_batch(rng, 4, 10, n_symbols=4, mark_prob=0.3)
    _check(cfg, params, tokens, targets, reading=Reading.from_extension(extend(name, omega(6), 4, 10)))


@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_against_pytorch_autograd(scheme, embedding):
    # oracle: the same head written position by position in PyTorch, differentiated by autograd
    from poskernels.model.reference import torch_loss_and_grad

    rng = np.random.default_rng(21)
    cfg = HeadConfig(scheme=scheme, embedding=embedding)
    params = _scaled(init_params(cfg, rng), 3.0)
    tokens, targets = cue_batch(rng, 16, 32)
    ref_loss, ref = torch_loss_and_grad(params, cfg, tokens, targets)
    loss, grads = loss_and_grad(params, cfg, tokens, targets)
    assert np.isclose(loss, ref_loss, rtol=1e-12)
    for k in params:
        assert np.allclose(grads[k], ref[k], rtol=1e-9, atol=1e-12), k


def _stack(cfg, rng, M, B, n, **kw):
    params = stack_params(_scaled(init_params(cfg, rng), 4.0) for _ in range(M))
    data = [cue_batch(rng, B, n, **kw) for _ in range(M)]
    return params, np.stack([x for x, _ in data]), np.stack([y for _, y in data])


@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_stacked_gradients_against_central_differences(scheme, embedding):
    # a stack of three heads, each on its own sequences: the gradient of the summed losses, entry by entry
    rng = np.random.default_rng(13)
    cfg = HeadConfig(scheme=scheme, embedding=embedding, **SMALL)
    params, tokens, targets = _stack(cfg, rng, 3, 4, 10, n_symbols=4, mark_prob=0.3)

    def loss():
        return float(stack_cross_entropy(stack_forward(params, cfg, tokens)[0], targets)[0].sum())

    logits, cache = stack_forward(params, cfg, tokens)
    grads = stack_backward(params, cfg, cache, stack_cross_entropy(logits, targets)[1])
    assert sorted(grads) == sorted(params)
    for name, value in params.items():
        numeric = central_difference(loss, value)
        assert np.allclose(grads[name], numeric, rtol=1e-5, atol=1e-8), (scheme, name)
        assert np.abs(grads[name]).max() > 1e-6, (scheme, name)


@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_stacked_gradients_against_pytorch_autograd(scheme, embedding):
    from poskernels.model.reference import torch_stack_loss_and_grad

    rng = np.random.default_rng(23)
    cfg = HeadConfig(scheme=scheme, embedding=embedding)
    params, tokens, targets = _stack(cfg, rng, 4, 8, 32)
    ref_loss, ref = torch_stack_loss_and_grad(params, cfg, tokens, targets)
    logits, cache = stack_forward(params, cfg, tokens)
    loss, dlogits = stack_cross_entropy(logits, targets)
    grads = stack_backward(params, cfg, cache, dlogits)
    assert np.allclose(loss, ref_loss, rtol=1e-12)
    for k in params:
        assert np.allclose(grads[k], ref[k], rtol=1e-9, atol=1e-12), k


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_a_stack_computes_each_head_as_alone_bit_for_bit(scheme):
    # nothing mixes the models: head m's logits and gradients do not depend on the heads beside it
    rng = np.random.default_rng(31)
    cfg = HeadConfig(scheme=scheme)
    params, tokens, targets = _stack(cfg, rng, 5, 16, 32)
    logits, cache = stack_forward(params, cfg, tokens)
    grads = stack_backward(params, cfg, cache, stack_cross_entropy(logits, targets)[1])
    for m in (0, 3):
        one = {k: v[m] for k, v in params.items()}
        alone, c1 = query_forward(one, cfg, tokens[m])
        assert np.array_equal(alone, logits[m])
        g1 = query_backward(one, cfg, c1, cross_entropy(alone, targets[m])[1])
        assert all(np.array_equal(g1[k], grads[k][m]) for k in params)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_rows_that_underflow_are_recomputed_exactly(scheme):
    # weights so large that a sequence holding none of the top-scoring tokens underflows against the
    # tables' maxima: that model is recomputed score by score, and its logits and gradients stay right
    from poskernels.model.reference import torch_stack_loss_and_grad

    rng = np.random.default_rng(41)
    cfg = HeadConfig(scheme=scheme, **SMALL)
    params = stack_params([_scaled(init_params(cfg, rng), 4.0), _scaled(init_params(cfg, rng), 4.0)])
    params["W_K"][1] *= 400.0  # model 1's content scores span thousands
    tokens = np.stack([rng.integers(0, cfg.vocab, size=(5, 10)) for _ in range(2)])
    targets = rng.integers(0, cfg.n_classes, size=(2, 5))
    logits, cache = stack_forward(params, cfg, tokens)
    assert list(cache["exact"]) == [1]  # only the model that underflowed
    loss, dlogits = stack_cross_entropy(logits, targets)
    grads = stack_backward(params, cfg, cache, dlogits)
    ref_loss, ref = torch_stack_loss_and_grad(params, cfg, tokens, targets)
    assert np.allclose(loss, ref_loss, rtol=1e-9)
    for k in params:
        assert np.allclose(grads[k], ref[k], rtol=1e-7, atol=1e-9), k
