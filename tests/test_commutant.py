"""Theorem 2: the commutant of R_omega(1), the relativity defect, and the code matrix's conditioning.

Properties of the equivalences (a) <=> (a') <=> (b) <=> (c) on random frequencies and matrices; the
Beta law of a random matrix's relative share (Monte Carlo and a Kolmogorov-Smirnov test); exact condition
numbers against a 300-digit SVD of P built entry by entry.  The article's printed values are checked once,
in tests/test_page_order_clocks.py.
"""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import null_space
from scipy.stats import beta, kstest

from poskernels.encodings import R_omega, omega
from poskernels.errors import PosKernelsError
from poskernels.theory.commutant import (
    clock_code,
    commutant_coefficients,
    commutant_matrix,
    commutant_projection,
    condition_number_exact,
    condition_number_float64,
    expected_random_defect,
    numerical_rank,
    relative_score,
    relativity_defect,
    shift_commutator_map,
    singular_values_exact,
    window_map,
)

FAST = settings(max_examples=20, deadline=None)
seeds = st.integers(0, 2**32 - 1)
halves = st.integers(1, 5)  # d/2


def _random_instance(seed: int, h: int):
    """Distinct random frequencies in (0, pi), at least 0.15 apart, and a Gaussian score matrix, d = 2h."""
    rng = np.random.default_rng(seed)
    w = 0.05 + np.cumsum(rng.uniform(0.15, (np.pi - 0.2) / h, size=h))  # (h,) increasing, inside (0.2, pi - 0.15)
    return w, rng.normal(size=(2 * h, 2 * h)), rng


# --------------------------------------------------------------------------- Pi is the orthogonal projection onto (c)


@FAST
@given(seeds, halves)
def test_projection_is_orthogonal_and_idempotent(seed, h):
    _, M, rng = _random_instance(seed, h)
    PM = commutant_projection(M)
    assert np.allclose(commutant_projection(PM), PM)
    N = commutant_matrix(rng.normal(size=h), rng.normal(size=h))  # any member of the commutant
    assert np.sum((M - PM) * N) == pytest.approx(0.0, abs=1e-10)  # residual is orthogonal to the subspace
    assert relativity_defect(M) ** 2 + np.sum(PM**2) / np.sum(M**2) == pytest.approx(1.0)


@FAST
@given(seeds, halves)
def test_c_implies_b_projection_commutes_with_the_shift(seed, h):
    # Theorem 2 (c) => (b)
    w, M, _ = _random_instance(seed, h)
    R = R_omega(1, w)
    PM = commutant_projection(M)
    assert np.allclose(PM @ R, R @ PM, atol=1e-12)
    assert not np.allclose(M @ R, R @ M, atol=1e-3)  # a random M does not commute


@FAST
@given(seeds, halves, st.integers(-(10**4), 10**4), st.integers(-(10**4), 10**4), st.integers(-500, 500))
def test_c_implies_a_score_is_a_trigonometric_polynomial_of_the_offset(seed, h, m, n, shift):
    # Theorem 2 (c) => (a), with the score formula sum_j (a_j cos(D w_j) - c_j sin(D w_j))
    w, M, _ = _random_instance(seed, h)
    PM = commutant_projection(M)
    a, c = commutant_coefficients(M)
    g = clock_code(m, w) @ PM @ clock_code(n, w)
    g_shifted = clock_code(m + shift, w) @ PM @ clock_code(n + shift, w)
    assert g == pytest.approx(g_shifted, abs=1e-8)
    assert g == pytest.approx(float(relative_score(a, c, n - m, w)), abs=1e-8)


@FAST
@given(seeds, halves)
def test_a_random_matrix_is_not_relative(seed, h):
    w, M, rng = _random_instance(seed, h)
    m = rng.integers(-50, 50, size=40)
    n = rng.integers(-50, 50, size=40)
    g = np.einsum("ka,ab,kb->k", clock_code(m, w), M, clock_code(n, w))  # (40,)
    g1 = np.einsum("ka,ab,kb->k", clock_code(m + 1, w), M, clock_code(n + 1, w))  # (40,)
    assert np.max(np.abs(g1 - g)) > 1e-3
    assert relativity_defect(M) > 0.05


@FAST
@given(seeds, halves)
def test_b_commutant_has_dimension_d_and_is_block_rotation_scaling(seed, h):
    # Theorem 2 (b) <=> (c): null space of M -> R^T M R - M is d-dimensional and every member is Pi-fixed
    w, _, _ = _random_instance(seed, h)
    d = 2 * h
    N = null_space(shift_commutator_map(w), rcond=1e-9)  # (d^2, dim)
    assert N.shape[1] == d
    for v in N.T:
        M = v.reshape(d, d)
        assert np.allclose(commutant_projection(M), M, atol=1e-9)


