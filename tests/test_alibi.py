"""Definition 3 (T5 buckets, Shaw) and Theorem 3 (ALiBi is a product kernel)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import softmax

from poskernels.encodings import alibi_bias, t5_bucket
from poskernels.errors import PosKernelsError
from poskernels.theory.alibi import (
    alibi_horizon,
    alibi_offset_ratio_bound,
    alibi_tail_bound,
    alibi_tail_weight,
    alibi_time_kernel,
    alibi_weights,
    alibi_worst_tail_weight,
    shaw_scores,
    t5_bias,
    t5_bucket_ranges,
    t5_last_bucket_first_offset,
    t5_log_reach,
)
from quoting import assert_quotes


# --------------------------------------------------------------------------------------------------
# Definition 3: T5
# --------------------------------------------------------------------------------------------------
def hf_relative_position_bucket(relative_position: int, bidirectional: bool, num_buckets: int, max_distance: int):
    """Hugging Face T5Attention._relative_position_bucket (after Mesh TensorFlow), one scalar, plain Python."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += num_buckets if relative_position > 0 else 0
        relative_position = abs(relative_position)
    else:
        relative_position = -min(relative_position, 0)
    max_exact = num_buckets // 2
    if relative_position < max_exact:
        return relative_buckets + relative_position
    if_large = max_exact + int(
        math.log(relative_position / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    )
    return relative_buckets + min(if_large, num_buckets - 1)


CONFIGS = [
    (nb, md, bi)
    for nb in (2, 3, 4, 5, 8, 16, 31, 32, 64, 100)
    for md in (3, 9, 20, 64, 128, 129, 500)
    for bi in (False, True)
    if (nb // 2 if bi else nb) >= 2 and md > (nb // 2 if bi else nb) // 2
]


@pytest.mark.parametrize("num_buckets, max_distance, bidirectional", CONFIGS)
def test_t5_bucket_matches_hugging_face_oracle(num_buckets, max_distance, bidirectional):
    rel = np.arange(-3 * max_distance, 3 * max_distance + 1)
    got = t5_bucket(rel, num_buckets, max_distance, bidirectional)
    want = [hf_relative_position_bucket(int(x), bidirectional, num_buckets, max_distance) for x in rel]
    assert got.tolist() == want


def test_t5_snapshot_article():
    # Article, Definition 3 discussion: "offsets below 16 get their own bucket ... the last of which holds every
    # offset from 113 on (the logarithmic map reaches it at 16 * 8^(15/16) ~ 112.4, not at 128)".
    assert t5_last_bucket_first_offset(32, 128) == 113
    assert round(t5_log_reach(32, 128), 1) == 112.4
    ranges = t5_bucket_ranges(32, 128)
    assert all(first == last == b for b, first, last in ranges[:16])
    assert ranges[-1] == (31, 113, None)


def test_t5_log_reach_is_the_formula_root():
    # 16 * 8**(15/16) written out only here, as the closed form of the root of the bucket map
    assert t5_log_reach() == pytest.approx(16 * 8 ** (15 / 16), rel=1e-14)
    assert t5_log_reach(32, 128, bidirectional=True) == pytest.approx(8 * 16 ** (7 / 8), rel=1e-14)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 200), st.integers(2, 3000), st.booleans())
