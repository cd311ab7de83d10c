"""Proposition 4 (what long-term decay means): envelope, bound, and the Monte Carlo facts."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.stats import ks_2samp

from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.theory.decay import (
    counterexample_scores,
    counterexample_variance,
    decay_bound,
    decay_envelope,
    envelope_octave_means,
    matched_scores,
    offset_score_complex,
    unmatched_scores,
)
from poskernels.theory.rope import plane_products, rope_score
from quoting import assert_quotes


def test_envelope_against_loops():
    theta = omega(12, 500.0)
    for Delta in (0.0, 1.0, 3.5, 77.0, -20.0):
        want = sum(abs(sum(cmath.exp(1j * Delta * theta[l]) for l in range(j))) for j in range(1, theta.size + 1))
        assert decay_envelope(Delta, theta) == pytest.approx(want, rel=1e-12)


def test_envelope_octave_means_snapshot_article():
    # Article after Proposition 4: "At d = 128 its mean over each octave of Delta falls from 2018 at Delta = 1 to 312
    # over offsets 2048 to 4095, or from 31.5 to 4.9 per plane."
    means = envelope_octave_means(d=128, b=1e4, max_octave_start=2048)
    assert list(means) == [2**k for k in range(12)]
    assert round(means[1]) == 2018
    assert round(means[2048]) == 312
    assert round(means[1] / 64, 1) == 31.5
    assert round(means[2048] / 64, 1) == 4.9


def test_envelope_falls_on_average_but_not_monotonically():
    # "falls with distance on average ... though not monotonically within an octave"
    means = list(envelope_octave_means(d=128).values())
    assert all(a > b for a, b in zip(means, means[1:]))
    env = decay_envelope(np.arange(1024, 2048), omega(128))
    steps = np.diff(env)
    assert (steps > 0).any() and (steps < 0).any()


def test_octave_means_are_means_over_the_octave():
    theta = omega(16)
    means = envelope_octave_means(d=16, max_octave_start=8)
    for start, mean in means.items():
        assert mean == pytest.approx(np.mean([decay_envelope(D, theta) for D in range(start, 2 * start)]))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64), st.floats(-1e4, 1e4), st.integers(0, 2**32 - 1), st.booleans())
def test_prop4_i_summation_by_parts_bound(P, Delta, seed, article_theta):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=P) + 1j * rng.normal(size=P)  # (P,)
    theta = omega(2 * P) if article_theta else np.sort(rng.uniform(0, 2, size=P))[::-1]
    total = offset_score_complex(h, Delta, theta)
    # the proof's identity: sum_j h_j (S_{j+1} - S_j) = -sum_j S_{j+1} (h_{j+1} - h_j)
    S_next = np.cumsum(np.exp(1j * Delta * theta))  # (P,) S_1 .. S_P
    by_parts = -(S_next * np.diff(np.append(h, 0))).sum()
    assert total == pytest.approx(by_parts, abs=1e-9 * P * np.abs(h).sum())
    assert abs(total) <= decay_bound(h, Delta, theta) * (1 + 1e-12) + 1e-12


def test_offset_score_complex_real_part_is_rope_score():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(2, 16))
    theta = omega(16)
    h = plane_products(q, k)
    for Delta in (0, 1, 13, 250.5):
        assert offset_score_complex(h, Delta, theta).real == pytest.approx(rope_score(q, k, 0, Delta, theta))


def test_prop4_ii_matched_key_decays_as_the_kernel():
    rng = np.random.default_rng(0)
    theta = omega(16)
    sigma = 1.3
    Delta = np.array([0, 1, 7, 40, 300, 5000])
    x = matched_scores(Delta, theta, sigma, 40_000, rng)  # (N, 6)
    kappa_d = np.cos(Delta[:, None] * theta).sum(-1)  # kappa_d(Delta) = sum_j cos(Delta theta_j), inline
    stderr = x.std(0) / math.sqrt(x.shape[0])
    assert np.all(np.abs(x.mean(0) - sigma**2 * kappa_d) < 5 * stderr)


def test_prop4_iii_unrelated_key_does_not_decay():
    rng = np.random.default_rng(1)
    theta = omega(8)
    base = unmatched_scores(0.0, theta, 4000, rng)
    for Delta in (1.0, 37.0, 1000.0):
        assert ks_2samp(base, unmatched_scores(Delta, theta, 4000, rng)).pvalue > 1e-3


def test_prop4_iii_needs_independent_planes():
    rng = np.random.default_rng(2)
    theta = omega(4)
    Deltas = [0.0, 1.0, 2.0, 3.0, 5.0, 10.0]
    samples = {D: counterexample_scores(D, theta, 40_000, rng) for D in Deltas}
    for D, x in samples.items():
        centred_sq = (x - x.mean()) ** 2
        stderr = centred_sq.std() / math.sqrt(x.size)
        assert abs(x.var() - counterexample_variance(D, theta)) < 5 * stderr + 1e-3
    # the law does change with the offset: variance 2 at Delta = 0, about 0.015 at Delta = 3
    assert counterexample_variance(0.0, theta) - counterexample_variance(3.0, theta) > 1.9
    assert ks_2samp(samples[0.0], samples[3.0]).pvalue < 1e-10


@pytest.mark.parametrize("Delta", [0.0, 0.7, 3.0, 12.0])
def test_counterexample_variance_by_quadrature(Delta):
    # E over beta of (cos(beta + Delta theta_0) + cos(beta + Delta theta_1))^2; the mean is 0
    th = omega(4)
    val, _ = quad(lambda b: (math.cos(b + Delta * th[0]) + math.cos(b + Delta * th[1])) ** 2, 0, 2 * math.pi)
    assert val / (2 * math.pi) == pytest.approx(float(counterexample_variance(Delta, th)), abs=1e-10)


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: envelope_octave_means(d=127), "127"),
        (lambda: envelope_octave_means(b=1.0), "1.0"),
        (lambda: envelope_octave_means(max_octave_start=100), "100"),
        (lambda: envelope_octave_means(max_octave_start=0), "0"),
        (lambda: decay_envelope(1.0, []), "(0,)"),
        (lambda: offset_score_complex([1, 2], 1.0, [1.0]), "(2,)"),
        (lambda: decay_bound(np.ones(3), 1.0, omega(16)), "got (3,) and (8,)"),
        (lambda: decay_bound(np.ones((2, 8)), 1.0, omega(16)), "got (2, 8) and (8,)"),
        (lambda: decay_bound([], 1.0, []), "got shape (0,)"),
        (lambda: matched_scores([0], omega(4), -1.0, 10, np.random.default_rng(0)), "-1.0"),
        (lambda: matched_scores([0], omega(4), 1.0, 0, np.random.default_rng(0)), "0"),
        (lambda: unmatched_scores(0.0, omega(4), -5, np.random.default_rng(0)), "-5"),
        (lambda: counterexample_scores(0.0, omega(8), 10, np.random.default_rng(0)), "(4,)"),
        (lambda: counterexample_variance(0.0, omega(8)), "(4,)"),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    assert_quotes(str(err.value), quoted)