@FAST
@given(seeds, halves, st.integers(-1000, 1000))
def test_a_prime_a_window_of_d_plus_1_positions_decides(seed, h, start):
    # Theorem 2 (a') <=> (b): relativity on one window of d + 1 consecutive positions forces the commutant,
    # because the codes of any d consecutive positions span R^d (a Vandermonde argument)
    w, _, _ = _random_instance(seed, h)
    d = 2 * h
    assert np.linalg.matrix_rank(clock_code(start + np.arange(d), w)) == d
    N = null_space(window_map(w, start), rcond=1e-9)  # (d^2, dim)
    assert N.shape[1] == d
    for v in N.T:
        M = v.reshape(d, d)
        assert np.allclose(commutant_projection(M), M, atol=1e-8)


def test_window_of_the_article_code_also_decides_at_small_d():
    # the geometric clocks of Definition 2 at d = 4, b = 10 are distinct and in (0, pi)
    N = null_space(window_map(omega(4, 10.0)), rcond=1e-9)
    assert N.shape[1] == 4


# --------------------------------------------------------------------------- the random defect


def test_random_defect_mean_square_is_one_minus_one_over_d():
    # E delta^2 = 1 - 1/d, by Monte Carlo over Gaussian matrices at d = 16
    d, samples = 16, 4000
    M = np.random.default_rng(1).normal(size=(samples, d, d))  # (samples, d, d)
    d2 = relativity_defect(M) ** 2  # (samples,)
    assert abs(d2.mean() - expected_random_defect(d) ** 2) < 5 * d2.std() / np.sqrt(samples)
    # the article: "at d = 16 a random matrix has delta ~ 0.968"
    assert round(expected_random_defect(d), 3) == 0.968


@pytest.mark.parametrize("d", [2, 8])
def test_relative_share_is_beta_distributed(d):
    # ||Pi M||^2 / ||M||^2 ~ Beta(d/2, (d^2 - d)/2): d of the d^2 Gaussian directions lie in the commutant
    M = np.random.default_rng(d).normal(size=(3000, d, d))
    share = 1 - relativity_defect(M) ** 2
    assert kstest(share, beta(d / 2, (d * d - d) / 2).cdf).pvalue > 1e-3


# --------------------------------------------------------------------------- conditioning of the code matrix


def _condition_number_direct(W: int, d: int, digits: int) -> float:
    """Build P entry by entry in mpmath and take its SVD (no closed forms)."""
    with mpmath.workdps(digits):
        w = [mpmath.mpf(10) ** (-mpmath.mpf(8 * j) / d) for j in range(d // 2)]  # b = 10^4
        P = mpmath.matrix(W, d)
        for m in range(W):
            for j, wj in enumerate(w):
                P[m, 2 * j], P[m, 2 * j + 1] = mpmath.cos(m * wj), mpmath.sin(m * wj)
        s = mpmath.svd_r(P, compute_uv=False)
        return float(max(s) / min(s))


@pytest.mark.parametrize(("W", "d"), [(16, 16), (20, 8), (40, 16)])
def test_exact_condition_number_against_a_300_digit_svd(W, d):
    assert condition_number_exact(W, d) == pytest.approx(_condition_number_direct(W, d, 300), rel=1e-12)


@pytest.mark.parametrize("W", [16, 64])
def test_float64_cannot_resolve_short_windows(W):
    # the double-precision attempt is off by an order of magnitude or more where the exact value passes 1e17
    exact, attempt = condition_number_exact(W), condition_number_float64(W)
    assert exact > 1e18
    assert not 0.2 < attempt / exact < 5


def test_float64_agrees_on_a_long_window():
    assert condition_number_float64(4096) == pytest.approx(condition_number_exact(4096), rel=1e-9)


def test_numerical_rank_counts_the_exact_singular_values_above_numpy_tolerance():
    # matrix_rank keeps singular values above s_max * max(W, d) * eps; the exact ones say how many that is
    W, d = 64, 16
    s = singular_values_exact(W, d)
    assert numerical_rank(W, d) == int(np.sum(s > s[0] * W * np.finfo(float).eps))
    assert numerical_rank(4096, d) == d


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: commutant_projection(np.ones((3, 3))), "got 3"),
        (lambda: commutant_projection(np.ones((2, 4))), "got shape (2, 4)"),
        (lambda: relativity_defect(np.zeros((4, 4))), "got a zero matrix"),
        (lambda: expected_random_defect(15), "got 15"),
        (lambda: shift_commutator_map([0.5, 0.5]), "got array([0.5, 0.5])"),
        (lambda: shift_commutator_map([0.5, 4.0]), "got array([0.5, 4. ])"),
        (lambda: window_map([0.0, 1.0]), "got array([0., 1.])"),
        (lambda: numerical_rank(0), "got 0"),
        (lambda: condition_number_exact(8, 16), "got 8"),
        (lambda: condition_number_exact(-64), "got -64"),
        (lambda: condition_number_exact(64, 15), "got 15"),
        (lambda: condition_number_exact(64, 16, 1.0), "got 1.0"),
        (lambda: condition_number_float64(64, 16, 0.5), "got 0.5"),
        (lambda: condition_number_exact(64, 16, 1e4, digits=0), "got 0"),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    # the message quotes the bad value itself: "got 1", not a "1" that "> 1" or "got 1.0" also contains
    assert re.search(re.escape(quoted) + r"(?!\.?\w)", str(err.value)), str(err.value)
