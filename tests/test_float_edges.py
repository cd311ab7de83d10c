"""Float64's edges, one case per function: an infinite or zero result that is right comes without a RuntimeWarning,
a meaningless one (NaN, or inf standing for a finite number) is refused with PosKernelsError.

The property of :mod:`test_robust_math` meets these inputs only now and then; here each is pinned.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.extension import yarn_ramp_turns
from poskernels.extension.ecosystem import llama3
from poskernels.extension.yarn_reference import yarn_ramp_index
from poskernels.theory.alibi import alibi_tail_weight, alibi_weights
from poskernels.theory.census import chen_stated_bound, interpolation_bound, interpolation_error
from poskernels.theory.commutant import commutant_coefficients, relative_score, relativity_defect
from poskernels.theory.counting import causal_counter, causal_uniform_attention, position_from_counter
from poskernels.theory.decay import counterexample_variance, matched_scores, offset_score_complex
from poskernels.theory.kernel import gram_matrix, max_column_cosine
from poskernels.theory.rope import plane_products, relative_encoding_normal_form
from robust import work_limit

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

BIG = 1e200  # its square overflows float64

REFUSED = {
    "plane products": (lambda: plane_products([BIG, 0.0], [BIG, 0.0]), "overflows float64"),
    "tail weight": (lambda: alibi_tail_weight([1e308, 1e308], 0), "overflows float64"),
    "Chen's bound": (lambda: chen_stated_bound(BIG, 16, 1e4, -1e150, 1e150, 0.0), "overflows float64"),
    "interval width": (lambda: interpolation_error([1.0], [0.0], -1e308, 1e308, 1e308), "D2 - D1"),
    "interpolation bound": (lambda: interpolation_bound([BIG], [BIG], 0, 2, 1.0), "overflows float64"),
    "counter positions": (lambda: position_from_counter([[BIG]], [BIG]), "overflows float64"),
    "offset score angles": (lambda: offset_score_complex([1.0], BIG, [BIG]), "angles"),
    "matched scores": (lambda: matched_scores([1.0], omega(8), BIG, 10, np.random.default_rng(0)), "sigma"),
    "orthogonality": (lambda: relative_encoding_normal_form([[1.34e154, 1.34e154], [-1.34e154, 1.34e154]]), "orth"),
    "YaRN ramp width": (lambda: yarn_ramp_turns(omega(8), 32, alpha=-1e308, beta=1e308), "beta - alpha"),
    "relative score angles": (lambda: relative_score([0.0], [0.0], BIG, [BIG]), "angles"),
    "counterexample angles": (lambda: counterexample_variance(1e300, [1e100, -1e100]), "angles"),
    "tolerance None": (lambda: relative_encoding_normal_form([[0.0]], atol=None), "atol"),
    "Gram offsets": (lambda: gram_matrix([1e308, -8e307], 4), "m' - m"),
    "zero matrix beside a huge one": (lambda: relativity_defect([[[1e154, 0], [0, 0]], [[0, 0], [0, 0]]]), "M = 0"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_meaningless_results_are_refused(name):
    call, words = REFUSED[name]
    with pytest.raises(PosKernelsError, match=re.escape(words)):
        call()


def test_running_mean_past_float64_is_the_mean():
    V = np.array([[1.5e308], [1.7e308], [1.0e308]])  # (3, 1): prefix sums overflow, the means do not
    exact = [float(sum(Fraction(v) for v in V[: t + 1, 0]) / (t + 1)) for t in range(3)]
    np.testing.assert_allclose(causal_uniform_attention(V)[:, 0], exact, rtol=1e-15)


def test_right_infinities_and_zeros_come_quietly():
    assert alibi_weights([9.5e307, -8.4e307], BIG).tolist() == [1.0, 0.0]  # the second logit is 1.8e308 below
    assert yarn_ramp_turns([8.98846567431158e307], 2).tolist() == [1.0]  # infinitely many turns: past beta
    # Llama 3: L / lambda past float64 keeps the plane (factor 1), an infinite wavelength divides it by kappa
    assert llama3([1e308, 1.0, 1e-300], 4, 64).factors.tolist() == [1.0, 1.0, 0.25]
    a, c = commutant_coefficients(np.full((2, 2), 9e307))
    assert a.tolist() == [9e307] and c.tolist() == [0.0]  # the mean of two entries, though their sum overflows


def test_tiny_frequencies_keep_their_column_cosine():
    # b = 8.3e184: the last sine column at W = 2 is (0, ~1e-162), whose square underflows; every pair of sine
    # columns (0, x) and (0, y) is parallel, |cos| = 1
    assert max_column_cosine(2, 16, 8.287545158533092e184) == pytest.approx(1.0, abs=1e-15)


def test_ramp_index_with_an_overflowing_turn_count():
    theta = np.array([3.595386269724632e307, 1e100])  # L theta_0 = 1.8e308 overflows
    gamma = yarn_ramp_index(theta, 5, truncate=True)
    assert np.all((gamma >= 0) & (gamma <= 1))


def test_exact_counter_is_refused_past_its_work_budget_at_once():
    # "at once": refused within a few thousand function calls (a count, not a clock), none of the 2e6 Fractions made
    with work_limit(10_000), pytest.raises(PosKernelsError, match="exact budget"):
        causal_counter(2_000_000, [10**400])
    assert causal_counter(3, [Fraction(1)]).ravel().tolist() == [1, Fraction(1, 2), Fraction(1, 3)]
