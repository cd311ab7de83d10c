"""theory.empirical against closed forms: the Toeplitz defect (0 for the sinusoidal code and any function of the
offset), the kernel by offset and its plane split on a planted rotary head (Proposition 3 (iii))."""

import numpy as np
import pytest

from poskernels.encodings import omega, rotate, sinusoidal_code
from poskernels.errors import PosKernelsError
from poskernels.theory import empirical as E
from poskernels.theory.rope import plane_products


def test_toeplitz_defect_is_zero_for_stationary_kernels_and_not_for_random_tables():
    P = sinusoidal_code(np.arange(200), 32)
    assert E.toeplitz_defect(P @ P.T) < 1e-20
    r = np.subtract.outer(np.arange(50), np.arange(50))
    assert E.toeplitz_defect(np.exp(-np.abs(r) / 7.0)) < 1e-28
    rng = np.random.default_rng(0)
    d = E.random_defects(200, 32, 1.0, rng, draws=8)
    assert (d > 0.5).all()
    # a random bilinear form between sinusoidal codes is far from stationary; one that commutes with the planes is not
    W = rng.standard_normal((32, 32))
    assert E.toeplitz_defect(P @ W @ P.T) > 0.3
    commuting = np.kron(np.diag(rng.standard_normal(16)), np.eye(2))
    assert E.toeplitz_defect(P @ commuting @ P.T) < 1e-20


def test_diagonal_means_is_the_least_squares_function_of_the_offset():
    G = np.random.default_rng(1).standard_normal((5, 5))
    T = E.diagonal_means(G)
    for r in range(-4, 5):
        assert np.allclose(np.diagonal(T, -r), np.diagonal(G, -r).mean())


@pytest.mark.parametrize("d, base", [(16, 10_000.0), (64, 1e5)])
def test_planted_rope_head_kernel_and_plane_split_equal_the_closed_form(d, base):
    rng = np.random.default_rng(d)
    theta = omega(d, base)
    qt, kt = rng.standard_normal(d), rng.standard_normal(d)
    T = 96
    pos = np.arange(T)
    q = rotate(np.broadcast_to(qt, (T, d)), pos[:, None] * theta)
    k = rotate(np.broadcast_to(kt, (T, d)), pos[:, None] * theta)
    sample = np.sort(rng.choice(T, 40, replace=False))
    planes = E.plane_kernels(q[sample], k, sample, pos, T - 1)
    r = np.arange(T)
    h = plane_products(qt, kt)  # conj(q~_p) k~_p
    closed = np.real(h[:, None] * np.exp(-1j * np.outer(theta, r)))  # Re(h_p e^{-i r theta_p})
    reached = r <= sample.max()
    assert np.allclose(planes[:, reached], closed[:, reached], atol=1e-12)
    mean, err = E.kernel_by_offset(q[sample] @ k.T, sample, pos, T - 1)
    assert np.allclose(mean[reached], closed.sum(0)[reached], atol=1e-12)
    assert np.allclose(err[reached], 0, atol=1e-10)  # every pair at one offset has one score
    assert np.isnan(mean[~reached]).all()


def test_energies_and_attention_shares():
    x = np.zeros((3, 4))
    x[:, 0], x[:, 3] = 3.0, 4.0
    assert E.plane_energies(x).tolist() == [3.0, 4.0]
    T = 6
    w = np.tril(np.ones((T, T)))
    w /= w.sum(1, keepdims=True)
    pos = np.arange(T)
    assert np.isclose(E.first_token_share(w, pos), np.mean(1 / np.arange(2, T + 1)))
    assert np.isclose(E.previous_token_share(w, pos), np.mean(1 / np.arange(2, T + 1)))
    m = np.arange(64)
    spectrum = E.table_spectrum(np.stack([np.cos(2 * np.pi * 5 * m / 64), np.sin(2 * np.pi * 5 * m / 64)], 1))
    assert spectrum.argmax() == 5 and np.isclose(spectrum[5], 1.0) and np.isclose(spectrum.sum(), 1.0)


def test_bad_arrays_are_refused():
    with pytest.raises(PosKernelsError, match="nonempty matrix"):
        E.toeplitz_defect(np.ones(3))
    with pytest.raises(PosKernelsError, match="zero"):
        E.toeplitz_defect(np.zeros((2, 2)))
    with pytest.raises(PosKernelsError, match="scores must end with shape"):
        E.kernel_by_offset(np.ones((2, 3)), [0, 1], [0, 1], 1)


@pytest.mark.parametrize("heads, S, T, d", [(1, 1, 5, 2), (3, 40, 96, 16), (2, 7, 300, 64)])
def test_the_fft_plane_split_is_the_direct_one(heads, S, T, d):
    # the probe's engine (a cross-correlation by FFT, every head at once) against the readable definition
    rng = np.random.default_rng(T)
    q, k = rng.standard_normal((heads, S, d)) * 30, rng.standard_normal((heads, T, d))
    sample = np.sort(rng.choice(T, S, replace=False))
    fast = E.plane_kernels_causal(q, k, sample)
    assert fast.shape == (heads, d // 2, T)
    for h in range(heads):
        direct = E.plane_kernels(q[h], k[h], sample, np.arange(T), T - 1)
        assert np.array_equal(np.isnan(fast[h]), np.isnan(direct))
        scale = np.nanmax(np.abs(direct))
        assert np.nanmax(np.abs(fast[h] - direct)) <= 1e-12 * scale


REFUSED = [((3, 4), (6, 5), [0, 1, 2]), ((3, 3), (6, 3), [0, 1, 2]), ((3, 4), (6, 4), [0, 1, 6]),
           ((3, 4), (6, 4), [0, 1]), ((2, 3, 4), (3, 6, 4), [0, 1, 2]), ((3, 4), (6, 4), [0.5, 1, 2]),
           ((3, 4), (6, 4), [-1, 1, 2]), ((4,), (6, 4), [0])]  # fmt: skip


@pytest.mark.parametrize("q_shape, k_shape, pos", REFUSED)
def test_the_fft_plane_split_refuses_what_it_cannot_read(q_shape, k_shape, pos):
    with pytest.raises(PosKernelsError):
        E.plane_kernels_causal(np.ones(q_shape), np.ones(k_shape), np.array(pos))
