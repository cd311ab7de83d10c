"""The diagnostics on small heads, against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import apply_rope, omega, sinusoidal_code, t5_bucket
from poskernels.errors import PosKernelsError
from poskernels.experiments import rebound as rb
from poskernels.experiments import sinusoidal as sn
from poskernels.experiments.held_out import head_accuracy, heldout
from poskernels.experiments.rescaled import rescaled_reading
from poskernels.experiments.tournament import offset_kernel, tournament_jobs, tournament_table
from poskernels.model.all_positions import score_all
from poskernels.model.cache import load_json, save_json
from poskernels.model.cache_entry import CacheError
from poskernels.model.config import TrainConfig, preset
from poskernels.model.engine.one_head import accuracy
from poskernels.model.head import init_params, token_table
from poskernels.model.train import TrainedHead
from poskernels.theory.commutant import commutant_projection


def _head(scheme: str, seed: int = 0, scale: float = 3.0) -> TrainedHead:
    config = preset("tournament", scheme)
    params = {k: scale * v for k, v in init_params(config.head, np.random.default_rng(seed)).items()}
    return TrainedHead(config, seed, params, np.zeros(1), "")


def test_offset_score_is_the_heads_own_score():
    # oracle: rotate q at t and every marked key at t - r with encodings.apply_rope (Definition 4)
    head = _head("rope", 1)
    p = head.params
    E = token_table(p, head.head)  # (V, d) the embedding of every token
    t = 300
    r = np.arange(256)
    q = apply_rope((E[16] @ p["W_Q"])[None], [t], omega(16))[0]  # (d,)
    keys = E[8:16] @ p["W_K"]  # (8, d) the marked symbols
    ref = np.array([apply_rope(keys, np.full(8, t - k), omega(16)) @ q for k in r]).mean(axis=1) / 4.0
    assert np.allclose(rb.offset_scores(head, 255), ref)


def test_offset_score_matches_the_forward_pass():
    # the same score drives the head: log(a_j / a_t) = z_j - z_t in the one-pass reader's attention
    head = _head("rope", 2)
    p = head.params
    E = token_table(p, head.head)  # (V, d)
    q = E[16] @ p["W_Q"]
    for r in (1, 7, 40):
        tokens = np.full((1, r + 1), 3)
        tokens[0, 0], tokens[0, -1] = 8 + 5, 16  # symbol 5 marked, r positions before the query
        _, attention = score_all(p, head.head, tokens, return_attention=True)
        log_ratio = np.log(attention[0, -1, 0] / attention[0, -1, -1])
        z_self = q @ (E[16] @ p["W_K"]) / 4.0
        assert np.isclose(log_ratio, rb.marked_key_polynomial(head, keys=[13])(-r) / 4.0 - z_self)


def test_rebound_summary_landmarks():
    summary = rb.rebound_summary(_head("rope", 3))
    s = rb.offset_scores(_head("rope", 3))
    r = summary["first_trough"][0]
    assert summary["first_trough"][1] == s[r]
    assert s[r] <= s[r - 1] and s[r] < s[r + 1]  # a local minimum ...
    for i in range(1, r):  # ... and the first one past r = 0
        assert not (s[i] <= s[i - 1] and s[i] < s[i + 1]), i
    deepest, low = summary["deepest"]
    assert low == s[deepest] and all(low <= x for x in s)
    peak, high = summary["peak"]
    assert peak >= 32 and high == s[peak] and all(high >= x for x in s[32:])
    top = summary["top_plane"]
    assert all(summary["amplitudes"][top] >= a for a in summary["amplitudes"])
    with pytest.raises(PosKernelsError, match="RoPE head"):
        rb.rebound_summary(_head("alibi"))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 1000), st.integers(1, 40))
def test_projected_pos_pos_term_is_relative(seed, shift):
    # Theorem 2: with M replaced by Pi M, p(t) M p(j) depends only on t - j
    head = _head("sinusoidal", seed)
    M = sn.score_matrix(head.params)
    P = sinusoidal_code(np.arange(80), 16)
    S = P @ commutant_projection(M) @ P.T  # (80, 80)
    assert np.allclose(S[:-shift, :-shift], S[shift:, shift:])
    # and the shift the diagnostic adds is exactly (Pi M - M) at the query's row
    assert np.allclose(sn.projected_shift(head, 50), (P[49] @ (commutant_projection(M) - M) @ P[:50].T) / 4.0)


def test_projection_changes_nothing_for_a_relative_head():
    head = _head("sinusoidal", 4)
    p = dict(head.params)
    p["W_K"] = np.linalg.solve(p["W_Q"], commutant_projection(sn.score_matrix(p))).T  # M = W_Q W_K^T in the commutant
    relative = TrainedHead(head.config, 4, p, head.losses, "")
    assert np.allclose(sn.projected_shift(relative, 64), 0.0, atol=1e-9)
    x, y = heldout(64)
    assert sn.projected_accuracy(relative, x[:200], y[:200]) == accuracy(p, head.head, x[:200], y[:200])


def test_query_shift_puts_the_query_where_training_put_it():
    pos = sn.shifted_positions(256, 32)
    assert pos[-1] == 31 and np.all(np.diff(pos) == 1) and pos[0] == -224


def test_term_spreads_against_loops():
    head = _head("sinusoidal", 5)
    p = head.params
    x = heldout(32)[0][:40]
    M = p["W_Q"] @ p["W_K"].T
    P = sinusoidal_code(np.arange(32), 16)
    pp = [P[31] @ M @ P[j] / 4 for j in range(32)]
    E = token_table(p, head.head)  # (V, d)
    pc = [[P[31] @ M @ E[x[b, j]] / 4 for j in range(32)] for b in range(40)]
    cp = [E[16] @ M @ P[j] / 4 for j in range(32)]
    out = sn.term_spreads(head, x)
    assert np.isclose(out["pos_pos"], np.std(pp)) and np.isclose(out["content_pos"], np.std(cp))
    assert np.isclose(out["pos_content"], np.mean(np.std(pc, axis=1)))
    assert np.isclose(out["ratio"], out["pos_content"] / out["pos_pos"])


def test_defects_compare_training_with_its_own_start():
    from poskernels.model.train import train

    h = train(TrainConfig(head=preset("tournament", "sinusoidal").head, steps=3, batch=8), 7)
    before, after = sn.defects(h)
    assert 0.8 < before < 1.0 and 0.8 < after < 1.0 and before != after


def test_offset_kernels():
    for scheme in ("t5", "shaw"):
        h = _head(scheme, 6)
        if scheme == "t5":
            h.params["beta"][:] = np.arange(32.0)
            assert np.array_equal(offset_kernel(h, np.arange(300)), t5_bucket(-np.arange(300)).astype(float))
        else:
            q = token_table(h.params, h.head)[16] @ h.params["W_Q"]
            ref = [q @ h.params["A"][min(r, 31)] / 4 for r in range(100)]
            assert np.allclose(offset_kernel(h, np.arange(100)), ref)
    assert np.array_equal(offset_kernel(_head("alibi"), [0, 3]), [-0.0, -1.5])
    with pytest.raises(PosKernelsError, match="no bias"):
        offset_kernel(_head("rope"), [1])


def test_rescaled_reading_uses_the_map_at_n_over_L():
    h = _head("rope")
    assert np.allclose(rescaled_reading(h, "pi", 256).inv_freq, omega(16) / 8)
    assert np.allclose(rescaled_reading(h, "ntk", 32).inv_freq, omega(16))  # kappa = 1 inside the window
    with pytest.raises(PosKernelsError, match="RoPE"):
        rescaled_reading(_head("alibi"), "pi", 64)


def test_tables_from_readings():
    readings = {
        (s, k): {"accuracy": {"32": 0.5 + k / 10, "64": None if s == "learned" else 0.25}}
        for s in ("nope", "learned")
        for k in (0, 1, 2)
    }
    t = tournament_table(readings, ["nope", "learned"], (0, 1, 2), lengths=(32, 64))
    assert t["per_seed"]["nope"]["32"] == [0.5, 0.6, 0.7] and np.isclose(t["accuracy"]["nope"]["32"], 0.6)
    assert np.isclose(t["stderr"]["nope"]["32"], 0.1 / np.sqrt(3)) and t["seeds"] == [0, 1, 2]
    assert t["accuracy"]["learned"]["64"] is None and t["stderr"]["learned"]["64"] is None
    assert head_accuracy(_head("learned"), 64) is None
    assert len(tournament_jobs(extra=False, seeds=(0, 1, 2))) == 15


def test_result_json_is_verified(tmp_path):
    path = tmp_path / "r.json"
    save_json(path, {"a": {"64": 0.5, "32": 0.25}}, {"key": "k"})
    assert list(load_json(path, expect={"key": "k"})["a"]) == ["64", "32"]  # order kept
    with pytest.raises(CacheError, match="differs"):
        load_json(path, expect={"key": "other"})
    path.write_text(path.read_text().replace("0.5", "0.6"))
    with pytest.raises(CacheError, match="SHA-256"):
        load_json(path)
    path.write_text(path.read_text()[:20])
    with pytest.raises(CacheError, match="unreadable"):
        load_json(path)
