"""Kerple's two kernels over offsets (Chi et al. 2022): what the paper states, its tail bound and the certified cut,
checked on random instances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from poskernels.errors import PosKernelsError
from poskernels.theory.kerple_fire import (
    KERPLE_KERNELS,
    conditional_min_eigenvalue,
    kerple_log_kernel,
    kerple_power_kernel,
    kerple_tail_bound,
    offset_gram,
)

positive = st.floats(0.05, 5.0)
exponent = st.floats(0.05, 2.0)
seeds = st.integers(0, 2**32 - 1)


def _positions(seed, N=12, spread=200.0):
    return np.sort(np.random.default_rng(seed).uniform(0, spread, size=N))  # random real positions


@given(seeds, positive, positive)
def test_kerple_log_bias_is_conditionally_positive_definite(seed, r1, r2):
    # Chi et al. 2022: sum_ij c_i c_j b(|m_i - m_j|) >= 0 whenever sum c = 0, b the bias itself (not its negation)
    K = offset_gram(lambda r: kerple_log_kernel(r, r1, r2), _positions(seed))
    scale = np.abs(K).max()
    assert conditional_min_eigenvalue(K) >= -1e-10 * scale
    c = np.random.default_rng(seed + 1).normal(size=(50, K.shape[0]))
    c -= c.mean(axis=1, keepdims=True)  # sum(c) = 0, the paper's condition
    assert (np.einsum("ki,ij,kj->k", c, K, c) >= -1e-10 * scale * (c**2).sum(1)).all()
    # e^{b} is then positive definite (Schoenberg): a position kernel in the softmax's weights
    assert np.linalg.eigvalsh(np.exp(K)).min() >= -1e-10


@given(seeds, positive, exponent)
def test_kerple_power_bias_is_conditionally_positive_definite_up_to_exponent_two(seed, r1, r2):
    K = offset_gram(lambda r: kerple_power_kernel(r, r1, r2), _positions(seed, spread=20.0))
    assert conditional_min_eigenvalue(K) >= -1e-9 * np.abs(K).max()


def test_the_sign_and_the_exponent_matter():
    # the check can fail: the negated bias is not CPD, nor is the power bias past exponent 2
    m = _positions(3)
    for name, kernel in KERPLE_KERNELS.items():
        K = offset_gram(lambda r, k=kernel: k(r, 1.0, 1.0), m)
        assert conditional_min_eigenvalue(K) > -1e-9, name
        assert conditional_min_eigenvalue(-K) < -1.0, name  # r1 log(1 + r2 r), r1 r: conditionally negative definite
    K3 = offset_gram(lambda r: kerple_power_kernel(r, 1.0, 3.0), _positions(4, N=6, spread=5.0))
    assert conditional_min_eigenvalue(K3) < 0


@given(st.floats(0.0, 6.0), st.floats(1.05, 4.0), positive, st.integers(0, 400), seeds)
def test_kerple_log_tail_bound_holds_against_the_weights(W, r1, r2, D, seed):
    # the weight a head puts on offsets >= D, computed exactly over a long causal prefix, never exceeds the bound
    n = 20_000
    rng = np.random.default_rng(seed)
    c = rng.uniform(0, W, size=n)  # content scores in an interval of width W
    c[0] = 0.0 if W > 0 else c[0]  # the query's own key at the bottom: the worst case of the bound
    z = c + kerple_log_kernel(np.arange(n), r1, r2)  # z[r], r = offset
    w = np.exp(z - z.max())
    w /= w.sum()
    assert w[D:].sum() <= kerple_tail_bound("kerple_log", W, r1, r2, D) * (1 + 1e-9)


@given(st.floats(0.0, 6.0), st.floats(0.05, 2.0), st.floats(0.3, 2.0), st.integers(0, 60), seeds)
def test_kerple_power_tail_bound_holds_against_the_weights(W, r1, r2, D, seed):
    n = 5_000
    c = np.random.default_rng(seed).uniform(0, W, size=n)
    z = c + kerple_power_kernel(np.arange(n), r1, r2)
    w = np.exp(z - z.max())
    w /= w.sum()
    assert w[D:].sum() <= kerple_tail_bound("kerple_power", W, r1, r2, D) * (1 + 1e-9)


def test_kerple_tail_bound_is_tight_enough_to_cut_and_refuses_what_has_no_cut():
    # power at r2 = 1 is ALiBi at slope r1: e^W e^{-sD} (1 + 1/s) against Theorem 3's e^W e^{-sD} / (1 - e^{-s})
    from poskernels.theory.alibi import alibi_tail_bound

    b, a = kerple_tail_bound("kerple_power", 3.0, 0.5, 1.0, 80), alibi_tail_bound(3.0, 0.5, 80)
    assert a <= b <= 1.2 * a
    assert kerple_tail_bound("kerple_log", 0.0, 1.0, 1.0, 10**6) == math.inf  # r^-1: the sum diverges
    assert kerple_tail_bound("kerple_log", 0.0, 2.0, 1.0, 10**6) < 1e-5
    with pytest.raises(PosKernelsError, match="kind must be one of kerple_log, kerple_power; got 'alibi'"):
        kerple_tail_bound("alibi", 0.0, 1.0, 1.0, 3)
    with pytest.raises(PosKernelsError, match="W must be >= 0; got -1.0"):
        kerple_tail_bound("kerple_log", -1.0, 1.0, 1.0, 3)
    with pytest.raises(PosKernelsError, match="offsets r must be >= 0"):
        kerple_log_kernel([-1, 2], 1.0, 1.0)
    with pytest.raises(PosKernelsError, match="r1"):
        kerple_power_kernel([1], 0.0, 1.0)


@pytest.mark.parametrize("scheme, a1, a2", [("kerple_log", np.log(6.0), 0.0), ("kerple_power", 0.0, -1.0)])
def test_a_kerple_head_cut_drops_no_more_than_eps(scheme, a1, a2):
    # the certified cut carried to Kerple: the exact weights past D sum to at most the bound, and the cut reader
    # moves no logit by more than its logit bound
    from poskernels.model.config import HeadConfig
    from poskernels.model.engine.cut import certified_cut, has_cut
    from poskernels.model.engine.one_head import query_forward
    from poskernels.model.engine.stream import stream_logits
    from poskernels.model.head import init_params
    from poskernels.tasks.cue import cue_batch

    cfg = HeadConfig(scheme=scheme)
    params = {k: 3.0 * v for k, v in init_params(cfg, np.random.default_rng(1)).items()}
    params.update(kerple_a1=np.full(1, a1), kerple_a2=np.full(1, a2))
    assert has_cut(params, cfg)
    x, _ = cue_batch(np.random.default_rng(2), 4, 3000)
    for eps in (1e-3, 1e-9):
        cut = certified_cut(params, cfg, [16], eps)
        assert cut.tail_bound <= eps and 0 < cut.D < 2999
        W = cut.W
        bound = kerple_tail_bound(scheme, W, *_r(scheme, a1, a2), cut.D)
        assert bound > eps  # the smallest such D
        logits, cache = query_forward(params, cfg, x)
        assert (cache["a"][:, : 3000 - 1 - cut.D].sum(axis=1) <= cut.tail_bound * (1 + 1e-9)).all()
        assert np.abs(stream_logits(params, cfg, x, eps=eps) - logits).max() <= cut.logit_bound + 1e-12
    heavy = {**params, "kerple_a1": np.zeros(1)} if scheme == "kerple_log" else None
    if heavy is not None:  # r1 = 1: no cut, and the reader reads every key
        assert not has_cut(heavy, cfg)
        with pytest.raises(PosKernelsError, match="heavy tail"):
            certified_cut(heavy, cfg, [16], 1e-6)
        assert np.allclose(stream_logits(heavy, cfg, x, eps=1e-9), query_forward(heavy, cfg, x)[0], rtol=1e-10)


def _r(scheme, a1, a2):
    return math.exp(a1), (math.exp(a2) if scheme == "kerple_log" else 2 / (1 + math.exp(-a2)))


def test_the_power_tail_bound_survives_tiny_exponents():
    assert kerple_tail_bound("kerple_power", 1.0, 0.5, 0.004, 10) == math.inf  # Gamma(250): in logs, vacuous
    assert 0 < kerple_tail_bound("kerple_power", 0.0, 50.0, 0.3, 10**3) < 1e-150
