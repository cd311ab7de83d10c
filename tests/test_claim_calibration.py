"""The statistics of ``examples/claim_calibration.py``, which set the thresholds of the trained claims' tests.

Oracle tests: the binomial tail against SciPy's, the normal pass probability against direct simulation of blocks of
ten seeds, and the script's vectorized conditions against the tests' own formulas on random blocks.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import claim_calibration as cc  # noqa: E402
from trained_claims import Claim  # noqa: E402


def _claim(kind: str) -> Claim:
    return Claim("test_x::y", "a claim", kind, lambda d: d, {})


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 41), st.floats(0.0, 1.0))
def test_binomial_tail_is_scipys(n, k, p):
    assert cc._binom_at_least(n, k, p) == pytest.approx(stats.binom.sf(k - 1, n, p), abs=1e-12)


def test_share_probability_counts_the_seeds_the_threshold_asks():
    x = np.array([True] * 76 + [False] * 4)  # 0.95
    # ">= 0.9 of ten" is nine or ten of ten; ">= 0.7" seven or more
    assert cc.analytic(_claim("share"), {"x": x}, {"q": 0.9}) == pytest.approx(stats.binom.sf(8, 10, 0.95))
    assert cc.analytic(_claim("share"), {"x": x}, {"q": 0.7}) == pytest.approx(stats.binom.sf(6, 10, 0.95))


def test_normal_probabilities_match_simulated_blocks():
    # a normal pool: the analytic probability that ten fresh seeds pass equals the share of simulated blocks that do
    # (up to the SE being estimated in each block, which the analytic figure takes at its pooled value: a few %)
    rng = np.random.default_rng(3)
    pool = {"x": rng.normal(0.9, 0.05, 100_000)}
    blocks = rng.normal(0.9, 0.05, (20_000, 10))  # (blocks, seeds)
    p = {"c": 0.85, "k": 2.0}
    simulated = cc.passes(_claim("lower"), {"x": blocks}, p).mean()
    assert cc.analytic(_claim("lower"), pool, p) == pytest.approx(simulated, abs=0.03)
    a, b = rng.normal(0.5, 0.1, 100_000), rng.normal(0.4, 0.1, 100_000)
    ba, bb = rng.normal(0.5, 0.1, (20_000, 10)), rng.normal(0.4, 0.1, (20_000, 10))
    simulated = cc.passes(_claim("gap"), {"a": ba, "b": bb}, {"k": 2.0}).mean()
    assert cc.analytic(_claim("gap"), {"a": a, "b": b}, {"k": 2.0}) == pytest.approx(simulated, abs=0.03)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.3), st.floats(0.0, 4.0))
def test_conditions_are_the_tests_formulas(seed, off, k):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.3, 1.0, 10), rng.uniform(0.0, 0.9, 10)  # (seeds,)
    se = lambda x: x.std(ddof=1) / math.sqrt(x.size)  # noqa: E731
    apart = (a.mean() - off - b.mean()) / math.hypot(se(a), se(b))  # the tests' _apart
    got = cc.passes(_claim("gap"), {"a": a[None], "b": b[None]}, {"off": off, "k": k})[0]
    assert got == (apart > k)
    got = cc.passes(_claim("lower"), {"x": a[None]}, {"c": 0.6, "k": k})[0]
    assert got == (a.mean() - k * se(a) >= 0.6)
    got = cc.passes(_claim("share"), {"x": (a > 0.5)[None]}, {"q": 0.7})[0]
    assert got == (np.mean(a > 0.5) >= 0.7)
    got = cc.passes(_claim("median"), {"x": a[None]}, {"lo": 0.5, "hi": 0.9})[0]
    assert got == (0.5 < np.median(a) < 0.9)
