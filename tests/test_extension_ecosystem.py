"""Property and closed-form tests of the ecosystem's maps (dynamic NTK, reference YaRN, Llama 3, LongRoPE).

The comparison with transformers itself is in ``test_ecosystem.py``; here the maps are checked against the
identities that define them, on random instances.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.census.config import bundled_configs, load_config
from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.extension import MAPS, extend, ntk_aware, yarn, yarn_ramp_turns
from poskernels.extension.ecosystem import dynamic_ntk, llama3, longrope
from poskernels.extension.yarn_ramp_gap import compare_yarn_ramps, yarn_ramp_gap_max
from poskernels.extension.yarn_reference import yarn_hf, yarn_ramp_index

dims = st.sampled_from([16, 64, 96, 128, 256])
bases = st.floats(1e3, 1e7)
lengths = st.integers(256, 65536)
kappas = st.floats(1.0, 64.0)


def test_registry_holds_every_map_with_one_signature():
    assert {"none", "pi", "ntk", "yarn", "dynamic", "yarn_hf", "yarn_hf_untruncated", "llama3", "longrope"} <= set(MAPS)
    theta = omega(64, 5e5)  # (32,)
    for name in MAPS:
        e = extend(name, theta, 4.0, 4096)
        assert e.inv_freq.shape == theta.shape and np.all(e.inv_freq > 0) and e.attention_factor > 0
        assert np.all(e.factors <= 1 + 1e-12) and np.all(e.factors >= 1 / 4 - 1e-12)  # between PI and nothing


@settings(max_examples=30, deadline=None)
@given(d=dims, b=bases, L=lengths, kappa=kappas)
def test_dynamic_at_factor_one_is_ntk_aware(d, b, L, kappa):
    # Theorem 5 (iii) at the actual ratio: dynamic NTK with factor 1 is NTK-aware scaling
    theta = omega(d, b)
    np.testing.assert_allclose(dynamic_ntk(theta, kappa, L).inv_freq, ntk_aware(theta, kappa, L).inv_freq, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(d=dims, b=bases, L=lengths, kappa=kappas, factor=st.floats(1.0, 16.0))
def test_dynamic_slowest_plane_divided_by_its_ratio(d, b, L, kappa, factor):
    # base b * r**(d/(d-2)) with r = factor kappa - (factor - 1): plane 0 kept, the slowest plane divided by r
    e = dynamic_ntk(omega(d, b), kappa, L, factor=factor)
    r = factor * kappa - (factor - 1)
    assert e.factors[0] == 1.0
    assert e.factors[-1] == pytest.approx(1 / r, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(d=dims, b=bases, L=lengths, kappa=kappas, low=st.floats(0.5, 4.0), span=st.floats(0.5, 16.0))
def test_llama3_is_the_article_ramp_with_its_own_ends(d, b, L, kappa, low, span):
    # Llama 3.1 smoothing = Definition 5's YaRN ramp with (alpha, beta) = (low, high) and no logit scale
    theta = omega(d, b)
    e = llama3(theta, kappa, L, low_freq_factor=low, high_freq_factor=low + span)
    ref = yarn(theta, kappa, L, alpha=low, beta=low + span)
    np.testing.assert_allclose(e.inv_freq, ref.inv_freq, rtol=1e-12)
    assert e.attention_factor == 1.0


@settings(max_examples=30, deadline=None)
@given(d=dims, b=bases, L=lengths, kappa=kappas)
def test_reference_ramp_is_linear_in_plane_index_between_its_ends(d, b, L, kappa):
    # find_correction_dim(r) is the plane whose turns L theta_j / 2 pi equal r
    theta = omega(d, b)
    gamma = yarn_ramp_index(theta, L, truncate=False)  # (d/2,)
    j = np.arange(theta.size)
    turns = L * theta / (2 * math.pi)  # (d/2,)
    low = d * math.log(L / (32 * 2 * math.pi)) / (2 * math.log(b))  # transformers' formula, written out
    high = d * math.log(L / (1 * 2 * math.pi)) / (2 * math.log(b))
    lo, hi = max(low, 0), min(high, d - 1)
    expected = 1 - np.clip((j - lo) / (hi - lo), 0, 1)  # (d/2,)
    np.testing.assert_allclose(gamma, expected, atol=1e-9)
    assert np.all(gamma[turns >= 32] == 1.0) or low < 0  # planes with 32 turns or more are kept


@settings(max_examples=30, deadline=None)
@given(d=dims, b=bases, L=lengths)
def test_untruncated_gap_is_the_closed_form_and_below_its_maximum(d, b, L):
    # On the ramp t_j = 32**u_j, so gamma_ref - gamma_article = u - (32**u - 1)/31 <= yarn_ramp_gap_max()
    theta = omega(d, b)
    turns = L * theta / (2 * math.pi)  # (d/2,)
    g_ref, g_art = yarn_ramp_index(theta, L, truncate=False), yarn_ramp_turns(theta, L)
    if turns[0] >= 32 and turns[-1] <= 1:  # both ramp ends fall inside the planes (no clamping)
        on = (turns > 1) & (turns < 32)
        u = np.log(turns[on]) / math.log(32)
        np.testing.assert_allclose(g_ref[on] - g_art[on], u - (32**u - 1) / 31, atol=1e-9)
    assert np.all(g_ref - g_art <= yarn_ramp_gap_max() + 1e-12)


def test_gap_maximum_is_reached_for_dense_planes():
    # d = 8192 puts a plane within 0.01 turns-exponent of the widest point u* = log_32(31 / ln 32)
    c = compare_yarn_ramps(omega(8192, 1e4), 4.0, 4096, truncate=False)
    assert c["max_gap"] == pytest.approx(yarn_ramp_gap_max(), abs=1e-5)
    assert c["factor_gap"] == pytest.approx(yarn_ramp_gap_max() * 0.75, abs=1e-5)
    grid = np.linspace(0, 1, 200001)
    assert yarn_ramp_gap_max() == pytest.approx(np.max(grid - (32**grid - 1) / 31), abs=1e-9)


@pytest.mark.parametrize("name", bundled_configs())
def test_yarn_ramp_gaps_on_bundled_configs(name):
    """Documented figures: on every bundled model the largest gap in gamma is between 0.35 and 0.376."""
    cfg = load_config(name)
    for truncate in (True, False):
        c = compare_yarn_ramps(cfg.theta, 4.0, cfg.training_length, truncate=truncate)
        assert 0.35 < c["max_gap"] <= yarn_ramp_gap_max() + 1e-12
        diff = np.array(c["gamma_reference"]) - np.array(c["gamma_article"])  # (d/2,)
        if not truncate:  # untruncated, the reference ramp keeps at least as much of every plane
            assert np.all(diff >= -1e-12)


def test_yarn_hf_attention_factor_choices():
    theta = omega(128, 1e4)
    assert yarn_hf(theta, 40, 4096).attention_factor == pytest.approx(0.1 * math.log(40) + 1)
    mixed = yarn_hf(theta, 40, 4096, mscale=0.707, mscale_all_dim=1.0).attention_factor
    assert mixed == pytest.approx((0.0707 * math.log(40) + 1) / (0.1 * math.log(40) + 1))
    assert yarn_hf(theta, 40, 4096, attention_factor=1.25).attention_factor == 1.25
    assert yarn_hf(theta, 1, 4096).attention_factor == 1.0


@settings(max_examples=30, deadline=None)
@given(d=dims, b=bases, L=lengths, kappa=st.floats(1.0001, 64.0), seed=st.integers(0, 2**32 - 1))
def test_longrope_switches_on_the_sequence_length(d, b, L, kappa, seed):
    rng = np.random.default_rng(seed)
    theta = omega(d, b)
    short, long_ = 1 + rng.random(theta.size), 1 + 60 * rng.random(theta.size)  # (d/2,) each
    past = longrope(theta, kappa, L, short_factor=short, long_factor=long_)
    within = longrope(theta, 1.0, L, short_factor=short, long_factor=long_, factor=kappa)
    np.testing.assert_allclose(past.inv_freq, theta / long_, rtol=1e-15)
    np.testing.assert_allclose(within.inv_freq, theta / short, rtol=1e-15)
    # the attention factor follows the config's factor, not the switch
    expected = math.sqrt(1 + math.log(kappa) / math.log(L))
    assert past.attention_factor == pytest.approx(expected) and within.attention_factor == pytest.approx(expected)


def test_bad_options_raise_naming_the_value():
    theta = omega(16)
    with pytest.raises(PosKernelsError, match="0.5"):
        dynamic_ntk(theta, 2, 32, factor=0.5)
    with pytest.raises(PosKernelsError, match="high_freq_factor > low_freq_factor"):
        llama3(theta, 2, 32, low_freq_factor=4, high_freq_factor=1)
    with pytest.raises(PosKernelsError, match="beta_fast > beta_slow"):
        yarn_hf(theta, 2, 32, beta_fast=1, beta_slow=32)
    with pytest.raises(PosKernelsError, match="8 finite positive numbers"):
        longrope(theta, 2, 32, long_factor=[1.0, 2.0])
    with pytest.raises(PosKernelsError, match="geometric"):
        yarn_hf(np.array([1.0, 0.5, 0.1]), 2, 32)
