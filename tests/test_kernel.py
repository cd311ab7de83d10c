"""Proposition 2 (shift is a rotation) and Theorem 1 (stationary kernel, cosine-integral limit, ruler).

Property tests on random instances (hypothesis), oracles against mpmath quadrature and SciPy's cosine
distance.  The article's kernel table and column cosines are checked once, in tests/test_page_order_clocks.py.
"""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist

from poskernels.encodings import R_omega, omega, sinusoidal_code
from poskernels.errors import PosKernelsError
from poskernels.theory.kernel import (
    I_b,
    code_matrix,
    frequency_atoms,
    gram_matrix,
    kappa_d,
    max_column_cosine,
    min_code_distance,
    normalized_kernel,
    octave_cost,
    ruler,
    ruler_error_bound,
    shift_code,
)

dims = st.integers(1, 32).map(lambda h: 2 * h)
bases = st.floats(1.5, 1e6)
ints = st.integers(-5000, 5000)
FAST = settings(max_examples=30, deadline=None)

# --------------------------------------------------------------------------- Proposition 2


@FAST
@given(ints, ints, dims, bases)
def test_shift_is_a_rotation(m, k, d, b):
    # Proposition 2 (i): p(m + k) = R_omega(k) p(m)
    p = sinusoidal_code(m, d, b)
    want = sinusoidal_code(m + k, d, b)
    assert np.allclose(shift_code(p, k, d, b), want, atol=1e-9)
    assert np.allclose(R_omega(k, omega(d, b)) @ p, want, atol=1e-9)


@FAST
@given(ints, ints, dims, bases)
def test_rotations_form_a_homomorphism_into_SO_d(k, l, d, b):
    # Proposition 2 (ii): R(k) R(l) = R(k + l), R(k)^T = R(-k), det R(k) = 1
    w = omega(d, b)
    Rk, Rl = R_omega(k, w), R_omega(l, w)
    assert np.allclose(Rk @ Rl, R_omega(k + l, w), atol=1e-9)
    assert np.allclose(Rk.T, R_omega(-k, w), atol=1e-12)
    assert np.allclose(Rk.T @ Rk, np.eye(d), atol=1e-12)
    assert np.linalg.det(Rk) == pytest.approx(1.0, abs=1e-9)


@FAST
@given(st.lists(ints, min_size=1, max_size=20), dims, bases)
def test_every_position_lies_on_one_sphere(m, d, b):
    # Proposition 2 (iii): ||p(m)||^2 = d/2
    assert np.allclose((sinusoidal_code(m, d, b) ** 2).sum(-1), d / 2, rtol=1e-13)


@FAST
@given(st.integers(2, 300), dims, bases)
def test_code_is_injective_on_a_window(W, d, b):
    # Proposition 2 (iv), and the distance identity against all pairwise distances
    P = code_matrix(W, d, b)  # (W, d)
    brute = pdist(P).min()
    assert min_code_distance(W, d, b) == pytest.approx(brute, rel=1e-6, abs=1e-7)
    # plane 0 alone keeps p(m) and p(m + Delta) at squared distance >= 2 - 2 cos(Delta) > 0 (pi is irrational)
    plane0 = np.sqrt((2 - 2 * np.cos(np.arange(1, W))).min())
    assert min_code_distance(W, d, b) >= plane0 - 1e-9 > 0


# --------------------------------------------------------------------------- Theorem 1 (i)


@FAST
@given(ints, ints, dims, bases)
def test_inner_product_is_the_stationary_kernel(m, n, d, b):
    # Theorem 1 (i): <p(m), p(n)> = kappa_d(n - m)
    assert sinusoidal_code(m, d, b) @ sinusoidal_code(n, d, b) == pytest.approx(
        float(kappa_d(n - m, d, b)), abs=1e-9 * d
    )


@FAST
@given(st.integers(0, 10**6), dims, bases)
def test_gram_matrix_is_psd_and_equals_P_PT(seed, d, b):
    positions = np.random.default_rng(seed).uniform(-500, 500, size=12)  # (12,) arbitrary reals
    G = gram_matrix(positions, d, b)  # (12, 12)
    P = sinusoidal_code(positions, d, b)  # (12, d)
    assert np.allclose(G, P @ P.T, atol=1e-9 * d)
    assert np.linalg.eigvalsh(G).min() >= -1e-9 * d


@FAST
@given(st.integers(-1000, 1000), st.floats(0.1, 50), dims, bases)
def test_gram_matrix_is_toeplitz_over_evenly_spaced_positions(start, step, d, b):
    G = gram_matrix(start + step * np.arange(10), d, b)  # (10, 10)
    for k in range(-9, 10):
        diag = np.diagonal(G, k)
        assert np.allclose(diag, diag[0], atol=1e-9 * d)


