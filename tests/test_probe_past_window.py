"""``poskernels probe MODEL --past-window`` on a tiny Llama the tests write (a window of 64 positions, 128 tokens):
each reading's loss by position against transformers' own forward pass of a model loaded fresh with that
``rope_parameters`` block in its config.json, the frequencies against ``ROPE_INIT_FUNCTIONS`` and the census, the
cache (no forward pass on a second run; a corrupt entry read again) and the refusals (one line, exit 2, no work)."""

import json
import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from poskernels.census.probe import past_window as pw
from poskernels.census.probe import past_window_net as pwn
from poskernels.census.probe.past_window_report import render
from poskernels.cli import main
from probe_models import tiny_llama

T, WINDOW = 128, 64


def _direct_losses(folder):
    """Cross-entropy of each next token from transformers' forward pass of a model loaded fresh from ``folder``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from poskernels.census.probe.corpus import stdlib_text

    net = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    ids = AutoTokenizer.from_pretrained(folder)(stdlib_text(), return_tensors="pt").input_ids[:, :T]
    with torch.no_grad():
        logits = net(input_ids=ids).logits[0]
    return F.cross_entropy(logits[:-1], ids[0, 1:], reduction="none").double().numpy()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The tiny model, one --past-window run with every reading's per-position losses recorded, and its result."""
    root = tmp_path_factory.mktemp("past")
    tiny_llama(root / "llama", window=WINDOW)
    got = {}

    def forward(net, ids, on_layer):
        loss = pwn.position_losses(net, ids, on_layer)
        got[len(got)] = loss
        return loss

    result = pw.past_window(str(root / "llama"), T, width=16, cache=root / "cache", forward=forward)
    losses = dict(zip([n for n in pw.READINGS if "bins" in result["readings"][n]], got.values()))
    return root, result, losses


def test_plain_reading_is_transformers_cross_entropy(run):
    root, result, losses = run
    direct = _direct_losses(root / "llama")
    assert losses["plain"].shape == (T - 1,)
    assert np.max(np.abs(losses["plain"] - direct)) < 1e-5
    assert result["readings"]["plain"]["mean_past"] == pytest.approx(losses["plain"][WINDOW:].mean(), abs=1e-12)
    assert result["readings"]["plain"]["bins"][0] == pytest.approx(losses["plain"][:16].mean(), abs=1e-12)


@pytest.mark.parametrize("name", ["linear", "ntk", "yarn", "dynamic"])
def test_each_map_is_its_block_loaded_fresh_by_from_pretrained(run, name, tmp_path):
    root, result, losses = run
    row = result["readings"][name]
    folder = tmp_path / name
    shutil.copytree(root / "llama", folder)
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"] = row["rope_parameters"]
    config["max_position_embeddings"] = row["max_position_embeddings"]
    (folder / "config.json").write_text(json.dumps(config))
    direct = _direct_losses(folder)
    assert np.max(np.abs(losses[name] - direct)) < 1e-5
    assert np.max(np.abs(losses[name] - losses["plain"])[WINDOW:]) > 1e-3  # the map changes the reading


def test_rotary_frequencies_are_transformers_and_the_census(run):
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    root, result, _ = run
    net = AutoModelForCausalLM.from_pretrained(root / "llama", dtype=torch.float32).eval()
    raw = AutoConfig.from_pretrained(root / "llama").to_dict()
    for name in pw.READINGS[1:]:
        row = result["readings"][name]
        pwn.apply_block(net, raw, row["rope_parameters"], row["max_position_embeddings"])
        _, rotary = pwn.rotary_module(net)
        kind = row["rope_parameters"]["rope_type"]
        with torch.no_grad():  # dynamic NTK moves its frequencies at the sequence length
            rotary(torch.zeros(1, T, 1), torch.arange(T)[None])
        if kind != "default":  # transformers' own function of the config, at this sequence length
            own, _ = ROPE_INIT_FUNCTIONS[kind](rotary.config, seq_len=T)
            assert torch.allclose(rotary.inv_freq, own), name
        census = np.asarray(row["verdicts"]["inv_freq"])
        assert np.allclose(rotary.inv_freq.double().numpy(), census, rtol=1e-6), name


