"""Theorem 5: wavelength census, rescalings, the interpolation bound, and Chen et al.'s constant."""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.extension import position_interpolation
from poskernels.theory.census import (
    chen_constant,
    chen_counterexample,
    chen_ratio,
    chen_stated_bound,
    full_turn_planes,
    interpolation_bound,
    interpolation_error,
    pi_mapped_offsets,
    rescaling_factors,
    sum_theta_sq,
    wavelength_census,
    wavelengths,
)

dims = st.integers(1, 256).map(lambda half: 2 * half)
bases = st.floats(1.5, 1e7)


# --------------------------------------------------------------------------------------------------
# snapshots: the article's printed values, at its precision
# --------------------------------------------------------------------------------------------------
def test_wavelengths_snapshot_article():
    # After Theorem 5: "At d = 16 and L = 32 the wavelengths are 6.3, 19.9, 62.8, 198.7, 628.3, 1987, 6283, and 19869,
    # so two planes of eight complete a turn."
    lam = wavelengths(16, 1e4)
    assert [round(x, 1) for x in lam[:5]] == [6.3, 19.9, 62.8, 198.7, 628.3]
    assert [round(x) for x in lam[5:]] == [1987, 6283, 19869]
    assert full_turn_planes(32, 16, 1e4).size == 2


def test_rescaling_factors_snapshot_article():
    # After Theorem 5: "At kappa = 4 its per-plane factors run 1, 0.820, 0.673, 0.552, 0.453, 0.371, 0.305, and 0.250.
    # YaRN ... its factors are 0.349, 0.265, then 0.25 in every other plane."
    ntk = rescaling_factors("ntk", 16, 1e4, kappa=4, L=32)
    assert [round(x, 3) for x in ntk] == [1.0, 0.820, 0.673, 0.552, 0.453, 0.371, 0.305, 0.250]
    yarn = rescaling_factors("yarn", 16, 1e4, kappa=4, L=32)
    assert [round(x, 3) for x in yarn[:2]] == [0.349, 0.265]
    assert [round(x, 2) for x in yarn[2:]] == [0.25] * 6


def test_chen_snapshot_article():
    # After Theorem 5: "It is 2.56 times too small at d = 16 and 1.15 times at d = 128. ... for h_j = 1 on [0, 1] at
    # Delta = 1/2, the interpolation error at d = 128 is 0.459, while the stated bound is 0.434 and the corrected one
    # is 0.500."
    assert round(chen_ratio(16, 1e4), 2) == 2.56
    assert round(chen_ratio(128, 1e4), 2) == 1.15
    c = chen_counterexample(128, 1e4)
    assert (round(c.error, 3), round(c.stated, 3), round(c.corrected, 3)) == (0.459, 0.434, 0.500)


def test_plane_2_and_3_wavelengths_in_the_rebound_discussion():
    # "planes 2 and 3, whose wavelengths, 62.8 and 198.7 ... three turns of plane 2 (188.5 positions)"
    lam = wavelengths(16)
    assert round(3 * lam[2], 1) == 188.5
    assert round(lam[2] / 2, 1) == 31.4


# --------------------------------------------------------------------------------------------------
# (i) census
# --------------------------------------------------------------------------------------------------
def _largest_circular_gap(angles: np.ndarray) -> float:
    a = np.sort(np.mod(angles, 2 * np.pi))
    return float(np.max(np.diff(np.append(a, a[0] + 2 * np.pi))))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 400), dims, bases)
def test_census_i_full_turn_means_the_circle_is_covered(L, d, b):
    theta = omega(d, b)
    rows = wavelength_census(L, d, b)
    full = set(full_turn_planes(L, d, b).tolist())
    assert {r.plane for r in rows if r.full_turn} == full
    for r in rows:
        angles = np.arange(L) * theta[r.plane]  # trained offsets 0..L-1
        gap = _largest_circular_gap(angles)
        if r.full_turn:
            assert gap <= theta[r.plane] * (1 + 1e-9)  # every direction within one step of a trained angle
        else:
            # the trained angles sit on the arc [0, (L-1) theta_j] without wrapping; the rest of the circle is unseen
            unseen = 2 * np.pi - (L - 1) * theta[r.plane]
            assert np.all(angles < 2 * np.pi)
            assert gap == pytest.approx(max(unseen, theta[r.plane]), rel=1e-9, abs=1e-12)
        assert r.turns == pytest.approx((L - 1) / r.wavelength)


