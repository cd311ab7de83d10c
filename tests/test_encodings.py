"""The codes of poskernels.encodings: properties, an independent RoPE in Hugging Face's layout, bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm

from poskernels.encodings import (
    SCHEMES,
    R_omega,
    alibi_bias,
    alibi_slopes,
    apply_rope,
    from_half_split,
    generator,
    get_scheme,
    omega,
    rotation,
    shaw_clip,
    sinusoidal_code,
    t5_bucket,
    to_half_split,
)
from poskernels.errors import PosKernelsError

dims = st.integers(1, 64).map(lambda half: 2 * half)
bases = st.floats(1.01, 1e7)
seeds = st.integers(0, 2**32 - 1)


@settings(max_examples=40, deadline=None)
@given(dims, bases)
def test_omega_is_geometric_from_one(d, b):
    w = omega(d, b)
    assert w.shape == (d // 2,)
    assert w[0] == 1.0
    assert np.allclose(w, [b ** (-2 * j / d) for j in range(d // 2)], rtol=1e-13)  # plain Python pow
    assert np.all(np.diff(w) < 0)


@settings(max_examples=40, deadline=None)
@given(dims, st.floats(-1e4, 1e4), st.floats(-1e4, 1e4))
def test_sinusoidal_code_shift_is_rotation_and_kernel_is_stationary(d, m, k):
    p = sinusoidal_code([m, m + k, 0.0, k], d)  # (4, d)
    assert np.allclose((p**2).sum(-1), d / 2)  # Proposition 2 (iii)
    tol = 1e-9 * (1 + abs(m) + abs(k))
    assert np.allclose(R_omega(k, omega(d)) @ p[0], p[1], atol=tol)  # Proposition 2: shift = rotation
    assert p[0] @ p[1] == pytest.approx(p[2] @ p[3], abs=tol * d)  # depends on the offset only
    # cosine first in each plane
    assert np.allclose(p[0, 0::2], np.cos(m * omega(d))) and np.allclose(p[0, 1::2], np.sin(m * omega(d)))


@settings(max_examples=40, deadline=None)
@given(st.floats(-100, 100), st.floats(-100, 100))
def test_rotation_is_a_group_of_orthogonal_matrices(a, b):
    Ra, Rb = rotation(a), rotation(b)
    assert np.allclose(Ra @ Ra.T, np.eye(2))
    assert np.linalg.det(Ra) == pytest.approx(1.0)
    assert np.allclose(Ra @ Rb, rotation(a + b), atol=1e-12)
    assert rotation([a, b]).shape == (2, 2, 2)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 16).map(lambda half: 2 * half), st.floats(-50, 50))
def test_generator_exponentiates_to_the_block_rotation(d, k):
    w = omega(d, 100.0)
    A = generator(w)
    assert np.allclose(A, -A.T)
    assert np.allclose(expm(k * A), R_omega(k, w), atol=1e-10)


def hf_rope(x_half: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Hugging Face transformers' apply_rotary_pos_emb with rotate_half (planes (j, j + d/2)), in NumPy."""
    freqs = positions[:, None] * inv_freq[None, :]  # (n, d/2)
    emb = np.concatenate([freqs, freqs], -1)  # (n, d)
    half = x_half.shape[-1] // 2
    rotated = np.concatenate([-x_half[..., half:], x_half[..., :half]], -1)  # rotate_half
    return x_half * np.cos(emb) + rotated * np.sin(emb)


@settings(max_examples=30, deadline=None)
@given(dims, st.integers(1, 12), seeds)
def test_apply_rope_agrees_with_hugging_face_after_reordering(d, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, n, d))  # (batch, n, d)
    pos = rng.uniform(0, 4096, size=n)
    theta = omega(d)
    ours = apply_rope(x, pos, theta)
    theirs = from_half_split(hf_rope(to_half_split(x), pos, theta))
    assert np.allclose(ours, theirs, atol=1e-12)
    # scores agree too (the reordering is a permutation applied to q and k alike)
    q, k = ours[0], ours[1]
    assert np.allclose(q @ k.T, to_half_split(q) @ to_half_split(k).T)


