"""The one score function: an oracle for it, the training forward as its factoring, the rebound as its polynomial."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, Scheme, apply_rope, omega, rotate
from poskernels.errors import PosKernelsError
from poskernels.experiments.rebound import marked_key_polynomial
from poskernels.extension import extend
from poskernels.model.config import HeadConfig
from poskernels.model.embedding import token_table
from poskernels.model.engine.one_head import query_forward
from poskernels.model.engine.scores import GRID_MAX, pair_scores, scores
from poskernels.model.engine.stack import attention
from poskernels.model.head import embed, init_params, phi
from poskernels.model.reading import Reading, frequencies
from poskernels.model.score import content_score, score, score_scale
from poskernels.tasks.cue import N_SYMBOLS, query_token, token_id


def _heavy(cfg, seed):
    # weights larger than at init (and a trained-looking T5 beta), so a wrong term of the score would show
    p = {k: 3.0 * v for k, v in init_params(cfg, np.random.default_rng(seed)).items()}
    if "beta" in p:
        p["beta"] = np.random.default_rng(seed + 100).normal(size=p["beta"].shape)
    return p


def _readings(cfg):
    """Every reading of a head: as trained, and for RoPE each map of Definition 5 at kappa = 4 and a plain scale."""
    if not SCHEMES[cfg.scheme].rotary:
        return [Reading()]
    maps = [Reading.from_extension(extend(name, omega(cfg.d), 4, cfg.n_train)) for name in ("pi", "ntk", "yarn")]
    return [Reading(), Reading(logit_scale=1.7), *maps]


def _oracle(params, cfg, tokens, positions, reading):
    """Scores of the last position against every key, by the float64 PyTorch reference's terms of the scheme (each
    written there from the article's definitions, none through the head's hooks): no table of schemes here."""
    import torch

    from poskernels.model.reference import reference_terms, torch_params, torch_table

    terms, n = reference_terms(cfg.scheme), tokens.size
    assert np.array_equal(positions, np.arange(n))  # the reference's code reads positions 0..n-1
    tp = torch_params({k: v[None] for k, v in params.items()}, requires_grad=False)  # a stack of one
    H = torch_table(tp, cfg)[0][torch.as_tensor(tokens)]  # (n, d)
    if terms.code is not None:
        H = H + terms.code(tp, cfg, n, torch.float64).reshape(-1, n, cfg.d)[0]
    Q, K = H @ tp["W_Q"][0], H @ tp["W_K"][0]  # (n, d) each
    q = Q[-1]
    scale = reading.logit_scale
    if terms.turn is not None:
        q = terms.turn(q, cfg, positions[-1], torch.float64, query=True, reading=reading)
        K = terms.turn(K, cfg, positions, torch.float64, reading=reading)
    z = K @ q * scale / cfg.tau  # (n,)
    if terms.scale is not None:  # a logit scale of the n keys the query sees
        z = z * terms.scale(tp, cfg, n, torch.float64).reshape(-1)[0]
    if terms.bias is not None:
        r = np.rint(positions[-1] - positions).astype(np.int64)  # (n,) offsets t - j
        z = z + terms.bias(tp, cfg, Q[-1][None, None], r, torch.float64).reshape(-1)[-n:]
    return z.numpy()


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_score_against_the_terms_written_out(scheme):
    # oracle: the score built from the article's definitions with encodings.apply_rope and the bias functions
    cfg = HeadConfig(scheme=scheme)
    params = _heavy(cfg, 1)
    tokens = np.random.default_rng(2).integers(0, cfg.vocab, size=30)
    pos = np.arange(30.0)
    for reading in _readings(cfg):
        h = embed(params, cfg, tokens, pos)
        z = score(params, cfg, h[-1:] @ params["W_Q"], pos[-1:], h @ params["W_K"], pos, reading)[0]  # (n,)
        assert np.allclose(z, _oracle(params, cfg, tokens, pos, reading), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_the_training_forward_is_a_factoring_of_the_score(scheme):
    # stack_forward never forms a score per key; its attention must still be the softmax of the one score
    cfg = HeadConfig(scheme=scheme)
    params = _heavy(cfg, 3)
    rng = np.random.default_rng(4)
    tokens = rng.integers(0, cfg.vocab, size=(5, 32))  # the query token varies across sequences
    shifted = np.arange(32.0) + (0.0 if scheme == "learned" else 7.5)  # positions not 0..n-1 where allowed
    for pos in (np.arange(32.0), shifted):
        for reading in _readings(cfg):
            _, cache = query_forward(params, cfg, tokens, positions=pos, reading=reading)
            a = attention(cache["stack"])[0]  # (B, n)
            H = embed(params, cfg, tokens, pos)  # (B, n, d)
            z = score(params, cfg, H[:, -1:] @ params["W_Q"], pos[-1:], H @ params["W_K"], pos, reading)[:, 0]
            assert np.allclose(a, _softmax(z), rtol=1e-10, atol=1e-13), (reading, pos[0])


def test_the_rebound_polynomial_is_the_score():
    # Proposition 3 (iii): the rebound's polynomial at -r over tau is the score of the mean marked key at offset r
    cfg = HeadConfig(scheme="rope")
    head = SimpleNamespace(head=cfg, params=_heavy(cfg, 5), config=SimpleNamespace(task="cue"))
    T = token_table(head.params, cfg)
    t = np.full(256, 300.0)
    r = np.arange(256.0)
    q = T[query_token(N_SYMBOLS)] @ head.params["W_Q"]
    k = (T[token_id(np.arange(N_SYMBOLS), True)] @ head.params["W_K"]).mean(axis=0)
    for reading in _readings(cfg):
        z = pair_scores(head.params, cfg, q, t, k, t - r, Reading(reading.inv_freq))  # (R,)
        poly = marked_key_polynomial(head, reading=reading)
        assert np.allclose(poly(-r) / cfg.tau, z, rtol=1e-10, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(scheme=st.sampled_from(sorted(SCHEMES)), seed=st.integers(0, 2**32 - 1), shift=st.integers(0, 200))
def test_pairs_are_the_matrix_diagonal_and_rope_is_relative(scheme, seed, shift):
    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(seed)
    params = _heavy(cfg, int(rng.integers(1000)))
    q, k = rng.normal(size=(2, 12, cfg.d))
    tq = np.sort(rng.integers(0, 32, size=12)).astype(float)
    tk = np.sort(rng.integers(0, 32, size=12)).astype(float)
    seen = np.arange(1, 13)  # the keys each query sees, for a scale that reads it (s log n): the same both ways
    Z = score(params, cfg, q, tq, k, tk, n=seen)  # (12, 12)
    pairs = pair_scores(params, cfg, q, tq, k, tk, n=seen)
    assert np.allclose(pairs, np.diagonal(Z), rtol=1e-12, atol=1e-12)
    if SCHEMES[scheme].relative:  # no absolute code, no query position (FIRE's normaliser): only t - j
        assert np.allclose(score(params, cfg, q, tq + shift, k, tk + shift, n=seen), Z, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_the_readers_scores_are_the_definitions_bits(scheme):
    # the engine's scores skips the offsets of a head without a bias: the same numbers, bit for bit, for every scheme
    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(5)
    params = _heavy(cfg, 7)
    q, k = rng.normal(size=(2, 9, cfg.d))
    t, j = np.arange(3.0, 12.0), np.arange(9.0)
    for n in (None, np.arange(2, 11)):
        for reading in _readings(cfg):  # a turning head's turns from its rate's table: phi's bits
            assert np.array_equal(
                scores(params, cfg, q, t, k, j, reading, n=n), score(params, cfg, q, t, k, j, reading, n=n)
            )
    z = content_score(params, cfg, q, t, k, j)  # the first term: the score less its bias
    bias = SCHEMES[scheme].bias_at(params, cfg, q, t[:, None] - j[None, :], t[:, None])
    assert np.array_equal(score(params, cfg, q, t, k, j), z if bias is None else z + bias)


@pytest.mark.parametrize("scheme", [s for s in sorted(SCHEMES) if SCHEMES[s].rotary])
def test_a_pairs_turn_by_an_integer_offset_is_phis_bit_for_bit(scheme):
    # pair_scores turns a key by an integer offset j - t >= 0 from its rate's table; the definition turns by phi
    cfg = HeadConfig(scheme=scheme)
    params, rng = _heavy(cfg, 3), np.random.default_rng(9)
    q, k = rng.normal(size=(2, 12, cfg.d))
    tq = np.arange(12.0) + 5.0
    for tk in (tq, tq + rng.integers(0, 40, size=12)):  # offset 0 (a filing question's own key), and others
        for reading in _readings(cfg):
            theta = frequencies(cfg, reading)
            z = np.einsum("rd,rd->r", q, phi(k, tk - tq, theta)) * score_scale(params, cfg, reading, tq + 1.0, (12,))
            assert np.array_equal(pair_scores(params, cfg, q, tq, k, tk, reading), z)


#: The schemes whose bias promises to read no query vector: the engine reads their bias off one grid of the head's.
QUERY_FREE = [s for s, x in SCHEMES.items() if type(x).bias is not Scheme.bias and not x.bias_reads_query]


def _own_moved(cfg, seed):
    """A heavy head whose scheme's own parameters are moved off their initial values (FIRE's c and L, Kerple's r)."""
    p = _heavy(cfg, seed)
    rng = np.random.default_rng(seed + 200)
    base = init_params(HeadConfig(scheme="nope"), np.random.default_rng(0))
    return {k: v if k in base or k == "beta" else v + rng.normal(0.0, 0.5, v.shape) for k, v in p.items()}


