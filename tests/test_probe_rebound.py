"""A rotary head's polynomial and where it would rebound past the training length (theory.empirical) against
closed forms: one plane climbs back over the window's edge at the first integer past 2 pi / theta - (L - 1) and
peaks at its full turn; planes that all turn far past the horizon never rebound."""

import numpy as np
import pytest

from poskernels.encodings import rotate
from poskernels.errors import PosKernelsError
from poskernels.theory import empirical as E
from poskernels.theory.rope import plane_products


@pytest.mark.parametrize("period, L, phase", [(100.0, 30, 0.0), (77.3, 20, 0.0), (250.5, 64, 0.7), (40.0, 9, -0.4)])
def test_one_plane_rebounds_where_its_turn_says(period, L, phase):
    theta = 2 * np.pi / period
    rho = 1.7
    out = E.polynomial_rebound([rho * np.exp(1j * phase)], [theta], L, int(1.5 * period))  # one turn past the window
    s = lambda r: rho * np.cos(r * theta - phase)  # noqa: E731  Re(h e^{-i r theta})
    # s climbs back over s(L - 1) once r theta - phase passes 2 pi - ((L - 1) theta - phase)
    assert 0 < (L - 1) * theta - phase < np.pi  # the window's edge is on the way down
    first = int(np.floor((2 * np.pi + 2 * phase) / theta - (L - 1) + 1e-9)) + 1  # strictly past: a tie is not over
    assert out["rebounds"] and out["first"] == first
    peak = (2 * np.pi + phase) / theta  # the full turn
    assert out["peak"] in (int(np.floor(peak)), int(np.ceil(peak)))
    assert s(out["peak"]) == pytest.approx(max(s(np.floor(peak)), s(np.ceil(peak))), abs=1e-12)
    assert out["height"] == pytest.approx(s(out["peak"]) - s(L - 1), abs=1e-12)
    assert out["fall"] == pytest.approx(s(0) - s(L - 1), abs=1e-12)


def test_a_head_whose_planes_turn_far_past_the_window_does_not_rebound():
    rng = np.random.default_rng(0)
    L, horizon = 512, 2048
    theta = rng.uniform(1e-6, np.pi / horizon / 2, 16)  # every plane turns by less than a quarter within the horizon
    h = rng.uniform(0.1, 2.0, 16)  # real and positive: the score falls from r = 0 on
    out = E.polynomial_rebound(h, theta, L, horizon)
    assert not out["rebounds"] and out["first"] is None
    assert out["height"] < 0 < out["fall"] and out["peak"] == L
    fast = E.polynomial_rebound(np.append(h, 5.0), np.append(theta, 2 * np.pi / 700), L, horizon)
    assert fast["rebounds"] and L <= fast["first"] <= horizon  # one plane that turns at 700 brings it back


def test_head_polynomial_of_fixed_vectors_is_the_plane_products():
    rng = np.random.default_rng(1)
    d, T = 12, 40
    theta = 10_000.0 ** (-np.arange(d // 2) / (d // 2))
    q0, k0 = rng.standard_normal(d), rng.standard_normal(d)
    pos = np.arange(T)
    q = rotate(np.tile(q0, (T, 1)), pos[:, None] * theta)  # the one query, turned to each position
    k = rotate(np.tile(k0, (T, 1)), pos[:, None] * theta)
    sample = pos[::3]
    h = E.head_polynomial(q[sample], k, sample, pos, theta)
    assert np.allclose(h, plane_products(q0, k0), atol=1e-12)
    # and its kernel is the measured one: Proposition 3 (iii), the plane split summed
    r = np.arange(T)
    whole = E.kernel_by_offset(q[sample] @ k.T, sample, pos, T - 1)[0]
    assert np.allclose(np.real(np.exp(-1j * np.outer(r, theta)) @ h), whole, atol=1e-10)


def test_bad_polynomials_are_refused():
    with pytest.raises(PosKernelsError, match="two vectors of one length"):
        E.polynomial_rebound([1.0, 2.0], [0.1], 4, 8)
    with pytest.raises(PosKernelsError, match="horizon must reach past"):
        E.polynomial_rebound([1.0], [0.1], 8, 4)
    with pytest.raises(PosKernelsError, match="finite"):
        E.polynomial_rebound([np.nan], [0.1], 4, 8)
    with pytest.raises(PosKernelsError, match="d = 2 len"):
        E.head_polynomial(np.ones((2, 4)), np.ones((2, 4)), [0, 1], [0, 1], [0.1])
