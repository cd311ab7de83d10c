"""The probe on tiny models the tests write themselves: a planted rotary head's kernel and plane split against
Proposition 3 (iii)'s closed form, a sinusoidal table's Toeplitz defects (Theorem 1), Gemma 3's two RoPEs per
layer type, and the bad inputs (one line, exit 2)."""

import json

import numpy as np
import pytest
import torch

from poskernels.census.probe.capture import capturing, register, unrotated
from poskernels.census.probe.corpus import filings_text, stdlib_text, text_sha256
from poskernels.census.probe.report import rebound_summary
from poskernels.census.probe.run import probe, rope_census
from poskernels.cli import main
from poskernels.encodings import from_half_split, rotate, to_half_split
from poskernels.theory import empirical as E
from poskernels.theory.rope import plane_products
from probe_models import planted_bert, planted_llama, tiny_gemma3, write_gguf


def test_planted_rope_head_equals_proposition_3(tmp_path):
    model = planted_llama(tmp_path / "llama")
    T = 48
    result = probe(str(tmp_path / "llama"), length=T, sample=T, cache=tmp_path / "cache")
    att = model.model.layers[0].self_attn
    with torch.no_grad():
        h0 = model.model.layers[0].input_layernorm(model.model.embed_tokens.weight[:1])[0]
        q = from_half_split(att.q_proj(h0).view(2, 16).numpy().astype(float))  # (heads, d), pairs
        k = from_half_split(att.k_proj(h0).view(1, 16).numpy().astype(float))
    theta = np.asarray(result["census"]["None"]["theta"])
    grid = np.asarray(result["plane_offsets"])
    for h, head in enumerate(result["layers"][0]["heads"]):
        hp = plane_products(q[h], k[0])
        closed = att.scaling * np.real(hp[:, None] * np.exp(-1j * np.outer(theta, grid)))
        assert np.allclose(head["plane_split"], closed, atol=2e-4)
        dense = np.asarray(result["offsets"])
        whole = att.scaling * np.real(hp[:, None] * np.exp(-1j * np.outer(theta, dense))).sum(0)
        assert np.allclose(head["kernel"], whole, atol=2e-4)
        assert head["kernel_error"] < 1e-4  # one score per offset: the sample's error vanishes
    assert result["summary"]["max_plane_sum_error"] < 1e-4
    assert result["census"]["None"]["base"] == 10_000.0
    L = result["census"]["None"]["training_length"]
    for h, head in enumerate(result["layers"][0]["heads"]):  # the head's polynomial, and where it rebounds past L
        closed = att.scaling * plane_products(q[h], k[0])
        got = np.asarray(head["polynomial"][0]) + 1j * np.asarray(head["polynomial"][1])
        assert np.allclose(got, closed, rtol=1e-4, atol=1e-5 * np.abs(closed).max())
        want = E.polynomial_rebound(closed, theta, L, 4 * L)
        assert head["rebound"]["rebounds"] == want["rebounds"]
        assert head["rebound"]["height"] == pytest.approx(want["height"], abs=1e-4 * np.abs(closed).sum())
    rb = [h["rebound"] for layer in result["layers"] for h in layer["heads"]]
    summary = rebound_summary(result)["None"]
    assert summary["share"] == np.mean([r["rebounds"] for r in rb]) and summary["horizon"] == 4 * L
    assert summary["overtake_share"] == np.mean([r["height"] >= r["fall"] for r in rb])


def test_sinusoidal_table_is_stationary_and_a_commuting_head_too(tmp_path):
    planted_bert(tmp_path / "bert")
    result = probe(str(tmp_path / "bert"), length=40, sample=16, cache=tmp_path / "cache")
    a = result["absolute"]
    assert a["gram_defect"] < 1e-10 and a["sinusoidal_defect"] < 1e-20
    assert a["random_table_defect"]["lo"] > 0.3
    for head in a["heads"]:
        assert head["defect"] < 1e-10 < 0.1 < head["random_lo"]