def test_a_bias_that_promises_no_query_reads_none_and_shaws_reads_it():
    assert {"alibi", "t5", "kerple_log", "kerple_power", "fire", "fire_c1"} <= set(QUERY_FREE)
    assert "shaw" not in QUERY_FREE
    t = np.arange(20.0)[:, None]  # (20, 1) the queries' positions
    r = t - np.arange(20.0)[None, :]  # (20, 20) offsets
    for scheme in [*QUERY_FREE, "shaw"]:
        cfg = HeadConfig(scheme=scheme)
        params, (q1, q2) = _own_moved(cfg, 4), np.random.default_rng(6).normal(size=(2, 20, cfg.d))
        b1, b2 = (SCHEMES[scheme].bias_at(params, cfg, q, r, t) for q in (q1, q2))
        assert np.array_equal(b1, b2) == (scheme in QUERY_FREE), scheme  # Shaw's q a_min(r, K) moves with q


@pytest.mark.parametrize("scheme", QUERY_FREE)
def test_a_bias_of_no_query_is_read_off_the_heads_grid_bit_for_bit(scheme):
    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(8)
    for seed in (1, 2, 1):  # heads in turn: each reads its own grid, never the last head's
        params = _own_moved(cfg, seed)
        # a filing's questions (queries at 1..n against keys 0..n-1), a band's rows, a grid grown, positions not a run,
        # and a run past the largest grid kept
        for n, a in ((40, 0), (300, 0), (120, 7), (700, 0), (GRID_MAX + 5, GRID_MAX - 3)):
            q, k = rng.normal(size=(n - a, cfg.d)), rng.normal(size=(n, cfg.d))
            pos = np.arange(n + 1.0)
            assert np.array_equal(
                scores(params, cfg, q, pos[a + 1 :], k, pos[:n]), score(params, cfg, q, pos[a + 1 :], k, pos[:n])
            )
        tq, tk = np.array([3.0, 5.0, 9.0]), np.array([0.0, 2.5, 3.0])
        q, k = rng.normal(size=(2, 3, cfg.d))
        assert np.array_equal(scores(params, cfg, q, tq, k, tk), score(params, cfg, q, tq, k, tk))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), planes=st.integers(0, 6))