@FAST
@given(st.floats(-1e4, 1e4), dims, bases)
def test_normalized_kernel_is_a_characteristic_function(delta, d, b):
    # Theorem 1 (i): (2/d) kappa_d(Delta) = E exp(i Delta Omega_d), Omega_d uniform on the d atoms +-omega_j
    phi = np.mean(np.exp(1j * delta * frequency_atoms(d, b)))
    assert abs(phi.imag) < 1e-12
    assert phi.real == pytest.approx(float(normalized_kernel(delta, d, b)), abs=1e-12)


# --------------------------------------------------------------------------- Theorem 1 (ii)


@pytest.mark.parametrize(
    ("delta", "b"), [(1e-7, 1e4), (0.25, 1e4), (1, 1e4), (-4, 1e4), (64, 1e4), (1024, 1e4), (7.5, 10.0), (300, 5e5)]
)
def test_cosine_integral_limit_against_quadrature(delta, b):
    # oracle: I_b(Delta) = int_0^1 cos(Delta b^-u) du, by mpmath quadrature, one subinterval per few radians
    with mpmath.workdps(20):
        pieces = mpmath.linspace(0, 1, 4 + int(abs(delta)) // 4)
        want = mpmath.quad(lambda u: mpmath.cos(delta * mpmath.mpf(b) ** (-u)), pieces)
    assert float(I_b(delta, b)) == pytest.approx(float(want), abs=1e-13)


@FAST
@given(st.floats(-5000, 5000), st.integers(1, 2000).map(lambda h: 2 * h), bases)
def test_riemann_sum_converges_to_the_limit(delta, d, b):
    # (2/d) kappa_d is a left Riemann sum of u -> cos(Delta b^-u) on the grid 2j/d; the integrand's total
    # variation on [0, 1] is at most |Delta| (1 - 1/b), so the error is at most that times the step 2/d
    err = abs(float(normalized_kernel(delta, d, b) - I_b(delta, b)))
    assert err <= abs(delta) * (1 - 1 / b) * 2 / d + 1e-12


def test_convergence_is_not_uniform_in_delta():
    # the article's remark: at Delta = 256, d = 512 is farther from the limit than d = 64
    lim = I_b(256)
    assert abs(normalized_kernel(256, 512) - lim) > abs(normalized_kernel(256, 64) - lim)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-3, 1e7), st.floats(1.01, 1e8))
def test_ruler_error_bound_holds(delta, b):
    # Theorem 1 (ii): |I_b - (1 - (gamma + ln|Delta|)/ln b)| <= (2/|Delta| + Delta^2/(4 b^2))/ln b
    gap = abs(float(I_b(delta, b) - ruler(delta, b)))
    assert gap <= float(ruler_error_bound(delta, b)) * (1 + 1e-9) + 1e-13


@FAST
@given(st.floats(1e-3, 1e6), bases)
def test_each_octave_costs_ln2_over_lnb(delta, b):
    assert float(ruler(delta, b) - ruler(2 * delta, b)) == pytest.approx(octave_cost(b), rel=1e-9)


# --------------------------------------------------------------------------- columns of P


@pytest.mark.parametrize(("W", "d", "b"), [(2, 4, 100.0), (64, 16, 1e4), (500, 8, 1e4), (4096, 16, 1e4)])
def test_max_column_cosine_against_scipy(W, d, b):
    P = code_matrix(W, d, b)  # (W, d)
    want = np.max(np.abs(1 - pdist(P.T, "cosine")))
    assert max_column_cosine(W, d, b) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: kappa_d(3, 15), "got 15"),
        (lambda: kappa_d(3, 0), "got 0"),
        (lambda: kappa_d(3, 16, 1.0), "got 1.0"),
        (lambda: kappa_d(3, 16, 0.5), "got 0.5"),
        (lambda: kappa_d(np.nan, 16), "got nan"),
        (lambda: I_b(3, 1.0), "got 1.0"),
        (lambda: ruler(0), "got 0"),
        (lambda: ruler([1, 0, 2]), "got [1, 0, 2]"),
        (lambda: ruler_error_bound(0), "got 0"),
        (lambda: octave_cost(-2), "got -2"),
        (lambda: code_matrix(0, 16), "got 0"),
        (lambda: code_matrix(-3, 16), "got -3"),
        (lambda: max_column_cosine(1), "got 1"),
        (lambda: min_code_distance(1, 16), "got 1"),
        (lambda: shift_code(np.ones(6), 1, 8), "got shape (6,)"),
        (lambda: gram_matrix(np.ones((2, 2)), 8), "got shape (2, 2)"),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    # the message quotes the bad value itself: "got 1", not a "1" that "> 1" or "got 1.0" also contains
    assert re.search(re.escape(quoted) + r"(?!\.?\w)", str(err.value)), str(err.value)