def test_gemma3_rope_turn_per_layer_type_is_the_census():
    register()
    model = tiny_gemma3()
    model.set_attn_implementation("poskernels_probe")
    ids = torch.arange(20)[None] % 64
    caps = []
    with torch.no_grad(), unrotated(model) as pre, capturing(caps.append):
        model(input_ids=ids)
    census = rope_census(model.config)
    assert set(census) == {"sliding_attention", "full_attention"}
    for cap, kind in zip(caps, model.config.layer_types):
        theta = np.asarray(census[kind]["theta"])
        angles = np.arange(20)[:, None] * theta
        for which, got in (("q", cap.query), ("k", cap.key)):
            x = pre[cap.layer][which][0].numpy().astype(float)
            turned = to_half_split(rotate(from_half_split(x), angles))
            assert np.max(np.abs(turned - got[0].numpy())) < 1e-6 * max(1.0, np.abs(x).max())


def _fail(capsys, argv):
    capsys.readouterr()
    assert main(["-q", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("poskernels probe: error:"), err
    return err[0]


def test_bad_inputs_one_line_exit_2(tmp_path, capsys):
    assert "no such name" in _fail(capsys, ["probe", str(tmp_path / "nothing")])
    (tmp_path / "notes.txt").write_text("hello")
    assert "not a GGUF file" in _fail(capsys, ["probe", str(tmp_path / "notes.txt")])
    (tmp_path / "empty").mkdir()
    assert "without config.json" in _fail(capsys, ["probe", str(tmp_path / "empty")])
    write_gguf(tmp_path / "odd.gguf", "no-such-architecture")
    assert "cannot load" in _fail(capsys, ["probe", str(tmp_path / "odd.gguf")])
    good = tmp_path / "good.gguf"
    write_gguf(good, "llama")
    (tmp_path / "cut.gguf").write_bytes(good.read_bytes()[:40])
    assert "corrupt or truncated" in _fail(capsys, ["probe", str(tmp_path / "cut.gguf")])
    planted_bert(tmp_path / "bert")
    line = _fail(capsys, ["probe", str(tmp_path / "bert"), "--length", "65"])
    assert "65" in line and "2..64" in line
    planted_llama(tmp_path / "llama")
    line = _fail(capsys, ["probe", str(tmp_path / "llama"), "--length", str(10**7), "--cache", str(tmp_path / "c")])
    assert "would need" in line and "GiB" in line
    assert "positive integer" in _fail(capsys, ["probe", str(tmp_path / "llama"), "--sample", "0"])
    line = _fail(capsys, ["probe", str(tmp_path / "llama"), "--corpus", "filing", "--cache", str(tmp_path / "c")])
    assert "'filing'" in line and "accepted stdlib, filings" in line


def test_the_filings_corpus_is_read_and_recorded(tmp_path, capsys):
    planted_llama(tmp_path / "llama")
    out = tmp_path / "probe.json"
    assert main(["-q", "probe", str(tmp_path / "llama"), "--length", "24", "--corpus", "filings", "--json", str(out),
                 "--cache", str(tmp_path / "c")]) == 0  # fmt: skip
    p = json.loads(out.read_text())["provenance"]
    text = filings_text()
    assert p["corpus"] == "filings" and p["text_sha256"] == text_sha256(text) != text_sha256(stdlib_text())
    assert "--corpus filings" in p["command"] and "synthetic filings" in p["text"]
    assert text == filings_text() and text.count("\n\n") == 399  # 400 filings, one paragraph each, seeded


def test_a_model_without_attention_is_refused(tmp_path, capsys):
    from transformers import MambaConfig, MambaForCausalLM

    from probe_models import save_tokenizer

    MambaForCausalLM(MambaConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, state_size=4,
                                 architectures=["MambaForCausalLM"])).save_pretrained(tmp_path / "mamba")  # fmt: skip
    save_tokenizer(tmp_path / "mamba")
    line = _fail(capsys, ["probe", str(tmp_path / "mamba"), "--length", "8", "--cache", str(tmp_path / "c")])
    assert "attention" in line


def test_json_through_the_writer(tmp_path, capsys):
    planted_llama(tmp_path / "llama")
    out = tmp_path / "probe.json"
    assert main(["-q", "probe", str(tmp_path / "llama"), "--length", "24", "--json", str(out),
                 "--cache", str(tmp_path / "c"), "--figures", str(tmp_path / "figs")]) == 0  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["llama-energy.png", "llama-kernels.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in (tmp_path / "figs").iterdir())
    data = json.loads(out.read_text())
    assert data["provenance"]["tokens"] == 24 and len(data["layers"]) == 2
    assert "sinks" in capsys.readouterr().out