@settings(max_examples=30, deadline=None)
@given(dims, st.integers(1, 8), seeds, st.data())
def test_apply_rope_matches_block_matrix_and_partial_rotation(d, n, seed, data):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x0 = x.copy()
    pos = rng.integers(-1000, 1000, size=n)
    theta = omega(d)
    y = apply_rope(x, pos, theta)
    for i in range(n):
        assert np.allclose(y[i], R_omega(pos[i], theta) @ x[i], atol=1e-10)
    P = data.draw(st.integers(0, d // 2))
    z = apply_rope(x, pos, theta, rotated_planes=P)
    assert np.allclose(z[:, : 2 * P], y[:, : 2 * P])
    assert np.array_equal(z[:, 2 * P :], x[:, 2 * P :])  # I_p block: untouched
    assert np.array_equal(x, x0)  # input not modified in place


@settings(max_examples=20, deadline=None)
@given(dims)
def test_half_split_round_trip(d):
    x = np.arange(3 * d).reshape(3, d)
    assert np.array_equal(from_half_split(to_half_split(x)), x)
    assert np.array_equal(to_half_split(from_half_split(x)), x)
    assert np.array_equal(to_half_split(x)[..., : d // 2], x[..., 0::2])


def test_alibi_slopes_and_bias():
    s = alibi_slopes(8)
    assert s.tolist() == [2.0**-k for k in range(1, 9)]  # ALiBi's H = 8 slopes: 1/2 .. 1/256
    # ALiBi (Press et al. 2022, Section 3): 16 heads "interpolate those 8 slopes by geometrically averaging every
    # consecutive pair, resulting in the geometric sequence that starts at 1/2^0.5 and has the ratio of 1/2^0.5"
    s16 = alibi_slopes(16)
    assert np.allclose(s16[1::2], s)
    assert np.allclose(s16[2::2], np.sqrt(s[:-1] * s[1:]))
    assert np.allclose(s16**2, [2.0**-k for k in range(1, 17)])  # squares of 2^-0.5 * (2^-0.5)^k
    B = alibi_bias(6, 0.25)
    for t in range(6):
        for j in range(6):
            assert B[t, j] == (-0.25 * (t - j) if j <= t else -np.inf)


def test_shaw_clip():
    assert shaw_clip(np.arange(8), 3).tolist() == [0, 1, 2, 3, 3, 3, 3, 3]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_t5_bucket_is_monotone_in_the_causal_offset(r1, r2):
    lo, hi = sorted((r1, r2))
    b = t5_bucket(-np.array([lo, hi]))
    assert b[0] <= b[1] <= 31
    bb = t5_bucket(np.array([-hi, hi]), bidirectional=True)  # keys after the query use the upper half
    assert bb[0] < 16 and (bb[1] >= 16 or hi == 0)


def test_scheme_kernels_against_the_codes():
    r = np.arange(0, 300)
    theta = omega(16)
    ones = np.ones((1, 16))
    rope = [apply_rope(ones, [0], theta)[0] @ apply_rope(ones, [x], theta)[0] for x in r]
    assert np.allclose(SCHEMES["rope"].offset_kernel(r), rope)
    p = sinusoidal_code(r, 16)
    assert np.allclose(SCHEMES["sinusoidal"].offset_kernel(r), p[0] @ p.T)
    assert np.allclose(SCHEMES["alibi"].offset_kernel(r), alibi_bias(r.size, 0.5)[-1, ::-1])
    assert all(get_scheme(name).name == name for name in SCHEMES)
    # an absolute code, or FIRE's normaliser psi(max(L, t)), which reads the query's position
    # FIRE from either initial c; the sinusoidal code at random positions too
    absolute = {"sinusoidal", "learned", "fire", "fire_c1", "sinusoidal_randpos"}
    assert {name for name, s in SCHEMES.items() if not s.relative} == absolute


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: omega(15), "got 15"),
        (lambda: omega(0), "got 0"),
        (lambda: omega(True), "got True"),
        (lambda: omega(16, 1), "got 1"),
        (lambda: omega(16, 0.5), "got 0.5"),
        (lambda: omega(16, float("nan")), "got nan"),
        (lambda: sinusoidal_code([0, 1], 7), "got 7"),
        (lambda: apply_rope(np.ones(4), [0], omega(4)), "got shape (4,)"),
        (lambda: apply_rope(np.ones((2, 5)), [0, 1], omega(4)), "got 5"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1, 2], omega(4)), "got (3,)"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], omega(4), rotated_planes=3), "got 3"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], omega(4), rotated_planes=-1), "got -1"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], omega(4), rotated_planes=1.5), "got 1.5"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], [1.0, np.nan]), "got [1.0, nan]"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], [1.0, -0.5]), "got array([ 1. , -0.5])"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], [1.0, 0.0]), "got array([1., 0.])"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], np.ones((2, 2))), "got array([[1., 1.],"),
        (lambda: apply_rope(np.ones((2, 4)), [0, 1], []), "got array([], dtype=float64)"),
        (lambda: to_half_split(np.ones(5)), "got 5"),
        (lambda: from_half_split(np.ones((2, 3))), "got 3"),
        (lambda: alibi_slopes(0), "got 0"),
        (lambda: alibi_slopes(2.5), "got 2.5"),
        (lambda: alibi_bias(0, 0.5), "got 0"),
        (lambda: alibi_bias(4, -0.5), "got -0.5"),
        (lambda: alibi_bias(4, float("inf")), "got inf"),
        (lambda: t5_bucket(np.array([0.5]), 32, 128), "got dtype float64"),
        (lambda: t5_bucket(np.array([1]), 1, 128), "got 1"),
        (lambda: t5_bucket(np.array([1]), 3, 128, bidirectional=True), "got 3"),
        (lambda: t5_bucket(np.array([1]), 32, 16), "got 16"),
        (lambda: t5_bucket(np.array([1]), 32, -5), "got -5"),
        (lambda: shaw_clip([0, -1], 4), "got min -1"),
        (lambda: shaw_clip([0, 1], 0), "got 0"),
        (lambda: get_scheme("bogus"), "unknown scheme 'bogus'"),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    # the message quotes the bad value itself: "got 1", not a "1" that "> 1" or "got 1.0" also contains
    assert re.search(re.escape(quoted) + r"(?!\.?\w)", str(err.value)), str(err.value)


def test_a_clock_code_whose_angles_overflow_is_refused_not_nan():
    # m w past float64's largest number has no cosine: a clear refusal that quotes the values, never NaN
    from poskernels.encodings import clock_code
    from poskernels.errors import PosKernelsError

    with pytest.raises(PosKernelsError, match=r"overflow float64 \(largest \|m\| 1e\+308"):
        clock_code(1e308, [10.0])
    assert np.isfinite(clock_code(1e307, [10.0])).all()  # just below: a number
