"""The lab's curves drawn from a head's weights: the score of a marked key against offset and position.

Oracle: the head's own forward pass.  With every key the same token, the attention weights of
:func:`poskernels.model.engine.one_head.query_forward` satisfy ``log a_j - log a_t = z_j - z_t``, which must equal
``marked_key_scores`` at ``(t, j)`` minus the query's score against itself.  Heads are drawn at random (the
function is the same for any weights), with T5's and Shaw's parameters randomized too.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, omega
from poskernels.experiments.curves import marked_key_scores
from poskernels.experiments.rebound import rebound_summary
from poskernels.experiments.tournament import ARTICLE_SCHEMES
from poskernels.extension import extend
from poskernels.model.config import preset
from poskernels.model.engine.one_head import query_forward
from poskernels.model.head import Reading, init_params, token_table
from poskernels.model.train import TrainedHead
from poskernels.tasks.cue import query_token, token_id
from poskernels.theory.rope import rope_offset_score

#: The relative schemes whose score at an offset is one number at every length (a logit scale of the key count,
#: the scaled softmax's, grows with the query's position), read from the registry.
RELATIVE = tuple(name for name, s in SCHEMES.items() if s.relative and not s.scale_grows)


def _head(scheme: str, seed: int) -> TrainedHead:
    config = preset("tournament", scheme)
    rng = np.random.default_rng(seed)
    params = init_params(config.head, rng)
    if scheme == "t5":
        params["beta"] = rng.normal(size=params["beta"].shape)  # init is zero: make the bias visible
    return TrainedHead(config, seed, params, np.zeros(0), "")


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(sorted(SCHEMES)), st.integers(0, 2**31), st.integers(0, 7), st.integers(2, 32))
def test_scores_match_the_heads_forward_pass(scheme, seed, symbol, n):
    head = _head(scheme, seed)
    key, query = int(token_id(symbol, True)), query_token()
    tokens = np.array([[key] * (n - 1) + [query]])  # (1, n)
    reading = None
    if scheme == "rope" and seed % 2:  # a rescaled reading too (YaRN: frequencies and a logit scale)
        reading = Reading.from_extension(extend("yarn", omega(16), 4, 32))
    _, cache = query_forward(head.params, head.head, tokens, reading=reading or Reading())
    a = cache["a"][0]  # (n,)
    t = np.full(n - 1, n - 1)
    z = marked_key_scores(head, t, np.arange(n - 1), reading, keys=[key])  # (n - 1,)
    z_self = marked_key_scores(head, [n - 1], [n - 1], reading, keys=[query])[0]
    np.testing.assert_allclose(z - z_self, np.log(a[:-1]) - np.log(a[-1]), atol=1e-9)


def _reading(name: str, n: int) -> Reading:
    return Reading.from_extension(extend(name, omega(16), n / 32, 32))  # Definition 5 at kappa = n / L


def test_rope_curve_is_proposition_3s_polynomial():
    # Proposition 3 (iii): <q, R(Delta) k> with q the query token's, k the mean marked key, read at Delta = -r
    head = _head("rope", 3)
    p = head.params
    E = token_table(p, head.head)  # (V, d)
    q = E[query_token()] @ p["W_Q"]  # (d,)
    k = (E[token_id(np.arange(8), True)] @ p["W_K"]).mean(axis=0)  # (d,)
    poly = rope_offset_score(q, k, omega(16))
    r = np.arange(256)
    t = np.full(r.size, 255)
    np.testing.assert_allclose(marked_key_scores(head, t, t - r), poly(-r) / head.head.tau, atol=1e-10)
    # PI at 256 = the same polynomial read at r / 8 (Definition 5: m -> m / kappa)
    pi = marked_key_scores(head, t, t - r, _reading("pi", 256))
    np.testing.assert_allclose(pi, poly(-r / 8) / head.head.tau, atol=1e-10)


@pytest.mark.parametrize("scheme", RELATIVE)
def test_relative_heads_are_flat_in_absolute_position(scheme):
    # Proposition 3 (i) / Definition 3: the score depends on the offset alone
    head = _head(scheme, 5)
    t = np.arange(7, 256)
    for r in (1, 7):
        s = marked_key_scores(head, t, t - r)
        np.testing.assert_allclose(s, s[0], atol=1e-9)


def test_absolute_heads_drift_and_the_learned_table_stops_at_its_length():
    t = np.arange(1, 256)
    s = marked_key_scores(_head("sinusoidal", 5), t, t - 1)
    assert np.ptp(s) > 1e-3  # Theorem 2: a generic M leaves the added code's score absolute
    learned = marked_key_scores(_head("learned", 5), t, t - 1)
    assert np.isfinite(learned[:31]).all() and np.isnan(learned[31:]).all()  # rows 0..31 only
    assert np.ptp(learned[:31]) > 1e-3


def test_payload_draws_these_curves_for_every_reader(monkeypatch, tmp_path):
    # the payload's plumbing on random heads (no training): readers, rounding, the learned table's gap, axes
    from poskernels.lab import common, trained, viz_payload

    schemes = list(ARTICLE_SCHEMES)  # the article's tournament rows, as the payload reads them
    monkeypatch.setattr(trained, "_tournament_heads", lambda src, names: {s: _head(s, 0) for s in names})
    summary = rebound_summary(_head("rope", 0))  # what numbers.json's rebound section carries
    curve = summary["curve"]
    numbers = {
        "tournament": {"accuracy": {s: {} for s in schemes}},
        "rescaled": {"accuracy": {r: {} for r in ("rope_pi", "rope_ntk", "rope_yarn")}},
        "rebound": {"0": summary},
    }
    p = viz_payload(numbers, cache_dir=tmp_path)
    sc, dr = p["scores"], p["drift"]
    assert [r["key"] for r in sc["readers"]] == schemes + ["rope_pi", "rope_ntk", "rope_yarn"]
    r = np.arange(256)
    t = np.full(256, 255)
    assert sc["scores"]["rope"] == common.rnd(curve, "score")  # read from numbers.json
    np.testing.assert_allclose(sc["scores"]["rope"], marked_key_scores(_head("rope", 0), t, t - r), atol=0.006)
    ntk = marked_key_scores(_head("rope", 0), t, t - r, _reading("ntk", 256))
    assert sc["scores"]["rope_ntk"] == common.rnd(ntk, "score")
    learned = sc["scores"]["learned"]
    assert None not in learned[:32] and set(learned[32:]) == {None}
    values = [v for s in sc["scores"].values() for v in s if v is not None]
    assert sc["y"]["min"] <= min(values) and max(values) <= sc["y"]["max"]
    assert len(set(dr["scores"]["rope"])) == 1 and len(set(dr["scores"]["sinusoidal"])) > 1  # flat, and drifting
    assert dr["positions"][0] == dr["offset"] and dr["window"] == 32


def test_ropes_curve_is_the_rebound_curve_of_numbers_json(monkeypatch, tmp_path):
    # RoPE's score against offset is read from numbers.json (rebound.<seed>.curve), never recomputed from the head
    from poskernels.errors import PosKernelsError
    from poskernels.lab import trained, viz_payload

    monkeypatch.setattr(trained, "_tournament_heads", lambda src, names: {s: _head(s, 0) for s in names})
    marked = [1000.0 + k for k in range(256)]  # no head gives this curve
    summary = {**rebound_summary(_head("rope", 0)), "curve": marked}
    numbers = {"tournament": {"accuracy": {"rope": {}}, "seeds": [7]}, "rebound": {"7": summary}}
    assert viz_payload(numbers, cache_dir=tmp_path)["scores"]["scores"]["rope"] == marked
    absent = viz_payload({"tournament": numbers["tournament"]}, cache_dir=tmp_path)["scores"]
    assert "rebound" in absent["absent"]
    numbers["rebound"]["7"]["curve"] = marked[:10]
    with pytest.raises(PosKernelsError, match="10 offsets"):
        viz_payload(numbers, cache_dir=tmp_path)


def test_each_curve_reads_its_own_head(monkeypatch, tmp_path):
    # a reader is a scheme's head read through a map: RoPE + SSMax and randomized RoPE read their own heads (their
    # keys start with rope_ but they are not RoPE re-read), RoPE + PI / NTK / YaRN read the RoPE head through a map
    from poskernels.experiments.curves import reader_of
    from poskernels.lab import common, trained, viz_payload

    schemes = ["rope", "alibi", "rope_ssmax", "rope_randpos", "p_rope"]
    own = {s: _head(s, 11 + k) for k, s in enumerate(schemes)}  # a different draw per scheme
    for h in own.values():  # scores of a trained head's size (an initial head's are ~0.01, below the rounding)
        h.params["W_Q"] = h.params["W_Q"] * 1000
    asked = []

    def heads(src, names):
        asked.append(list(names))
        return {s: own.setdefault(s, _head(s, 99)) for s in names}

    monkeypatch.setattr(trained, "_tournament_heads", heads)
    numbers = {
        "tournament": {"accuracy": {s: {} for s in schemes}},
        "rescaled": {"accuracy": {r: {} for r in ("rope_pi", "rope_ntk", "rope_yarn")}},
        "rebound": {"0": rebound_summary(own["rope"])},
    }
    sc = viz_payload(numbers, cache_dir=tmp_path)["scores"]
    assert any("rope_ssmax" in a and "rope_randpos" in a for a in asked)
    r = np.arange(256)
    t = np.full(256, 255)
    for entry in sc["readers"]:
        key = entry["key"]
        head, m = reader_of(key)
        assert (entry["head"], entry["map"]) == (head, m)
        reading = None if m == "none" else _reading(m, 256)
        expected = marked_key_scores(own[head], t, t - r, reading)
        np.testing.assert_allclose(sc["scores"][key], common.rnd(expected, "score"), atol=0.006, err_msg=key)
    rope = np.asarray(sc["scores"]["rope"])
    for key in ("rope_ssmax", "rope_randpos"):  # not plain RoPE's curve
        assert np.max(np.abs(np.asarray(sc["scores"][key]) - rope)) > 1.0, key
    assert [e["map"] for e in sc["readers"] if e["key"].startswith("rope")] == ["none"] * 3 + ["pi", "ntk", "yarn"]
