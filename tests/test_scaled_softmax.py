"""Attention fading and the scaled softmax (Nakanishi 2025) as theory: the closed form against the softmax written
out, the threshold as a property on random instances, and a seeded Monte Carlo over i.i.d. logits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.errors import PosKernelsError
from poskernels.theory.scaled_softmax import fading_threshold, max_weight_monte_carlo, top_weight

# -- the scaled softmax: the paper's property, as theory ------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 17, 1000, 100_000])
@pytest.mark.parametrize("s", [None, 0.1, 0.43, 1.0])
def test_top_weight_is_the_softmax_of_the_vector_written_out(n, s):
    # oracle: the softmax of the paper's Figure 1 vector (-2 everywhere, +3 at the last), computed over all n entries
    z = np.full(n, -2.0)
    z[-1] = 3.0
    z = z * (1.0 if s is None else s * math.log(n))
    e = np.exp(z - z.max())
    assert math.isclose(top_weight(n, 5.0, s), e[-1] / e.sum(), rel_tol=1e-12, abs_tol=1e-300)


@settings(max_examples=60, deadline=None)
@given(delta=st.floats(0.1, 8.0), over=st.floats(1.0, 4.0), n=st.integers(2, 10**9))
def test_scaled_top_weight_stays_above_one_half_past_the_threshold_while_plain_fades(delta, over, n):
    s = over * fading_threshold(delta)  # s delta >= 1: the paper's regime
    assert top_weight(n, delta, s) >= 0.5 - 1e-12
    assert top_weight(n, delta) <= math.exp(delta) / (n - 1 + math.exp(delta)) + 1e-15  # plain: like e^delta / n


@settings(max_examples=30, deadline=None)
@given(delta=st.floats(0.1, 8.0), under=st.floats(0.05, 0.9))
def test_below_the_threshold_the_scaled_weight_fades_too(delta, under):
    s = under * fading_threshold(delta)
    weights = [top_weight(10**k, delta, s) for k in (6, 12, 18)]
    assert weights[-1] < weights[0] and weights[-1] <= 10 ** (-18 * (1 - under)) * 2


def test_monte_carlo_max_weight_fades_plain_and_holds_scaled():
    rng = np.random.default_rng(20250131)
    plain = [max_weight_monte_carlo(n, None, rng, trials=50) for n in (100, 10_000)]
    scaled = [max_weight_monte_carlo(n, 1.0, rng, trials=50) for n in (100, 10_000)]
    assert plain[1][0] < plain[0][0] / 20  # fades like 1 / n
    assert min(m - 4 * se for m, se in scaled) > 0.3  # s log n past sqrt(2 log n): the largest logit dominates
    with pytest.raises(PosKernelsError, match="Generator"):
        max_weight_monte_carlo(10, 1.0, 0)
