"""The one-pass filing reader against the plain forward pass, the per-filing kappa, and the content width W.

Heads here are drawn at random (the identities hold for any weights, with T5's and Shaw's own parameters
randomized too); the trained heads are read in tests/test_filings.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, omega
from poskernels.errors import PosKernelsError
from poskernels.experiments.filing_maps import FILING_READERS, read_filing_as, read_filing_as_loop, reader_reading
from poskernels.experiments.filings_reader import content_width, read_filing, read_filing_loop
from poskernels.experiments.kappa_rules import (
    BAND_TOLERANCE,
    KAPPA_RULES,
    band_kappas,
    filing_kappa,
    kappa_bands,
    question_kappas,
)
from poskernels.extension import extend
from poskernels.model.config import HeadConfig
from poskernels.model.engine.one_head import query_forward
from poskernels.model.head import Reading, init_params, token_table
from poskernels.tasks.filings import QUERY, encode_filing, generate_filing, laboratory_filing


def _random_head(scheme: str, seed: int) -> tuple[dict, HeadConfig]:
    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(seed)
    params = {k: 4.0 * v for k, v in init_params(cfg, rng).items()}  # larger weights: peaked attention
    if scheme == "t5":
        params["beta"] = rng.normal(size=params["beta"].shape)  # zero at init: make the bias visible
    return params, cfg


def _readings(scheme: str, n: int):
    if scheme != "rope":
        return [Reading()]
    return [reader_reading(r, HeadConfig(scheme="rope"), n) for r in ("rope", "rope_pi", "rope_ntk", "rope_yarn")]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(SCHEMES)), st.integers(0, 2**31), st.integers(1, 70))
def test_one_pass_equals_the_forward_pass_at_every_position(scheme, seed, n):
    if scheme == "learned":
        n = min(n, 31)  # the question at n - 1 puts the query at n; the table has rows 0..31
    params, cfg = _random_head(scheme, seed)
    ids = np.random.default_rng(seed + 1).integers(0, QUERY, size=n)  # (n,)
    for reading in _readings(scheme, n):
        fast = read_filing(params, cfg, ids, reading)  # (n, C)
        slow = read_filing_loop(params, cfg, ids, reading)  # (n, C)
        np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_one_pass_on_a_real_filing(scheme):
    doc = encode_filing(laboratory_filing())
    ids = doc.ids[:31] if scheme == "learned" else doc.ids
    params, cfg = _random_head(scheme, 7)
    for reading in _readings(scheme, len(ids)):
        np.testing.assert_allclose(
            read_filing(params, cfg, ids, reading), read_filing_loop(params, cfg, ids, reading), atol=1e-10
        )


def test_the_question_at_t_is_the_prefix_and_the_query():
    # Row t is the head read at the query token appended after x_t, not at x_t itself.
    params, cfg = _random_head("alibi", 3)
    ids = encode_filing(generate_filing(np.random.default_rng(0), "x")).ids[:40]
    rows = read_filing(params, cfg, ids)
    t = 25
    expect = query_forward(params, cfg, np.append(ids[: t + 1], QUERY)[None])[0][0]
    np.testing.assert_allclose(rows[t], expect, atol=1e-12)
    at_word = query_forward(params, cfg, ids[None, : t + 1])[0][0]
    assert not np.allclose(rows[t], at_word)


def test_bad_inputs_are_refused():
    params, cfg = _random_head("learned", 0)
    with pytest.raises(PosKernelsError, match="0..31"):
        read_filing(params, cfg, np.zeros(40, dtype=np.int64))  # never wraps or clips
    params, cfg = _random_head("alibi", 0)
    with pytest.raises(PosKernelsError, match="no query token"):
        read_filing(params, cfg, np.array([1, QUERY, 2]))
    with pytest.raises(PosKernelsError, match=r"got -5\.\.3"):  # the range, so a negative offender shows
        read_filing(params, cfg, np.array([3, -5, 2]))
    with pytest.raises(PosKernelsError, match="1-d integer"):
        read_filing(params, cfg, np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(PosKernelsError, match="rotary heads only"):
        read_filing(params, cfg, np.arange(5), reader_reading("rope_pi", HeadConfig(scheme="rope"), 100))
    with pytest.raises(PosKernelsError, match="reads 'rope' heads"):
        reader_reading("rope_yarn", cfg, 100)
    with pytest.raises(PosKernelsError, match="unknown reader"):
        reader_reading("rope_xpos", cfg, 100)
    with pytest.raises(PosKernelsError, match="content width"):
        content_width(*_random_head("rope", 0))


def test_kappa_per_filing_and_the_readings():
    # kappa = max(1, (n + 1) / 32): the longest sequence a filing of n tokens poses is n + 1 with the query.
    assert [filing_kappa(n) for n in (1, 31, 32, 63, 255)] == [1.0, 1.0, 33 / 32, 2.0, 8.0]
    cfg = HeadConfig(scheme="rope")
    theta = omega(16)
    for reader, (_, name) in FILING_READERS.items():
        if reader in ("nope", "sinusoidal", "alibi"):
            continue
        r = reader_reading(reader, cfg, 255)
        if name == "none":
            assert r.is_plain
            continue
        ext = extend(name, theta, 8.0, 32)
        np.testing.assert_allclose(r.inv_freq, ext.inv_freq)
        assert r.logit_scale == pytest.approx(ext.logit_scale)
    np.testing.assert_allclose(reader_reading("rope_pi", cfg, 255).inv_freq, theta / 8)  # Definition 5: m -> m/kappa


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 120))
def test_content_width_bounds_the_weights_as_theorem_3_says(seed, n):
    # Theorem 3 (iii): alpha_r <= e^{W - s r} alpha_0 at every offset r, with W read off the weights.
    params, cfg = _random_head("alibi", seed)
    W, s = content_width(params, cfg), cfg.alibi_slope
    rng = np.random.default_rng(seed)
    tokens = np.append(rng.integers(0, QUERY, size=n - 1), QUERY)[None]  # (1, n)
    _, cache = query_forward(params, cfg, tokens)
    a = cache["a"][0]  # (n,) weights on positions 0..n-1; the query sits at n - 1 (offset 0)
    r = (n - 1) - np.arange(n)  # (n,)
    assert np.all(a <= np.exp(W - s * r) * a[-1] * (1 + 1e-12))
    # ... and W is the width of the content scores the head can produce: a key of the top-scoring token right
    # behind the query and the query itself differ by at most W, attained by the range's two ends.
    E = token_table(params, cfg)  # (V, d)
    q = E[QUERY] @ params["W_Q"]
    c = E @ params["W_K"] @ q / cfg.tau  # (V,)
    assert W == pytest.approx(c.max() - c.min())
    lo, hi = int(np.argmin(c)), int(np.argmax(c))
    if QUERY not in (lo, hi):
        tokens = np.array([[hi, lo, QUERY]])
        a = query_forward(params, cfg, tokens)[1]["a"][0]
        assert np.log(a[0] / a[1]) == pytest.approx(W - s, abs=1e-9)


def test_content_width_of_a_hand_built_head_counts_the_querys_own_key():
    # W_Q = W_K = I and E[QUERY] = 4 e_0 make the content score of token v exactly E[v, 0] (tau = 4); the query's
    # own score 4 is the top of the range, so W = 4 - (-1) = 5, not the content tokens' width 2.  (A free table
    # embeds each token on its own, so the range can be set token by token.)
    cfg = HeadConfig(scheme="alibi", embedding="table")
    params = init_params(cfg, np.random.default_rng(0))
    params["W_Q"], params["W_K"] = np.eye(16), np.eye(16)
    params["E"] = np.zeros((17, 16))
    params["E"][:QUERY, 0] = np.linspace(-1.0, 1.0, QUERY)
    params["E"][QUERY, 0] = 4.0
    assert content_width(params, cfg) == pytest.approx(5.0)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["nope", "alibi"]), st.integers(0, 2**31), st.integers(1, 1500))
def test_recursive_filter_equals_the_score_matrix(scheme, seed, n):
    # Theorem 3 (i): ALiBi's weights factor into a content kernel and e^{-s r}, so a first-order filter sums them.
    params, cfg = _random_head(scheme, seed)
    ids = np.random.default_rng(seed).integers(0, QUERY, size=n)
    np.testing.assert_allclose(
        read_filing(params, cfg, ids, method="recursive"), read_filing(params, cfg, ids, method="matrix"), atol=1e-9
    )


def test_methods_are_checked():
    params, cfg = _random_head("rope", 0)
    with pytest.raises(PosKernelsError, match="recursive reader needs"):
        read_filing(params, cfg, np.arange(4), method="recursive")
    with pytest.raises(PosKernelsError, match="unknown method"):
        read_filing(params, cfg, np.arange(4), method="fast")
    params, cfg = _random_head("alibi", 0)
    with pytest.raises(PosKernelsError, match="rotary heads only"):
        read_filing(params, cfg, np.arange(4), reader_reading("rope_pi", HeadConfig(scheme="rope"), 100))


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 90), st.sampled_from(sorted(KAPPA_RULES)))
def test_each_question_at_its_own_kappa_in_one_banded_pass_equals_the_forward_pass(seed, n, rule):
    # the banded one-pass reader against n separate forward passes, question t at its own kappa
    params, cfg = _random_head("rope", seed)
    ids = np.random.default_rng(seed + 1).integers(0, QUERY, size=n)  # (n,)
    for reader in ("rope", "rope_pi", "rope_ntk", "rope_yarn"):
        for tol in (0.0, BAND_TOLERANCE):  # each question at its own kappa, or at its band's
            fast = read_filing_as(params, cfg, ids, reader, rule, tol)  # (n, C)
            slow = read_filing_as_loop(params, cfg, ids, reader, rule, tol)  # (n, C)
            np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-10)
    if rule == "filing":  # one band: the per-filing reading of read_filing
        reading = reader_reading("rope_pi", cfg, n)
        np.testing.assert_allclose(
            read_filing_as(params, cfg, ids, "rope_pi", rule), read_filing(params, cfg, ids, reading)
        )


@pytest.mark.parametrize("rule", sorted(KAPPA_RULES))
@pytest.mark.parametrize("seed", [5, 6])
def test_the_bands_read_together_give_the_band_by_band_calls_bit_for_bit(seed, rule):
    # a head that turns alone reads all its bands at once; each band is the call of read_filing it stands for
    params, cfg = _random_head("rope", seed)
    ids = encode_filing(laboratory_filing()).ids  # 209 tokens: the window's band, then bands of a few questions
    kappas = question_kappas(ids.size, cfg.n_train, rule)
    for reader in ("rope_pi", "rope_ntk", "rope_yarn"):
        bands = kappa_bands(kappas, BAND_TOLERANCE)
        readings = [Reading.through(cfg, reader[5:], kappa) for kappa, _, _ in bands]
        by_band = np.concatenate(
            [read_filing(params, cfg, ids[:b], r, start=a) for r, (_, a, b) in zip(readings, bands)]
        )  # (n, C) one call per band
        assert np.array_equal(read_filing_as(params, cfg, ids, reader, rule), by_band), reader


def test_the_question_rule_is_the_tournaments_rule_at_each_question():
    # the question at t is a sequence of t + 2 tokens (prefix and query): the tournament reads n tokens at n / 32
    k = question_kappas(100)
    assert k[:31].tolist() == [1.0] * 31 and k[31] == 33 / 32 and k[99] == 101 / 32
    assert np.all(question_kappas(100, rule="filing") == filing_kappa(100))
    bands = kappa_bands(k)  # tol = 0: one band for the window, then one per question
    assert bands[0] == (1.0, 0, 31) and len(bands) == 1 + 69 and all(b - a == 1 for _, a, b in bands[1:])
    # the default bands: each question read at a kappa no smaller than its own and at most 1/16 larger
    k = question_kappas(400)
    banded = band_kappas(k, BAND_TOLERANCE)
    assert np.all(banded >= k) and np.all(banded <= k * (1 + BAND_TOLERANCE) + 1e-12)
    assert len(kappa_bands(k, BAND_TOLERANCE)) < 50 < len(kappa_bands(k))  # a tenth of the blocks
    # the question rule reads a near pair of mentions at the trained scale where the filing rule compresses it:
    # the answers of the first 31 questions do not depend on the filing's length under the question rule
    params, cfg = _random_head("rope", 3)
    ids = np.random.default_rng(4).integers(0, QUERY, size=200)
    short = read_filing_as(params, cfg, ids[:31], "rope_pi", tol=0)
    long = read_filing_as(params, cfg, ids, "rope_pi", tol=0)
    np.testing.assert_allclose(long[:31], short, atol=1e-12)
    np.testing.assert_allclose(long[:31], read_filing(params, cfg, ids[:31]), atol=1e-12)  # as trained
    filing = read_filing_as(params, cfg, ids, "rope_pi", "filing")
    assert not np.allclose(filing[:31], short)


def test_the_banded_reader_refuses_bad_input():
    params, cfg = _random_head("rope", 0)
    with pytest.raises(PosKernelsError, match="kappa rule.*'window'"):
        read_filing_as(params, cfg, np.arange(5), "rope_pi", "window")
    with pytest.raises(PosKernelsError, match="reads 'alibi' heads"):
        read_filing_as(params, cfg, np.arange(5), "alibi")
    with pytest.raises(PosKernelsError, match="unknown reader"):
        read_filing_as(params, cfg, np.arange(5), "rope_xpos")
    with pytest.raises(PosKernelsError, match=r"start must be an integer in \[0, 4\].*got 5"):
        read_filing(params, cfg, np.arange(5), start=5)
    with pytest.raises(PosKernelsError, match="start"):
        read_filing(params, cfg, np.arange(5), start=-1)
    for tol in (-0.1, float("nan"), float("inf")):
        with pytest.raises(PosKernelsError, match="band tolerance"):
            read_filing_as(params, cfg, np.arange(40) % QUERY, "rope_pi", tol=tol)
    with pytest.raises(PosKernelsError, match="must not decrease"):
        kappa_bands(np.array([2.0, 1.0]))