def test_the_cache_skips_the_forward_and_rebuilds_a_corrupt_entry(run):
    root, result, _ = run
    calls = []

    def forward(net, ids, on_layer):
        calls.append(1)
        return pwn.position_losses(net, ids, on_layer)

    again = pw.past_window(str(root / "llama"), T, width=16, cache=root / "cache", forward=forward)
    assert calls == [] and again["readings"]["yarn"]["bins"] == result["readings"]["yarn"]["bins"]
    files = sorted((root / "cache" / "probe").glob("past-window-*.json"))
    assert len(files) == 5
    yarn = next(f for f in files if f.name.startswith("past-window-yarn-"))
    yarn.write_text(yarn.read_text()[:100])  # a truncated entry
    lines = []
    third = pw.past_window(str(root / "llama"), T, width=16, cache=root / "cache", forward=forward, log=lines.append)
    assert len(calls) == 1 and any("corrupt" in line and "yarn" in line for line in lines)
    assert third["readings"]["yarn"]["bins"] == result["readings"]["yarn"]["bins"]
    assert json.loads(yarn.read_text())["key"]["map"] == "yarn"
    yarn.unlink()  # a run that did not reach YaRN, shipped as it stands: no forward pass, YaRN marked not read
    part = pw.past_window(str(root / "llama"), T, width=16, cache=root / "cache", forward=forward, cached_only=True)
    assert len(calls) == 1 and "not in the cache" in part["readings"]["yarn"]["not_read"]
    assert part["readings"]["linear"]["bins"] == result["readings"]["linear"]["bins"]
    assert "YaRN: not read" in render(part)


def test_the_command_table_json_and_figure(run, tmp_path, capsys):
    root, result, _ = run
    out = tmp_path / "past.json"
    assert (
        main(
            [
                "-q",
                "probe",
                str(root / "llama"),
                "--past-window",
                "--length",
                str(T),
                "--bin",
                "16",
                "--cache",
                str(root / "cache"),
                "--json",
                str(out),
                "--figures",
                str(tmp_path / "figs"),
            ]
        )
        == 0
    )
    assert (tmp_path / "figs" / "llama-past-window.png").read_bytes()[:4] == b"\x89PNG"
    data = json.loads(out.read_text())
    assert data["readings"]["linear"]["bins"] == result["readings"]["linear"]["bins"]
    text = capsys.readouterr().out
    assert text.strip() == render(data) and "NTK-aware" in text and f"past (>={WINDOW})" in text


