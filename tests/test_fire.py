"""FIRE's bias (Li et al. 2023): its progressive interpolation on random instances, and its gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from poskernels.errors import PosKernelsError
from poskernels.theory.kerple_fire import fire_kernel

seeds = st.integers(0, 2**32 - 1)


@given(st.integers(1, 10**6), st.floats(0.01, 1.0), st.floats(1.0, 500.0), seeds)
def test_fire_reads_its_mlp_inside_the_unit_interval_at_every_length(t, c, L, seed):
    # Li et al. 2023: the progressive interpolation maps every causal offset of a query at t >= L into [0, 1]
    rng = np.random.default_rng(seed)
    w1, b1, w2 = rng.normal(size=(3, 8))
    r = np.unique(np.r_[0, rng.integers(0, t + 1, size=20), t])
    b = fire_kernel(r, t, c, L, w1, b1, w2)
    u = np.log1p(c * r) / np.log1p(c * max(L, t))
    assert ((u >= 0) & (u <= 1)).all()
    assert np.allclose(b, np.maximum(u[:, None] * w1 + b1, 0) @ w2)
    if t >= L:  # the farthest key reads f(1), whatever the length
        assert np.isclose(b[-1], np.maximum(w1 + b1, 0) @ w2)
    with pytest.raises(PosKernelsError, match="lie in \\[0, t\\]"):
        fire_kernel([t + 1], t, c, L, w1, b1, w2)


@pytest.mark.parametrize("a_L", [-2.0, 1.0])
def test_fire_gradients_with_the_threshold_below_and_above_the_query(a_L):
    # L = n_train e^{a_L}: below the query's position the normaliser follows t and L gets no gradient; above, L learns
    from poskernels.model.config import HeadConfig
    from poskernels.model.engine.one_head import cross_entropy, query_backward, query_forward
    from poskernels.model.head import init_params
    from poskernels.model.optim import central_difference
    from poskernels.model.reference import torch_loss_and_grad
    from poskernels.tasks.cue import cue_batch

    rng = np.random.default_rng(5)
    cfg = HeadConfig(scheme="fire", d=6, vocab=9, n_classes=4, n_train=10)
    params = {k: 3.0 * v for k, v in init_params(cfg, rng).items()}
    params["fire_aL"] = np.full(1, a_L)
    params["fire_ac"] = np.full(1, 1.5)
    tokens, targets = cue_batch(rng, 5, 10, n_symbols=4, mark_prob=0.3)
    logits, cache = query_forward(params, cfg, tokens)
    grads = query_backward(params, cfg, cache, cross_entropy(logits, targets)[1])

    def loss():
        return cross_entropy(query_forward(params, cfg, tokens)[0], targets)[0]

    for name, value in params.items():
        assert np.allclose(grads[name], central_difference(loss, value), rtol=1e-5, atol=1e-8), name
    assert (grads["fire_aL"][0] == 0.0) == (a_L < 0)  # L = 1.35 < t = 9: the threshold is not read
    _, ref = torch_loss_and_grad(params, cfg, tokens, targets)
    assert all(np.allclose(grads[k], ref[k], rtol=1e-9, atol=1e-12) for k in params)


@pytest.mark.parametrize("shape", [(7,), (200, 200), (3, 2049)])  # one block; many; a short last block
def test_one_mlp_at_many_inputs_gives_the_written_formulas_bits(shape):
    # fire_bias evaluates one head's MLP a block at a time, in place: every number the formula's, bit for bit
    from poskernels.encodings.fire import fire_bias

    rng = np.random.default_rng(sum(shape))
    u = rng.uniform(0.0, 1.0, size=shape)
    w1, b1, w2 = rng.normal(size=(3, 32))
    written = (np.maximum(u[..., None] * w1 + b1, 0.0) * w2).sum(-1)  # f(u) = sum_h w2_h relu(w1_h u + b1_h)
    assert np.array_equal(fire_bias(u, w1, b1, w2), written)
