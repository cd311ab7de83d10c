"""``poskernels census``: configs read right, Theorem 5 per plane, JSON and PNG outputs, and bad input refused.

Oracles: the wavelengths and full-turn planes against Theorem 5 (i) written out, the corrected constant
against a 50-digit sum, every map against the registry called directly.  Snapshot: the article's ratio
1.15 of the corrected to the published constant at ``d = 128`` (Theorem 5 (iv) discussion,
"1.15 times at d = 128"), which Llama 2 7B's config (``b = 10**4``, ``d = 128``) reproduces.
"""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest

from poskernels import cli
from poskernels.census import census
from poskernels.census.config import bundled_configs, config_extension, load_config, parse_config
from poskernels.errors import PosKernelsError
from poskernels.extension import MAPS, extend

LLAMA2 = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_theta": 10000.0}


def _run(capsys, *argv):
    code = cli.main(["census", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_bundled_names_cover_the_issue_models():
    assert {"llama-2-7b", "llama-3-8b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b-yarn", "phi-3-mini-128k"} <= set(
        bundled_configs()
    )


@pytest.mark.parametrize(
    ("name", "d", "b", "L", "rope_type", "target"),
    [
        ("llama-2-7b", 128, 1e4, 4096, "default", 16384),
        ("llama-3-8b", 128, 5e5, 8192, "default", 32768),
        ("llama-3.1-8b", 128, 5e5, 8192, "llama3", 131072),
        ("mistral-7b", 128, 1e4, 32768, "default", 131072),
        ("qwen2.5-7b-yarn", 128, 1e6, 32768, "yarn", 131072),
        ("phi-3-mini-128k", 96, 1e4, 4096, "longrope", 131072),
    ],
)
def test_bundled_configs_read(name, d, b, L, rope_type, target):
    cfg = load_config(name)
    assert (cfg.rotary_dim, cfg.base, cfg.training_length, cfg.rope_type) == (d, b, L, rope_type)
    assert cfg.default_target_length() == target
    assert cfg.source and cfg.source.startswith("https://huggingface.co/")


def test_phi3_lists_have_one_factor_per_plane():
    cfg = load_config("phi-3-mini-128k")
    assert len(cfg.scaling["short_factor"]) == len(cfg.scaling["long_factor"]) == 48


def test_census_planes_follow_theorem_5():
    data = census(load_config("llama-2-7b"))
    theta = 10000.0 ** (-np.arange(0, 128, 2) / 128)  # (64,)  Definition 4 written out
    lam = np.array([p["wavelength"] for p in data["planes"]])
    np.testing.assert_allclose(lam, 2 * np.pi / theta, rtol=1e-13)
    # Theorem 5 (i): a whole turn over offsets 0..L-1 exactly when (L - 1) theta_j >= 2 pi
    assert [p["full_turn"] for p in data["planes"]] == [bool(4095 * t >= 2 * np.pi) for t in theta]
    np.testing.assert_allclose([p["turns"] for p in data["planes"]], 4095 * theta / (2 * np.pi), rtol=1e-13)


def test_census_bound_constants():
    data = census(load_config("llama-2-7b"))
    bound = data["interpolation_bound"]
    with mpmath.workdps(50):
        exact = mpmath.fsum(mpmath.mpf(10000) ** (-mpmath.mpf(4 * j) / 128) for j in range(64))  # sum theta_j^2
    assert bound["sum_theta_sq"] == pytest.approx(float(exact), rel=1e-13)
    # the article: "the stated bound is 0.434" for h_j = 1 on [0, 1] at Delta = 1/2, i.e. (1/2)(1/2)(1/2) d/(4 ln b)
    assert round(bound["chen_constant"] / 8, 3) == 0.434
    assert round(bound["ratio"], 2) == 1.15  # the article: "1.15 times at d = 128"
    for name, m in data["maps"].items():
        assert bound["after_map"][name] == pytest.approx(float(np.sum(np.square(m["inv_freq"]))), rel=1e-12)


@pytest.mark.parametrize("name", ["llama-3.1-8b", "phi-3-mini-128k", "qwen2.5-7b-yarn"])
def test_census_json(name, tmp_path, capsys):
    out = tmp_path / "c.json"
    code, text, _ = _run(capsys, name, "--json", out)
    assert code == 0
    data = json.loads(out.read_text())
    cfg = load_config(name)
    assert set(data) >= {"config", "planes", "maps"}
    assert data["config"]["rotary_dim"] == cfg.rotary_dim and data["config"]["rope_type"] == cfg.rope_type
    longrope = {"config_short"} if cfg.rope_type == "longrope" else set()  # LongRoPE's short list beside the long
    assert set(data["maps"]) == set(MAPS) | {"config"} | longrope
    N, L = data["target_length"], cfg.training_length
    for key, m in data["maps"].items():
        if key in ("config", "config_short"):  # the config's own maps: checked below and in test_advise_heldout
            continue
        e = extend(key, cfg.theta, N / L, L, **cfg.map_options(key))
        np.testing.assert_allclose(m["inv_freq"], e.inv_freq, rtol=1e-15)
        assert m["attention_factor"] == e.attention_factor
    own, _, _ = config_extension(cfg, N)
    assert data["maps"]["config"]["map"] == own.name
    np.testing.assert_allclose(data["maps"]["config"]["inv_freq"], own.inv_freq, rtol=1e-15)
    assert len(data["planes"]) == cfg.rotary_dim // 2
    # the printed table has one row per plane (in each wrapped block), the config's factor column beside the planes
    rows = [ln.split() for ln in text.splitlines() if ln.split() and ln.split()[0].isdigit()]
    assert len(rows) % (cfg.rotary_dim // 2) == 0
    for row, plane in zip(rows, data["planes"]):
        assert float(row[5]) == pytest.approx(plane["factors"]["config"], rel=5e-4)


def test_census_of_a_path_with_v5_rope_parameters(tmp_path, capsys):
    raw = {
        "model_type": "my-model",
        "head_dim": 64,
        "max_position_embeddings": 2048,
        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 50000.0, "partial_rotary_factor": 0.5},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    code, text, _ = _run(capsys, path, "--target-length", 8192)
    assert code == 0 and "rotary width d = 32" in text
    cfg = load_config(path)
    assert (cfg.rotary_dim, cfg.base, cfg.rope_type, cfg.factor) == (32, 50000.0, "linear", 2.0)
    np.testing.assert_allclose(config_extension(cfg, 8192)[0].factors, 0.5)


def test_census_plot(tmp_path, capsys):
    png = tmp_path / "factors.png"
    code, _, err = _run(capsys, "phi-3-mini-128k", "--plot", png)
    assert code == 0 and str(png) in err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_target_length_changes_kappa_and_dynamic_maps(capsys, tmp_path):
    out = tmp_path / "c.json"
    assert _run(capsys, "phi-3-mini-128k", "--target-length", 4096, "--json", out)[0] == 0
    data = json.loads(out.read_text())
    cfg = load_config("phi-3-mini-128k")
    assert data["kappa"] == 1.0  # within the training length: LongRoPE's short factors
    np.testing.assert_allclose(data["maps"]["config"]["inv_freq"], cfg.theta / np.array(cfg.scaling["short_factor"]))


def _bad(tmp_path, raw):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return path


BAD = [
    ({"hidden_size": 4096, "num_attention_heads": 32}, "'max_position_embeddings'", "is missing"),
    ({"max_position_embeddings": 4096, "num_attention_heads": 32}, "'hidden_size'", "is missing"),
    ({**LLAMA2, "rope_scaling": {"rope_type": "linear"}}, "'rope_scaling.factor'", "is missing"),
    ({**LLAMA2, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "'rope_scaling.low_freq_factor'", "missing"),
    ({**LLAMA2, "head_dim": 127}, "127", "positive even integer"),
    ({**LLAMA2, "head_dim": 100, "partial_rotary_factor": 0.25}, "0.25", "positive even integer"),
    ({**LLAMA2, "rope_scaling": {"type": "ntk-by-parts", "factor": 2.0}}, "'ntk-by-parts'", "unknown rope type"),
    ({**LLAMA2, "rope_scaling": {"rope_type": "yarn", "factor": 0.5}}, "'rope_scaling.factor'", "0.5"),
    ({**LLAMA2, "rope_theta": "10000"}, "'rope_theta'", "'10000'"),
    ({**LLAMA2, "max_position_embeddings": 4096.5}, "'max_position_embeddings'", "4096.5"),
    ({**LLAMA2, "rope_parameters": {"rope_type": "dynamic", "factor": "2x"}}, "'rope_parameters.factor'", "'2x'"),
    (
        {**LLAMA2, "rope_scaling": {"type": "su", "short_factor": [1.0] * 64, "long_factor": [2.0] * 63}},
        "long_factor",
        "64",
    ),
    (
        {**LLAMA2, "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 64, "long_factor": ["a"] * 64}},
        "long_factor",
        "'a'",
    ),
]


@pytest.mark.parametrize(("raw", "key", "detail"), BAD, ids=[b[1] + " " + b[2] for b in BAD])
def test_bad_config_is_refused_and_nothing_printed(raw, key, detail, tmp_path, capsys):
    json_out = tmp_path / "out.json"
    code, out, err = _run(capsys, _bad(tmp_path, raw), "--json", json_out)
    assert code != 0
    assert out == ""  # nothing printed as if it were valid
    assert not json_out.exists()
    assert key in err and detail in err
    with pytest.raises(PosKernelsError):
        parse_config(raw)


@pytest.mark.parametrize(
    ("argv", "detail"),
    [
        (["llama-2-7b", "--target-length", "1000"], "training length L = 4096"),
        (["no-such-model"], "no config file at 'no-such-model'"),
        (["llama-2-7b", "--target-length", "0"], "positive integer"),
    ],
)
def test_bad_arguments_are_refused(argv, detail, capsys):
    code, out, err = _run(capsys, *argv)
    assert code != 0 and out == "" and detail in err


def test_invalid_json_is_refused(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text("{not json")
    code, out, err = _run(capsys, path)
    assert code != 0 and out == "" and "not valid JSON" in err


@pytest.mark.parametrize("width", [80, 100, 120])
def test_table_fits_the_terminal_width(width, capsys):
    code, text, _ = _run(capsys, "qwen2.5-7b-yarn", "--width", width)
    assert code == 0
    assert max(map(len, text.splitlines())) <= width
    header_rows = [ln for ln in text.splitlines() if ln.split()[:1] == ["j"]]
    shown = {name for ln in header_rows for name in ln.split()}
    assert {"config", "pi", "ntk", "yarn", "dynamic", "yarn_hf", "yarn_hf_untr", "llama3", "longrope"} <= shown


def test_json_dash_writes_json_alone_to_stdout(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "llama-3.1-8b", "--json", "-")
    assert code == 0 and not (tmp_path / "-").exists()
    data = json.loads(out)  # nothing but the JSON
    assert data["config"]["rope_type"] == "llama3" and "wrote" not in err


GEMMA3 = {
    "model_type": "gemma3_text",
    "head_dim": 256,
    "max_position_embeddings": 131072,
    "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
    },
}


def test_per_layer_type_config_gets_one_census_per_layer_type(tmp_path, capsys):
    out = tmp_path / "c.json"
    code, text, _ = _run(capsys, _bad(tmp_path, GEMMA3), "--json", out)
    assert code == 0
    data = json.loads(out.read_text())["layer_types"]
    assert set(data) == {"sliding_attention", "full_attention"}
    assert (
        data["sliding_attention"]["config"]["rope_theta"] == 1e4
        and data["full_attention"]["config"]["rope_theta"] == 1e6
    )
    assert "== layer type full_attention ==" in text and "== layer type sliding_attention ==" in text
    code, text, _ = _run(capsys, tmp_path / "config.json", "--layer-type", "full_attention")
    assert code == 0 and "sliding" not in text
    code, out_, err = _run(capsys, tmp_path / "config.json", "--layer-type", "full_atention")
    assert code != 0 and out_ == "" and "did you mean 'full_attention'" in err
    with pytest.raises(PosKernelsError, match="per layer type"):
        load_config(GEMMA3)


def test_load_config_takes_a_dict_and_a_pretrained_config():
    import transformers

    hf = transformers.LlamaConfig(head_dim=64, max_position_embeddings=2048, rope_theta=5e5)
    from_hf = load_config(hf)
    assert (from_hf.rotary_dim, from_hf.base, from_hf.training_length) == (64, 5e5, 2048)
    assert load_config(hf.to_dict()).theta.tolist() == from_hf.theta.tolist()
    with pytest.raises(PosKernelsError, match="got 3"):
        load_config(3)


def test_unknown_names_get_a_did_you_mean(capsys):
    code, out, err = _run(capsys, "llama-3.1-8")
    assert code != 0 and "did you mean 'llama-3.1-8b'" in err
    with pytest.raises(PosKernelsError, match="did you mean 'llama3'"):
        parse_config({**LLAMA2, "rope_scaling": {"rope_type": "lama3", "factor": 8.0}})


def test_absent_base_is_reported_not_silently_assumed(capsys, tmp_path):
    code, text, _ = _run(capsys, _bad(tmp_path, {k: v for k, v in LLAMA2.items() if k != "rope_theta"}))
    assert code == 0 and "rope_theta is absent from the config: b = 10000 assumed" in text


def test_rope_scaling_that_transformers_drops_is_refused(tmp_path, capsys):
    # transformers' Cohere2MoeConfig reads rope_parameters only: a v4 rope_scaling there is not what the model runs
    raw = {**LLAMA2, "model_type": "cohere2_moe", "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    code, out, err = _run(capsys, _bad(tmp_path, raw))
    assert code != 0 and out == "" and "ignored by transformers for model type 'cohere2_moe'" in err
    assert load_config({**raw, "model_type": "llama"}).rope_type == "linear"