def test_t5_last_bucket_starts_at_ceiling_of_log_reach(num_buckets, max_distance, bidirectional):
    side = num_buckets // 2 if bidirectional else num_buckets
    assume(side >= 2 and max_distance > side // 2)
    reach = t5_log_reach(num_buckets, max_distance, bidirectional)
    assume(abs(reach - round(reach)) > 1e-6)  # an exact integer root sits on a floating-point knife edge
    assert t5_last_bucket_first_offset(num_buckets, max_distance, bidirectional) == math.ceil(reach)


def test_t5_bias_is_relative_and_blind_past_the_last_bucket():
    beta = np.random.default_rng(0).normal(size=32)
    n = 200
    B = t5_bias(n, beta)
    for t in range(n):
        for j in range(n):
            want = beta[hf_relative_position_bucket(j - t, False, 32, 128)] if j <= t else -np.inf
            assert B[t, j] == want
    assert np.all(B[np.arange(113, n), 0] == beta[31])  # offsets from 113 on are indistinguishable


def test_shaw_scores_against_loops_and_clip():
    rng = np.random.default_rng(1)
    n, d, K = 12, 5, 4
    q, k, a = rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(K + 1, d))
    S = shaw_scores(q, k, a, tau=2.0)
    for t in range(n):
        for j in range(n):
            if j <= t:
                assert S[t, j] == pytest.approx(q[t] @ (k[j] + a[min(t - j, K)]) / 2.0, abs=1e-12)
            else:
                assert S[t, j] == -np.inf
    # two keys with the same content at offsets >= K score the same: the clip makes them indistinguishable
    k2 = np.tile(k[0], (n, 1))
    S2 = shaw_scores(q, k2, a)
    assert np.allclose(S2[n - 1, : n - K], S2[n - 1, 0])
    assert not np.isclose(S2[n - 1, n - K], S2[n - 1, n - K - 1])  # offsets K - 1 and K still differ


# --------------------------------------------------------------------------------------------------
# Theorem 3
# --------------------------------------------------------------------------------------------------
def test_alibi_weights_match_the_causal_softmax_row():
    rng = np.random.default_rng(2)
    n, s = 50, 0.37
    C = rng.normal(size=(n, n)) * 3  # (n, n) content scores, query t by key j
    full = softmax(C + alibi_bias(n, s), axis=1)  # (n, n)
    for t in (0, 1, 17, n - 1):
        alpha = alibi_weights(C[t, t::-1], s)  # by offset r = t - j
        assert np.allclose(alpha[::-1], full[t, : t + 1], rtol=1e-12, atol=1e-15)
        assert np.all(full[t, t + 1 :] == 0)


def test_theorem3_i_product_of_two_kernels():
    rng = np.random.default_rng(3)
    c, s = rng.uniform(-5, 5, size=300), 0.2
    r = np.arange(c.size)
    product = np.exp(c - c.max()) * np.exp(-s * r)  # content kernel times time kernel
    assert np.allclose(alibi_weights(c, s), product / product.sum(), rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 120), st.floats(0.01, 3.0), st.integers(0, 2**32 - 1))
def test_theorem3_i_time_kernel_and_product_with_content_kernel_are_psd(n, s, seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 50, size=n))  # (n,) real positions
    K_time = alibi_time_kernel(x, s)  # (n, n)
    assert np.allclose(K_time, K_time.T)
    assert np.linalg.eigvalsh(K_time).min() >= -1e-10 * n
    X = rng.normal(size=(n, 3))
    K_content = np.exp(X @ X.T / 4)  # W_Q = W_K: e^{<q, k>} is positive definite
    assert np.linalg.eigvalsh(K_time * K_content).min() >= -1e-9 * np.abs(K_content).max() * n


def test_linear_bias_alone_is_not_a_kernel():
    # exponentiation is what makes the penalty a kernel: -s|u| itself has zero trace and is not PSD
    x = np.arange(10.0)
    assert np.linalg.eigvalsh(-0.5 * np.abs(x[:, None] - x[None, :])).min() < -1e-3