def test_rotate_is_complex_multiplication(seed, planes):
    # oracle: plane p as x[2p] + i x[2p+1], multiplied by e^{i angle_p}; planes past the angles untouched
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4, 12))
    angles = rng.normal(size=(4, planes)) * 50
    out = rotate(x, angles)
    z = (x[..., 0 : 2 * planes : 2] + 1j * x[..., 1 : 2 * planes : 2]) * np.exp(1j * angles)
    assert np.allclose(out[..., 0 : 2 * planes : 2], z.real) and np.allclose(out[..., 1 : 2 * planes : 2], z.imag)
    assert np.array_equal(out[..., 2 * planes :], x[..., 2 * planes :])
    theta, pos = omega(12), np.arange(4.0)
    assert np.array_equal(phi(x, pos, theta[:planes]), apply_rope(x, pos, theta, rotated_planes=planes))


def test_frequencies_and_a_rescaled_reading_of_a_head_that_does_not_turn():
    assert np.array_equal(frequencies(HeadConfig(scheme="rope", base=500.0)), omega(16, 500.0))
    with pytest.raises(PosKernelsError, match="rotary heads only"):
        score({}, HeadConfig(scheme="nope"), np.ones((1, 16)), [0.0], np.ones((1, 16)), [0.0], Reading(logit_scale=2.0))
    with pytest.raises(PosKernelsError, match=r"inv_freq must have shape \(8,\); got \(3,\)"):
        frequencies(HeadConfig(scheme="rope"), Reading(np.ones(3)))
