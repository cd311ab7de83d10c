"""The head: the one-pass reader against the per-prefix forward, readings, errors, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.encodings import SCHEMES, apply_rope, omega, sinusoidal_code
from poskernels.errors import PosKernelsError
from poskernels.extension import extend
from poskernels.model.all_positions import score_all
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.engine.one_head import query_forward, query_logits
from poskernels.model.head import Reading, init_params, token_table
from poskernels.model.train import train
from poskernels.tasks.cue import cue_batch


def _heavy(cfg, seed):
    # weights larger than at init, so that attention is peaked and a wrong score would show
    return {k: 3.0 * v for k, v in init_params(cfg, np.random.default_rng(seed)).items()}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_one_pass_equals_the_forward_on_every_prefix(scheme):
    cfg = HeadConfig(scheme=scheme, n_train=40)
    params = _heavy(cfg, 1)
    rng = np.random.default_rng(2)
    tokens = rng.integers(0, cfg.vocab, size=(3, 40))  # any stream, the query token varies
    every = score_all(params, cfg, tokens)  # (3, 40, C)
    for t in range(40):
        ref = query_logits(params, cfg, tokens[:, : t + 1])
        assert np.allclose(every[:, t], ref, rtol=1e-10, atol=1e-10), t


@pytest.mark.parametrize("name", ["none", "pi", "ntk", "yarn"])
def test_one_pass_equals_the_forward_under_a_reading(name):
    cfg = HeadConfig(scheme="rope")
    params = _heavy(cfg, 3)
    reading = Reading.from_extension(extend(name, omega(16), 4, 32))
    tokens, _ = cue_batch(np.random.default_rng(4), 2, 90)
    every = score_all(params, cfg, tokens, reading=reading)
    for t in (0, 31, 63, 89):
        assert np.allclose(every[:, t], query_logits(params, cfg, tokens[:, : t + 1], reading=reading))


def test_rope_scores_against_an_independent_rotation():
    # oracle: the head's RoPE score equals <R(t) q, R(j) k> / tau built with encodings.apply_rope
    cfg = HeadConfig(scheme="rope")
    params = _heavy(cfg, 5)
    tokens, _ = cue_batch(np.random.default_rng(6), 1, 20)
    _, attention = score_all(params, cfg, tokens, return_attention=True)
    H = token_table(params, cfg)[tokens[0]]  # (n, d)
    Q = apply_rope(H @ params["W_Q"], np.arange(20), omega(16))
    K = apply_rope(H @ params["W_K"], np.arange(20), omega(16))
    S = Q[-1] @ K.T / 4.0  # (n,) the last query's scores
    ref = np.exp(S - S.max()) / np.exp(S - S.max()).sum()
    assert np.allclose(attention[0, -1], ref)


def test_sinusoidal_head_adds_the_code_of_definition_2():
    cfg = HeadConfig(scheme="sinusoidal")
    params = _heavy(cfg, 7)
    tokens, _ = cue_batch(np.random.default_rng(8), 1, 12)
    H = token_table(params, cfg)[tokens[0]] + sinusoidal_code(np.arange(12), 16)  # (n, d)
    S = (H[-1] @ params["W_Q"]) @ (H @ params["W_K"]).T / 4.0
    A = np.exp(S - S.max()) / np.exp(S - S.max()).sum()
    logits = (A @ (H @ params["W_V"])) @ params["W_O"]
    assert np.allclose(query_logits(params, cfg, tokens)[0], logits)


def test_positions_shift_only_what_depends_on_absolute_position():
    tokens, _ = cue_batch(np.random.default_rng(9), 4, 50)
    shifted = np.arange(50) - 20.0  # negative and fractional-free shift
    for scheme in (name for name, s in SCHEMES.items() if s.relative):  # relative: a shift changes nothing
        cfg = HeadConfig(scheme=scheme)
        p = _heavy(cfg, 10)
        assert np.allclose(query_logits(p, cfg, tokens), query_logits(p, cfg, tokens, positions=shifted))
    cfg = HeadConfig(scheme="sinusoidal")
    p = _heavy(cfg, 10)
    assert not np.allclose(query_logits(p, cfg, tokens), query_logits(p, cfg, tokens, positions=shifted))


def test_learned_table_is_undefined_past_its_length():
    cfg = HeadConfig(scheme="learned")
    params = init_params(cfg, np.random.default_rng(0))
    tokens, _ = cue_batch(np.random.default_rng(1), 2, 33)
    for fn in (query_logits, score_all):
        with pytest.raises(PosKernelsError, match="0..31"):
            fn(params, cfg, tokens)
    with pytest.raises(PosKernelsError, match="integer positions"):
        query_logits(params, cfg, tokens[:, :32], positions=np.arange(32) / 2)


def test_bad_inputs_raise_the_library_error():
    cfg = HeadConfig()
    params = init_params(cfg, np.random.default_rng(0))
    with pytest.raises(PosKernelsError, match="token ids"):
        query_logits(params, cfg, np.array([[0, 17]]))
    with pytest.raises(PosKernelsError, match="2-d integer"):
        query_logits(params, cfg, np.zeros((2, 3)))
    with pytest.raises(PosKernelsError, match="rotary heads only"):
        query_logits(params, cfg, np.array([[0, 16]]), reading=Reading(logit_scale=2.0))
    with pytest.raises(PosKernelsError, match="unknown scheme"):
        HeadConfig(scheme="bogus")
    with pytest.raises(PosKernelsError, match="steps"):
        TrainConfig(steps=0)
    with pytest.raises(PosKernelsError, match="positions must have shape"):
        query_forward(params, cfg, np.array([[0, 16]]), positions=[0, 1, 2])


def test_same_seed_same_weights_bit_for_bit():
    config = TrainConfig(head=HeadConfig(scheme="rope"), steps=30, batch=32)
    a, b = train(config, 4), train(config, 4)
    for k in a.params:
        assert np.array_equal(a.params[k], b.params[k])
    assert np.array_equal(a.losses, b.losses)
    c = train(config, 5)
    assert not np.array_equal(a.params["E"], c.params["E"])


def test_schemes_with_one_seed_see_the_same_training_stream():
    # the seed splits into an initialization stream and a data stream; the data stream is shared
    from poskernels.model.train_loop import _fit  # noqa: PLC2701 - the stream is an internal detail

    seen = {}

    def spy(rng, batch, n):
        tokens, targets = cue_batch(rng, batch, n)
        seen.setdefault(scheme, []).append(tokens)
        return tokens, targets

    for scheme in ("nope", "shaw"):
        _fit(TrainConfig(head=HeadConfig(scheme=scheme), steps=3, batch=4), [0], spy, None, 0)
    assert all(np.array_equal(x, y) for x, y in zip(seen["nope"], seen["shaw"]))


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_attention_of_a_forward_pass_is_the_readers_last_row(scheme):
    # whichever path the forward took (weighted counts, RoPE's gather, per key), the weights it implies are the
    # one-pass reader's, also when the sequences end with different tokens (several query rows)
    from poskernels.model.engine.stack import attention

    cfg = HeadConfig(scheme=scheme)
    params = _heavy(cfg, 12)
    tokens = np.random.default_rng(13).integers(0, cfg.vocab, size=(5, 20))
    _, cache = query_forward(params, cfg, tokens)
    _, ref = score_all(params, cfg, tokens, return_attention=True)
    np.testing.assert_allclose(attention(cache["stack"])[0], ref[:, -1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cache["a"], ref[:, -1], rtol=1e-9, atol=1e-12)  # the single head's cache holds them