def test_theorem3_ii_snapshot_article():
    # Article after Theorem 3: "With W = 20 and s = 1/2 it is 2.54 at D = 40, then 1.15 x 10^-4 at 60 and
    # 5.24 x 10^-9 at 80."
    assert f"{alibi_tail_bound(20, 0.5, 40):.2f}" == "2.54"
    assert f"{alibi_tail_bound(20, 0.5, 60):.2e}" == "1.15e-04"
    assert f"{alibi_tail_bound(20, 0.5, 80):.2e}" == "5.24e-09"


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 8192),
    W=st.floats(0.0, 30.0),
    s=st.floats(0.01, 2.0),
    lo=st.floats(-50, 50),
    seed=st.integers(0, 2**32 - 1),
)
def test_theorem3_ii_and_iii_on_random_instances(n, W, s, lo, seed):
    rng = np.random.default_rng(seed)
    c = rng.uniform(lo, lo + W, size=n)  # (n,) content scores within width W
    if n > 1:
        c[rng.integers(n)], c[rng.integers(n)] = lo, lo + W  # touch both ends of the interval
    alpha = alibi_weights(c, s)
    assert alpha.sum() == pytest.approx(1.0)
    for D in {0, 1, int(alibi_horizon(W, s)), n // 3, n - 1, rng.integers(n)}:
        tail = alibi_tail_weight(alpha, D)
        assert tail <= alibi_tail_bound(W, s, D) * (1 + 1e-12)  # Theorem 3 (ii)
        assert tail <= alibi_worst_tail_weight(W, s, D, n) * (1 + 1e-9) + 1e-300
    r = np.arange(n)
    assert np.all(alpha <= alibi_offset_ratio_bound(W, s, r) * alpha[0] * (1 + 1e-9))  # Theorem 3 (iii)
    past = r > alibi_horizon(W, s)
    assert np.all(alpha[past] < alpha[0])  # past the horizon, less than the query's own position


@pytest.mark.parametrize("W, s, D, n", [(20, 0.5, 40, 8192), (20, 0.5, 60, 8192), (5, 0.1, 30, 500), (0, 1.0, 3, 7)])
def test_worst_tail_weight_closed_form(W, s, D, n):
    # content 0 below D and W from D on: A / (A + B) with geometric sums A, B
    A = math.exp(W) * (math.exp(-s * D) - math.exp(-s * n)) / (1 - math.exp(-s))
    B = (1 - math.exp(-s * D)) / (1 - math.exp(-s))
    worst = alibi_worst_tail_weight(W, s, D, n)
    assert worst == pytest.approx(A / (A + B), rel=1e-10)
    assert worst <= alibi_tail_bound(W, s, D)


def test_tail_bound_is_nearly_tight_far_out():
    # far past the horizon the worst case is A / (A + B) ~ A / B, and A is the bound: the ratio is 1 / B, where
    # B = sum_{r<D} e^{-s r} -> 1 / (1 - e^{-s}); the bound loses only the alpha_0 <= 1 step of its proof
    W, s = 20.0, 0.5
    ratio = alibi_worst_tail_weight(W, s, 80, 8192) / alibi_tail_bound(W, s, 80)
    assert ratio == pytest.approx(1 - math.exp(-s), rel=1e-6)


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: alibi_weights([0.0, 1.0], 0.0), "0.0"),
        (lambda: alibi_weights([0.0, 1.0], -0.5), "-0.5"),
        (lambda: alibi_weights([0.0, 1.0], float("nan")), "nan"),
        (lambda: alibi_weights([], 0.5), "[]"),
        (lambda: alibi_weights([0.0, np.inf], 0.5), "inf"),
        (lambda: alibi_tail_bound(-1, 0.5, 40), "-1"),
        (lambda: alibi_tail_bound(20, 0.5, -3), "-3"),
        (lambda: alibi_tail_bound(20, True, 3), "True"),
        (lambda: alibi_horizon(20, 0), "0"),
        (lambda: alibi_offset_ratio_bound(20, 0.5, [-2]), "-2.0"),
        (lambda: alibi_time_kernel([0, 1], -1.0), "-1.0"),
        (lambda: alibi_worst_tail_weight(20, 0.5, 40, 0), "0"),
        (lambda: t5_last_bucket_first_offset(1, 128), "1"),
        (lambda: t5_last_bucket_first_offset(32, 16), "16"),
        (lambda: t5_log_reach(32, 0), "0"),
        (lambda: t5_log_reach(3, 128, bidirectional=True), "3"),
        (lambda: t5_bias(0, np.zeros(32)), "0"),
        (lambda: t5_bias(4, np.zeros(31)), "(31,)"),
        (lambda: shaw_scores(np.ones((3, 2)), np.ones((3, 2)), np.ones((1, 2))), "(1, 2)"),
        (lambda: shaw_scores(np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2)), tau=0), "0"),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError, match=None) as err:
        call()
    assert_quotes(str(err.value), quoted)
