"""Proposition 3 (RoPE is relative and isometric) and Theorem 4 (RoPE is the general linear relative encoding)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ortho_group

from poskernels.encodings import R_omega, apply_rope, omega, rotation
from poskernels.errors import PosKernelsError
from poskernels.theory.rope import (
    orthogonal_from_relative_family,
    plane_products,
    relative_encoding_normal_form,
    rope_offset_score,
    rope_score,
)

planes = st.integers(1, 32)
seeds = st.integers(0, 2**32 - 1)
positions = st.one_of(st.integers(-5000, 5000), st.floats(-5000, 5000))


# --------------------------------------------------------------------------------------------------
# Proposition 3
# --------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(planes, positions, positions, st.floats(2.0, 1e6), seeds)
def test_prop3_i_relativity(P, m, n, b, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 2 * P))
    theta = omega(2 * P, b)
    got = rope_score(q, k, m, n, theta)
    assert got == pytest.approx(rope_score(q, k, 0, n - m, theta), abs=1e-8 * (1 + abs(m) + abs(n)))
    # oracle: the block rotation matrix built plane by plane
    assert got == pytest.approx(q @ R_omega(n - m, theta) @ k, abs=1e-8 * (1 + abs(m) + abs(n)))


@settings(max_examples=30, deadline=None)
@given(planes, st.integers(1, 20), seeds)
def test_prop3_ii_isometry(P, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, n, 2 * P))  # (batch, n, d)
    pos = rng.uniform(-1e4, 1e4, size=n)
    y = apply_rope(x, pos, omega(2 * P))
    assert np.allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(planes, st.floats(2.0, 1e6), seeds)
def test_prop3_iii_trigonometric_polynomial(P, b, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 2 * P))
    theta = omega(2 * P, b)
    s = rope_offset_score(q, k, theta)
    qn = np.hypot(q[0::2], q[1::2])
    kn = np.hypot(k[0::2], k[1::2])
    assert np.allclose(s.rho, qn * kn)  # rho_j = |q_j| |k_j|
    assert np.all((s.phi > -np.pi) & (s.phi <= np.pi))
    # phi_j is the angle from q_j to k_j: rotating q_j by phi_j points it along k_j
    q_turned = np.einsum("jab,jb->ja", rotation(s.phi), q.reshape(P, 2))
    assert np.allclose(q_turned / qn[:, None], k.reshape(P, 2) / kn[:, None], atol=1e-9)
    Delta = rng.uniform(-3000, 3000, size=25)
    want = [rope_score(q, k, 0, D, theta) for D in Delta]  # against apply_rope
    assert np.allclose(s(Delta), want, atol=1e-9 * np.abs(s.rho).sum() * 3000)


def test_plane_products_real_part_is_the_score():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 10))
    h = plane_products(q, k)
    assert h.real.sum() == pytest.approx(q @ k)
    assert np.allclose(np.abs(h), np.hypot(q[0::2], q[1::2]) * np.hypot(k[0::2], k[1::2]))


# --------------------------------------------------------------------------------------------------
# Theorem 4
# --------------------------------------------------------------------------------------------------
def _explicit(rng, angles, p, p_neg):
    """Q (R(t_1) + ... + I_p + (-I_p')) Q^T with a random orthogonal Q: +-1 eigenvalues on purpose."""
    d = 2 * len(angles) + p + p_neg
    core = np.zeros((d, d))
    core[: 2 * len(angles), : 2 * len(angles)] = R_omega(1, np.asarray(angles, dtype=float))
    core[2 * len(angles) :, 2 * len(angles) :] = np.diag([1.0] * p + [-1.0] * p_neg)
    Q = ortho_group.rvs(d, random_state=rng) if d > 1 else np.array([[1.0]])
    return Q @ core @ Q.T


def _cases():
    rng = np.random.default_rng(2024)
    out = [ortho_group.rvs(d, random_state=rng) for d in (2, 3, 4, 5, 7, 8, 9, 16)]
    out += [
        _explicit(rng, [0.3, 2.9], 2, 1),  # odd d with both +1 and -1
        _explicit(rng, [1.0], 0, 3),
        _explicit(rng, [], 3, 2),  # only reflections and fixed directions
        _explicit(rng, [0.5, 0.5, 3.0], 1, 0),  # repeated angles
        np.eye(1),
        -np.eye(1),
        -np.eye(4),
        np.eye(5),
    ]
    return out


@pytest.mark.parametrize("U", _cases(), ids=lambda U: f"d{U.shape[0]}")
def test_theorem4_normal_form_reconstructs_powers(U):
    nf = relative_encoding_normal_form(U)
    d = U.shape[0]
    assert 2 * nf.angles.size + nf.p + nf.p_neg == d
    assert np.allclose(nf.Q.T @ nf.Q, np.eye(d), atol=1e-12)
    assert np.all((nf.angles > 0) & (nf.angles < np.pi))
    for m in range(-5, 6):
        assert np.allclose(nf.L(m), np.linalg.matrix_power(U, m), atol=1e-10)
    # the spectrum: e^{+-i theta}, +1 (p times), -1 (p' times), against numpy's eigenvalues
    ours = np.concatenate([np.exp(1j * nf.angles), np.exp(-1j * nf.angles), np.ones(nf.p), -np.ones(nf.p_neg)])
    theirs = np.linalg.eigvals(U)
    assert np.allclose(np.sort_complex(np.round(ours, 8)), np.sort_complex(np.round(theirs, 8)), atol=1e-7)


@pytest.mark.parametrize("angles, p, p_neg", [([0.3, 2.9], 2, 1), ([1.0], 0, 3), ([], 3, 2)])
def test_theorem4_block_sizes_of_explicit_matrices(angles, p, p_neg):
    nf = relative_encoding_normal_form(_explicit(np.random.default_rng(7), angles, p, p_neg))
    assert (nf.p, nf.p_neg) == (p, p_neg)
    assert np.allclose(np.sort(nf.angles), np.sort(angles))


@pytest.mark.parametrize("U", _cases()[:10], ids=lambda U: f"d{U.shape[0]}")
def test_theorem4_c_implies_a_scores_depend_only_on_the_offset(U):
    nf = relative_encoding_normal_form(U)
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=(2, U.shape[0]))
    for delta in range(-4, 5):
        scores = [(nf.L(m) @ q) @ (nf.L(m + delta) @ k) for m in range(-5, 6)]
        assert np.allclose(scores, scores[0], atol=1e-10)


@pytest.mark.parametrize("d", [2, 3, 6, 9])
def test_theorem4_a_implies_b(d):
    rng = np.random.default_rng(d)
    U = ortho_group.rvs(d, random_state=rng)
    family = np.stack([np.linalg.matrix_power(U, m) for m in range(7)])  # (7, d, d)
    got = orthogonal_from_relative_family(family)
    assert np.allclose(got.T @ got, np.eye(d), atol=1e-12)
    assert np.allclose(got, U)


def test_theorem4_non_relative_families_are_rejected():
    rng = np.random.default_rng(11)
    A = np.eye(4) + 0.1 * rng.normal(size=(4, 4))  # invertible, not orthogonal
    with pytest.raises(PosKernelsError, match="not relative"):
        orthogonal_from_relative_family(np.stack([np.linalg.matrix_power(A, m) for m in range(4)]))
    U = ortho_group.rvs(4, random_state=rng)
    family = np.stack([np.linalg.matrix_power(U, m) for m in range(5)])
    family[3] = family[3] @ R_omega(1, [0.01, 0.0])  # orthogonal, but breaks L_3 = U^3
    with pytest.raises(PosKernelsError, match="not relative"):
        orthogonal_from_relative_family(family)


def test_rope_itself_is_in_normal_form():
    # RoPE is the case Q = I, angles = theta, p = p' = 0
    theta = omega(8)
    nf = relative_encoding_normal_form(R_omega(1, theta))
    assert np.allclose(np.sort(nf.angles), np.sort(theta))
    assert (nf.p, nf.p_neg) == (0, 0)


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: rope_score(np.ones(5), np.ones(5), 0, 1, omega(4)), "got 5"),
        (lambda: rope_score(np.ones(4), np.ones(6), 0, 1, omega(4)), "got (4,) and (6,)"),
        (lambda: rope_score(np.ones(4), np.ones(4), 0, 1, omega(8)), "got (4,)"),
        (lambda: rope_offset_score(np.ones(4), np.ones(4), [1.0]), "got (1,)"),
        (lambda: plane_products(np.ones(3), np.ones(3)), "got 3"),
        # a matrix is quoted by how far it misses: 1.5 I has U^T U - I = 1.25 I
        (lambda: relative_encoding_normal_form(1.5 * np.eye(3)), "got max |U^T U - I| = 1.25"),
        (lambda: relative_encoding_normal_form(np.ones((2, 3))), "got shape (2, 3)"),
        (lambda: orthogonal_from_relative_family(np.eye(3)[None]), "got (1, 3, 3)"),
        (lambda: orthogonal_from_relative_family(np.stack([1.5 * np.eye(2), np.eye(2)])), "got max |L_0 - I| = 0.5"),
        (
            lambda: orthogonal_from_relative_family(np.stack([np.full((2, 2), np.nan), np.eye(2)])),
            "L must be finite numbers; got array",
        ),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    # the message quotes the bad value itself: "got 3", not a "3" that "(3,)" or "got 3.5" also contains
    assert re.search(re.escape(quoted) + r"(?!\.?\w)", str(err.value)), str(err.value)
