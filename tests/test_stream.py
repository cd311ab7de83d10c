"""The streaming reader: equal to the one-pass reader for every scheme and reading, its shortcuts, the certified cut."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, omega
from poskernels.errors import PosKernelsError
from poskernels.extension import extend
from poskernels.model.config import HeadConfig
from poskernels.model.engine.cut import certified_cut, content_width
from poskernels.model.engine.one_head import query_forward, query_logits
from poskernels.model.engine.stream import recent_weights, stream_logits, stream_many
from poskernels.model.head import Reading, init_params, token_table
from poskernels.tasks.cue import cue_batch
from poskernels.theory.alibi import alibi_tail_bound


def _heavy(cfg, seed, scale=3.0):
    # weights larger than at init, so attention is peaked and a wrong score would show
    return {k: scale * v for k, v in init_params(cfg, np.random.default_rng(seed)).items()}


def _tokens(rng, B, n, vocab=17):
    x = rng.integers(0, vocab, size=(B, n))  # any stream; the query token varies between rows
    return x


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
def test_stream_equals_the_one_pass_reader(scheme, chunk):
    cfg = HeadConfig(scheme=scheme)
    params = _heavy(cfg, 1)
    rng = np.random.default_rng(2)
    for n in (1, 2, 31, 32) if scheme == "learned" else (1, 2, 33, 150, 400):
        x = _tokens(rng, 5, n)
        ref = query_logits(params, cfg, x)
        assert np.allclose(stream_logits(params, cfg, x, chunk=chunk), ref, rtol=1e-9, atol=1e-10), n
        cue, _ = cue_batch(rng, 4, max(n, 2))  # one query token for every row (the cue task's path)
        ref = query_logits(params, cfg, cue)
        assert np.allclose(stream_logits(params, cfg, cue.astype(np.uint8), chunk=chunk), ref, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_both_passes_equal_the_one_pass_reader(scheme):
    # fewer rows than tokens: each key's own score (B exponentials a column; a rotary key gathered at 1 and 3 rows,
    # read off the chunk's table at 16); more: the whole (V, c) table of weights and one sparse product (the
    # one-query-token path) or a gather per head (queries that differ)
    from poskernels.model.engine import chunk_pass

    cfg = HeadConfig(scheme=scheme)
    params = _heavy(cfg, 6)
    rng = np.random.default_rng(7)
    n = 31 if scheme == "learned" else 300
    for B in (1, 3, cfg.vocab - 1, cfg.vocab, 2 * cfg.vocab + 3):
        assert chunk_pass._per_key(B, cfg.vocab) == (B < cfg.vocab)
        x = _tokens(rng, B, n)
        x[0, -1], x[-1, -1] = 3, 16  # two query tokens at least (one when B = 1)
        cue, _ = cue_batch(rng, B, n)
        for tokens in (x, cue):
            ref = query_logits(params, cfg, tokens)
            for chunk in (29, 4096):
                got = stream_logits(params, cfg, tokens.astype(np.uint8), chunk=chunk)
                assert np.allclose(got, ref, rtol=1e-9, atol=1e-10), (B, chunk)


@pytest.mark.parametrize("name", ["none", "pi", "ntk", "yarn"])
@pytest.mark.parametrize("kappa", [1.0, 4.0, 3125.0])
def test_stream_equals_the_one_pass_reader_under_every_reading(name, kappa):
    cfg = HeadConfig(scheme="rope")
    params = _heavy(cfg, 3)
    reading = Reading.from_extension(extend(name, omega(16), kappa, 32))
    x = _tokens(np.random.default_rng(4), 4, 300)
    ref = query_logits(params, cfg, x, reading=reading)
    assert np.allclose(stream_logits(params, cfg, x, reading=reading, chunk=37), ref, rtol=1e-9, atol=1e-10)
    pos = 0.25 * np.arange(300) + 5.0  # real positions (a shifted, interpolated reading)
    ref = query_logits(params, cfg, x, positions=pos, reading=reading)
    assert np.allclose(stream_logits(params, cfg, x, positions=pos, reading=reading, chunk=37), ref, rtol=1e-9)


def test_many_heads_in_one_pass_equal_each_head_alone():
    rng = np.random.default_rng(5)
    x, _ = cue_batch(rng, 6, 500)
    heads = []
    for k, scheme in enumerate(sorted(SCHEMES)):
        if scheme == "learned":
            continue
        cfg = HeadConfig(scheme=scheme)
        heads.append((_heavy(cfg, k), cfg, Reading()))
    rope = HeadConfig(scheme="rope")
    heads.append((_heavy(rope, 9), rope, Reading.from_extension(extend("yarn", omega(16), 500 / 32, 32))))
    for (params, cfg, reading), got in zip(heads, stream_many(heads, x, chunk=128)):
        assert np.allclose(got, query_logits(params, cfg, x, reading=reading), rtol=1e-9, atol=1e-10), cfg.scheme


def test_scores_far_below_the_chunk_maximum_are_recomputed_row_by_row():
    # huge weights: every key of some rows scores hundreds below the table's maximum, which a shared
    # maximum would underflow; the reader redoes those rows with their own maxima
    for scheme in ("nope", "rope", "sinusoidal"):
        cfg = HeadConfig(scheme=scheme)
        params = _heavy(cfg, 6, scale=40.0)
        x = _tokens(np.random.default_rng(7), 8, 90)
        ref = query_logits(params, cfg, x)
        assert np.all(np.isfinite(ref))
        assert np.allclose(stream_logits(params, cfg, x, chunk=16), ref, rtol=1e-8, atol=1e-8), scheme


@settings(max_examples=25, deadline=None)
@given(
    scheme=st.sampled_from(sorted(n for n, s in SCHEMES.items() if s.far_past(HeadConfig(scheme=n)) is not None)),
    seed=st.integers(0, 10_000),
    scale=st.floats(0.5, 6.0),
)
def test_a_constant_past_bias_is_constant_past_its_offset(scheme, seed, scale):
    # the count shortcut's premise: past R0 every key gets the same positional term
    cfg = HeadConfig(scheme=scheme)
    params = _heavy(cfg, seed, scale)
    params["beta"] = np.random.default_rng(seed).normal(size=cfg.t5_buckets) if scheme == "t5" else None
    params = {k: v for k, v in params.items() if v is not None}
    q = np.random.default_rng(seed + 1).normal(size=(2, cfg.d))
    R0 = SCHEMES[scheme].far_past(cfg)
    bias = SCHEMES[scheme].bias(params, cfg, q, np.arange(R0, R0 + 3000, dtype=float))
    if bias is not None:
        bias = np.broadcast_to(bias, (2, 3000))
        assert np.array_equal(bias, np.broadcast_to(bias[:, :1], bias.shape))
    if R0 > 0:  # and R0 is the first such offset
        before = np.broadcast_to(SCHEMES[scheme].bias(params, cfg, q, np.array([R0 - 1.0, R0])), (2, 2))
        assert not np.array_equal(before[:, 0], before[:, 1]) or scheme == "t5"


@pytest.mark.parametrize("eps", [1e-3, 1e-9])
def test_the_certified_cut_drops_no_more_than_eps(eps):
    cfg = HeadConfig(scheme="alibi")
    for seed in range(4):
        params = _heavy(cfg, seed, scale=4.0)  # a wide content range: W of several units
        x = _tokens(np.random.default_rng(seed), 6, 600)
        cut = certified_cut(params, cfg, np.unique(x[:, -1]), eps)
        assert cut.W > 1.0 and cut.tail_bound <= eps
        # the cut's bound is computed exactly (rational exponent), the float formula within a few ulps of it
        assert cut.tail_bound == pytest.approx(alibi_tail_bound(cut.W, cut.s, cut.D + 1), rel=1e-13)
        assert alibi_tail_bound(cut.W, cut.s, cut.D) > eps or cut.D == 0  # the smallest such D
        logits, cache = query_forward(params, cfg, x)
        a = cache["a"]  # (B, n) exact weights
        dropped = a[:, : 600 - 1 - cut.D].sum(axis=1)  # offsets r > D
        assert np.all(dropped <= cut.tail_bound * (1 + 1e-9))
        got = stream_logits(params, cfg, x, eps=eps)
        assert np.abs(got - logits).max() <= cut.logit_bound + 1e-12


def test_the_cut_reads_only_its_window():
    # O(D) per query: the tokens past the cut are never read, so garbage there changes nothing
    cfg = HeadConfig(scheme="alibi")
    params = _heavy(cfg, 1)
    x, _ = cue_batch(np.random.default_rng(2), 3, 1000)
    D = certified_cut(params, cfg, [16], 1e-9).D
    y = x.copy()
    y[:, : 1000 - 1 - D] = 99  # out of the vocabulary: a read would refuse it
    assert np.array_equal(stream_logits(params, cfg, x, eps=1e-9), stream_logits(params, cfg, y, eps=1e-9))
    with pytest.raises(PosKernelsError, match="got"):
        stream_logits(params, cfg, y)


def test_recent_weights_are_the_exact_weights():
    for scheme in ("alibi", "rope", "sinusoidal", "t5"):
        cfg = HeadConfig(scheme=scheme)
        params = _heavy(cfg, 2)
        x = _tokens(np.random.default_rng(3), 4, 200)
        a = query_forward(params, cfg, x)[1]["a"][:, ::-1]  # (B, n) by offset
        assert np.allclose(recent_weights(params, cfg, x, 25, chunk=16), a[:, :25], rtol=1e-10, atol=1e-14)


def test_content_width_is_the_range_of_the_content_scores():
    cfg = HeadConfig(scheme="alibi")
    p = _heavy(cfg, 0)
    E = token_table(p, cfg)  # (V, d)
    c = (E[[3, 16]] @ p["W_Q"]) @ (E @ p["W_K"]).T / math.sqrt(16)  # (2, V)
    assert math.isclose(content_width(p, cfg, [16, 3]), float((c.max(1) - c.min(1)).max()))


def test_bad_input_is_refused_with_the_value():
    cfg = HeadConfig(scheme="learned")
    params = init_params(cfg, np.random.default_rng(0))
    x, _ = cue_batch(np.random.default_rng(1), 2, 64)
    with pytest.raises(PosKernelsError, match="got positions from"):
        stream_logits(params, cfg, x)  # a learned table has no row past its length
    alibi = HeadConfig(scheme="alibi")
    pa = init_params(alibi, np.random.default_rng(0))
    with pytest.raises(PosKernelsError, match="got 1.5"):
        certified_cut(pa, alibi, [16], 1.5)
    with pytest.raises(PosKernelsError, match="got 'learned'"):
        certified_cut(params, cfg, [16], 1e-6)
    with pytest.raises(PosKernelsError, match="got 0"):
        stream_logits(pa, alibi, x, chunk=0)
    with pytest.raises(PosKernelsError, match="positions=None"):
        stream_logits(pa, alibi, x, positions=np.arange(64.0), eps=1e-6)
    with pytest.raises(PosKernelsError, match=r"got \[99\]"):
        content_width(pa, alibi, [99])
    with pytest.raises(PosKernelsError, match="got float64"):
        stream_logits(pa, alibi, x.astype(float))


@settings(max_examples=30, deadline=None)
@given(
    scheme=st.sampled_from(sorted(s for s in SCHEMES if s != "learned")),
    n=st.integers(1, 300),
    chunk=st.integers(1, 512),
    seed=st.integers(0, 10_000),
    same_query=st.booleans(),
)
def test_stream_equals_the_one_pass_reader_on_random_instances(scheme, n, chunk, seed, same_query):
    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(seed)
    params = _heavy(cfg, seed, scale=float(rng.uniform(0.5, 5.0)))
    x = _tokens(rng, 3, n)
    if same_query:
        x[:, -1] = 16  # one query token: the batched-product path
    ref = query_logits(params, cfg, x)
    assert np.allclose(stream_logits(params, cfg, x, chunk=chunk), ref, rtol=1e-8, atol=1e-9)