def _fail(capsys, argv):
    capsys.readouterr()
    assert main(["-q", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("poskernels probe: error:"), err
    return err[0]


def test_refusals_before_any_work(run, capsys, monkeypatch, tmp_path):
    root, _, _ = run
    import poskernels.census.probe.models as models

    def no_load(res):
        raise AssertionError("a refused run loaded the model")

    monkeypatch.setattr(models, "load", no_load)
    llama = ["probe", str(root / "llama"), "--past-window", "--cache", str(tmp_path / "c")]
    for bad in ("1", "0.5", "nan", "inf", "-2"):
        assert "finite number above 1" in _fail(capsys, [*llama, "--factor", bad])
    line = _fail(capsys, [*llama, "--length", str(WINDOW)])
    assert f"{WINDOW} tokens" in line and f"accepted {WINDOW + 1}" in line
    assert "only with --past-window" in _fail(capsys, ["probe", str(root / "llama"), "--factor", "2"])
    line = _fail(capsys, ["probe", "minilm-l6", "--past-window", "--cache", str(tmp_path / "c")])
    assert "no RoPE" in line and "learned position table" in line
    monkeypatch.setattr("poskernels.census.probe.run.available_memory", lambda: 1000)
    line = _fail(capsys, [*llama, "--length", str(T)])
    assert "would need" in line and "GiB" in line


def test_memory_estimate_grows_with_the_length_and_stays_far_below_eager():
    from transformers import LlamaConfig

    cfg = LlamaConfig(
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        head_dim=64,
        vocab_size=49152,
    )  # SmolLM2-135M's shape
    a, b = pw.needed_memory(cfg, 8192), pw.needed_memory(cfg, 16384)
    assert a < b < 8 * 2**30 < 4 * 16384**2 * 9  # one layer of eager weights at 16,384 would be 9 GiB


def test_shipped_past_window_and_the_docs_page_agree():
    from poskernels.census.probe.models import MODELS
    from poskernels.census.probe.ship_past_window import DOCS, FIGURES, LENGTHS, docs_block, shipped

    results = shipped()
    assert set(results) == set(LENGTHS), "run `make probe`"
    for name, result in results.items():
        assert result["provenance"]["sha256"] == MODELS[name].sha256
        assert result["length"] == LENGTHS[name] == 2 * result["window"] and result["factor"] == 2
        assert all("bins" in result["readings"][n] for n in pw.READINGS), "a reading is missing"
        assert (FIGURES / f"{name}-past-window.png").read_bytes()[:4] == b"\x89PNG"
    assert docs_block(results) in DOCS.read_text(), "docs/guide/probe.md is stale: run `make probe`"


def test_the_guides_sentences_hold_on_the_shipped_reading():
    """Each sentence of docs/guide/probe.md's "What the readings show", against the shipped file."""
    from poskernels.census.probe.ship import shipped as shipped_probe
    from poskernels.census.probe.ship_past_window import shipped
    from poskernels.page.window import ARTICLE_RESCALED

    r = shipped()["smollm2-135m"]["readings"]
    L, w = shipped()["smollm2-135m"]["window"], shipped()["smollm2-135m"]["bin"]
    plain, maps = r["plain"], ("linear", "ntk", "yarn", "dynamic")
    assert plain["mean_past"] > plain["mean_inside"] + 1  # far above its loss inside
    assert plain["bins"][L // w] < plain["mean_inside"] + 0.5 < plain["mean_inside"] + 2 < max(plain["bins"][L // w :])
    assert all(r[m]["mean_past"] < plain["mean_past"] for m in maps)  # every map lowers the loss past the window
    never = shipped_probe()["smollm2-135m"]["census"]["None"]["never_full_turn"]
    turned = [p for p in range(32) if p not in never]
    assert len(turned) > 16 and r["linear"]["verdicts"]["planes_changed"] == turned  # PI moves every turned plane
    assert r["linear"]["mean_inside"] == max(r[n]["mean_inside"] for n in pw.READINGS)
    assert r["linear"]["mean_past"] == max(r[m]["mean_past"] for m in maps)
    theta = np.asarray(plain["verdicts"]["inv_freq"])
    ntk = np.asarray(r["ntk"]["verdicts"]["inv_freq"]) / theta
    pi = np.asarray(r["linear"]["verdicts"]["inv_freq"]) / theta
    assert ntk[0] == pytest.approx(1) and 0.95 < ntk[1] < 0.99 and np.allclose(pi, 0.5)
    assert r["yarn"]["verdicts"]["planes_changed"][0] > 0  # YaRN leaves the fastest planes untouched
    assert r["ntk"]["verdicts"]["unseen_planes"] and not r["yarn"]["verdicts"]["unseen_planes"]
    assert not r["dynamic"]["verdicts"]["unseen_planes"]
    assert abs(r["ntk"]["mean_past"] - r["yarn"]["mean_past"]) < 0.1
    for m in ("ntk", "yarn", "dynamic"):
        assert abs(r[m]["mean_inside"] - plain["mean_inside"]) < 0.1
        assert abs(r[m]["mean_past"] - r[m]["mean_inside"]) < 0.1
    at64 = {k: v["64"] for k, v in ARTICLE_RESCALED.items()}  # the article: PI and YaRN tie, NTK-aware below
    assert at64["rope_pi"] == at64["rope_yarn"] > at64["rope_ntk"] > at64["rope"]