# --------------------------------------------------------------------------------------------------
# (ii) PI, (iii) NTK
# --------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 500), st.integers(1, 16), dims)
def test_theorem5_ii_pi_maps_into_the_trained_range(L, kappa, d):
    x = pi_mapped_offsets(L, kappa)
    assert x.size == kappa * L
    assert x.min() == 0 and x.max() == pytest.approx(L - 1 / kappa, rel=1e-15)
    assert x.max() > L - 1 - 1e-12  # within one position of the trained range
    theta = omega(d)
    ext = position_interpolation(theta, kappa, L)
    Delta = np.arange(kappa * L)
    # integer offsets with PI's frequencies = mapped offsets with the trained ones
    assert np.allclose(Delta[:, None] * ext.inv_freq, x[:, None] * theta, rtol=1e-13, atol=1e-13)
    assert np.allclose(ext.inv_freq * kappa, theta)  # neighbors' angle shrinks kappa-fold in every plane


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 256).map(lambda h: 2 * h), bases, st.floats(1.0, 64.0))
def test_theorem5_iii_ntk_changes_the_base(d, b, kappa):
    f = rescaling_factors("ntk", d, b, kappa=kappa, L=32)
    assert f[0] == 1.0
    assert f[-1] * kappa == pytest.approx(1.0, rel=1e-12)
    new_base = b * kappa ** (d / (d - 2))  # Definition 5: b -> b kappa^(d/(d-2))
    assert np.allclose(f, omega(d, new_base) / omega(d, b), rtol=1e-11)


# --------------------------------------------------------------------------------------------------
# (iv) interpolation bound
# --------------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(dims, bases)
def test_sum_theta_sq_against_mpmath(d, b):
    with mpmath.workdps(40):
        direct = mpmath.fsum(mpmath.mpf(b) ** (mpmath.mpf(-4 * j) / d) for j in range(d // 2))
    assert sum_theta_sq(d, b) == pytest.approx(float(direct), rel=1e-13)
    assert sum_theta_sq(d, b) == pytest.approx(float((omega(d, b) ** 2).sum()), rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(
    P=st.integers(1, 64),
    D1=st.integers(-1000, 1000),
    width=st.integers(1, 40),
    u=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
    theta_max=st.floats(1e-3, 3.0),
)
def test_theorem5_iv_bound_on_random_instances(P, D1, width, u, seed, theta_max):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=P) + 1j * rng.normal(size=P)
    theta = rng.uniform(0, theta_max, size=P)
    D2 = D1 + width
    D = D1 + u * width
    err = interpolation_error(h, theta, D1, D2, D)
    scale = np.abs(h).sum()
    assert err <= interpolation_bound(h, theta, D1, D2, D) + 1e-9 * scale * (1 + abs(D1))


def test_theorem5_iv_is_tight_for_one_slow_plane():
    # a single slow plane: a'' ~ -theta^2 everywhere, so the error matches the bound to first order
    h, theta = np.array([1.0]), np.array([1e-3])
    ratio = interpolation_error(h, theta, 0, 1, 0.5) / interpolation_bound(h, theta, 0, 1, 0.5)
    assert 0.999 < ratio <= 1


def test_chen_counterexample_fails_the_stated_bound_up_to_d_128():
    # "Chen and colleagues' Theorem 2.1 is false as stated for head dimensions up to 128"
    for d in range(2, 130, 2):
        c = chen_counterexample(d, 1e4)
        assert c.stated < c.error <= c.corrected, d


def _chen_constant_by_tangent(d: int, b: float) -> mpmath.mpf:
    """Chen et al.'s step, redone in mpmath: replace ``b**x`` by its tangent at 0 (slope by mpmath.diff) at x = -4/d.

    The article: "Their proof bounds 1/(1 - b^{-4/d}) by d/(4 ln b) using c^x <= 1 + x ln c".
    """
    b = mpmath.mpf(b)
    slope = mpmath.diff(lambda x: mpmath.power(b, x), 0)  # ln b, numerically
    x = mpmath.mpf(-4) / d
    return 1 / (1 - (1 + x * slope))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200).map(lambda h: 2 * h), bases)
def test_chen_constant_is_too_small_by_convexity(d, b):
    # oracle: the constant is the tangent-line step of Chen et al.'s proof, and the ratio is the exact plane-by-plane
    # sum of theta_j^2 over it, both in mpmath
    with mpmath.workdps(30):
        stated = _chen_constant_by_tangent(d, b)
        exact = mpmath.fsum(mpmath.power(mpmath.mpf(b), -mpmath.mpf(4 * j) / d) for j in range(d // 2))  # theta_j^2
        assert chen_constant(d, b) == pytest.approx(float(stated), rel=1e-12)
        assert chen_ratio(d, b) == pytest.approx(float(exact / stated), rel=1e-12)
    # 1 - e^{-x} <= x, so 1/(1 - b^{-4/d}) >= d/(4 ln b); the numerator 1 - b^{-2} costs little
    assert 1 / -math.expm1(-4 * math.log(b) / d) >= chen_constant(d, b) * (1 - 1e-12)


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: wavelengths(15), "got 15"),
        (lambda: wavelengths(16, 1.0), "got 1.0"),
        (lambda: wavelengths(16, 0.5), "got 0.5"),
        (lambda: full_turn_planes(0, 16), "got 0"),
        (lambda: full_turn_planes(-32, 16), "got -32"),
        (lambda: wavelength_census(32, 7), "got 7"),
        (lambda: rescaling_factors("ntk", 16, kappa=0.5), "got 0.5"),
        (lambda: rescaling_factors("xpos?", 16), "unknown extension map 'xpos?'"),
        (lambda: rescaling_factors("yarn", 16, L=0), "got 0"),
        (lambda: pi_mapped_offsets(32, 0.9), "got 0.9"),
        (lambda: pi_mapped_offsets(3, 1.5), "got kappa = 1.5, L = 3"),
        (lambda: pi_mapped_offsets(-1, 2), "got -1"),
        (lambda: sum_theta_sq(9), "got 9"),
        (lambda: sum_theta_sq(16, -2.0), "got -2.0"),
        (lambda: chen_constant(16, 1), "got 1"),
        (lambda: chen_ratio(0), "got 0"),
        (lambda: chen_counterexample(13), "got 13"),
        (lambda: interpolation_bound([1.0], [1.0], 2, 1, 1.5), "got D1 = 2.0, D2 = 1.0"),
        (lambda: interpolation_bound([1.0], [1.0], 0, 1, 1.5), "got array(1.5)"),
        (lambda: interpolation_bound([1.0, 2.0], [1.0], 0, 1, 0.5), "got (2,)"),
        (lambda: interpolation_error([1.0], [1.0], 0, 1, -0.5), "got array(-0.5)"),
        (lambda: chen_stated_bound(-1.0, 16, 1e4, 0, 1, 0.5), "got -1.0"),
        (lambda: chen_stated_bound("a", 16, 1e4, 0, 1, 0.5), "got 'a'"),
        (lambda: chen_stated_bound(float("nan"), 16, 1e4, 0, 1, 0.5), "got nan"),
        (lambda: chen_stated_bound(float("inf"), 16, 1e4, 0, 1, 0.5), "got inf"),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    # the message quotes the bad value itself: "got 1", not a "1" that "> 1" or "got 1.0" also contains
    assert re.search(re.escape(quoted) + r"(?!\.?\w)", str(err.value)), str(err.value)
