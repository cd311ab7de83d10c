"""``poskernels advise``: each emitted block loads in transformers and gives the frequencies and attention factor
the census printed for it (every bundled model, several targets), and bad input is refused in one line."""

from __future__ import annotations

import json
import warnings

import pytest
import torch  # the test extra installs it; a missing one is an error, not a skip
from transformers import CONFIG_MAPPING

from poskernels import cli
from poskernels.census.advice import advise, advised_config
from poskernels.census.config import bundled_configs, load_config, raw_config
from poskernels.census.hf_families.cases import _compare, _module_freqs


def _rotary(model_type: str):
    import importlib

    from transformers.models.auto.configuration_auto import model_type_to_module_name

    mod = importlib.import_module(
        f"transformers.models.{model_type_to_module_name(model_type)}.modeling_{model_type_to_module_name(model_type)}"
    )
    return next(v for k, v in vars(mod).items() if k.endswith("RotaryEmbedding") and v.__module__ == mod.__name__)


@pytest.mark.parametrize("name", bundled_configs())
def test_every_block_round_trips_through_transformers(name):
    raw, _ = raw_config(name)
    L = load_config(name).training_length
    agreed = 0
    for N in (2 * L, 4 * L, 8 * L):
        data = advise(name, N)
        for rope_type, row in data["maps"].items():
            new = advised_config(raw, row["rope_parameters"], row["max_position_embeddings"])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                hf = CONFIG_MAPPING[raw["model_type"]].from_dict(json.loads(json.dumps(new)))
            module = _rotary(raw["model_type"])(hf)
            if rope_type in ("dynamic", "longrope"):  # these follow the length read: transformers reads N - 1
                module(torch.zeros(1, dtype=torch.float32), torch.tensor([[N - 1]]))
            inv, att, atol = _module_freqs(module)[None]
            ours = {"inv_freq": row["verdicts"]["inv_freq"], "attention_factor": row["verdicts"]["attention_factor"]}
            ok, detail = _compare(ours, inv, att, atol, load_config(name).base)
            assert ok, (name, N, rope_type, detail)
            agreed += 1
    assert agreed >= 3  # at least one block per target (Phi-3 takes LongRoPE only)
    print(f"{name}: {agreed} blocks round-trip")


def _run(capsys, *argv):
    code = cli.main(["advise", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "detail"),
    [
        (["llama-2-7b", "--target-length", "4096"], "above the training length L = 4096"),
        (["llama-2-7b", "--target-length", "0"], "positive integer"),
    ],
)
def test_bad_targets_are_refused(argv, detail, capsys):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and detail in err and err.count("\n") == 1


def test_a_model_without_rope_is_refused(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gpt2"}))
    code, out, err = _run(capsys, path, "--target-length", "8192")
    assert code == 2 and "has no RoPE" in err and err.count("\n") == 1


def test_advise_prints_one_recommendation_with_its_reason(capsys):
    code, out, err = _run(capsys, "mistral-7b", "--target-length", "65536")
    assert code == 0, err
    assert out.count("(recommended)") == 1 and "recommended: " in out
    code, out, _ = _run(capsys, "mistral-7b", "--target-length", "65536", "--json", "-")
    assert json.loads(out)["recommended"] in json.loads(out)["maps"]


#: Per-layer-type configs: the Gemma 3 hub file and default configs of families with one RoPE per layer type.
PER_LAYER = [
    "src/poskernels/census/data/hub_configs/gemma-3-4b-it.json",
    *[{"model_type": t} for t in ("gemma3_text", "gemma3n_text", "modernbert", "olmo3", "laguna", "mellum", "zaya")],
    *[{"model_type": t} for t in ("t5gemma2_text", "ultrabert", "mimo_v2_flash")],
]


def _rotary_of(text_cfg):
    """The rotary module class of a text config's own modeling module."""
    import importlib

    mod = importlib.import_module(type(text_cfg).__module__.replace(".configuration_", ".modeling_"))
    found = [v for k, v in vars(mod).items() if k.endswith("RotaryEmbedding") and v.__module__ == mod.__name__]
    return next((v for v in found if "Vision" not in v.__name__), found[0])


@pytest.mark.parametrize("spec", PER_LAYER, ids=lambda s: s["model_type"] if isinstance(s, dict) else "gemma3-hub")
def test_every_per_layer_block_round_trips_through_transformers(spec):
    from pathlib import Path

    from poskernels.census.config import load_layer_configs

    if isinstance(spec, str):
        spec = str(Path(__file__).resolve().parents[1] / spec)
    cfgs = load_layer_configs(spec)
    assert list(cfgs) != [None]
    raw, _ = raw_config(spec)
    top = max(c.training_length for c in cfgs.values())
    agreed = quiet = 0
    for N in (2 * top, 8 * top):
        data = advise(spec, N)
        for lt, a in data["layer_types"].items():
            if not a["needs_extension"]:
                quiet += 1
                continue
            for rope_type, row in a["maps"].items():
                full = row["rope_parameters"]
                assert set(full) >= set(cfgs)  # the whole per-layer dict, every RoPE kept
                new = advised_config(raw, full[lt], row["max_position_embeddings"], full)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    hf = CONFIG_MAPPING[raw["model_type"]].from_dict(json.loads(json.dumps(new)))
                text = hf.get_text_config()
                module = _rotary_of(text)(text)
                if rope_type in ("dynamic", "longrope"):  # these follow the length read: transformers reads N - 1
                    module(torch.zeros(1, dtype=torch.float32), torch.tensor([[a["target_length"] - 1]]), layer_type=lt)
                inv, att, atol = _module_freqs(module)[lt]
                ours = {
                    "inv_freq": row["verdicts"]["inv_freq"],
                    "attention_factor": row["verdicts"]["attention_factor"],
                }
                ok, detail = _compare(ours, inv, att, atol, cfgs[lt].base)
                assert ok, (spec, N, lt, rope_type, detail)
                for other, c in cfgs.items():  # the layer types not advised keep their frequencies
                    if other != lt:
                        keep = _module_freqs(module)[other][0].double().numpy()
                        assert keep == pytest.approx(c.theta, rel=1e-6), (spec, other)
                agreed += 1
    assert agreed >= 4
    print(f"{spec if isinstance(spec, str) else spec['model_type']}: {agreed} blocks round-trip, {quiet} need none")


HUB_GEMMA3 = "src/poskernels/census/data/hub_configs/gemma-3-4b-it.json"


def _file(tmp_path, raw: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize(
    ("raw", "argv", "detail"),
    [
        (None, ["--target-length", "262144", "--layer-type", "full_atention"], "did you mean 'full_attention'?"),
        ({"model_type": "llama"}, ["--target-length", "16384", "--layer-type", "full_attention"], "no layer types"),
        ({"model_type": "gemma2"}, ["--target-length", "32768", "--layer-type", "sliding_attention"], "share one RoPE"),
        (None, ["--target-length", "16384"], "above the training length of a layer type that reads it"),
        ({"model_type": "gemma3_text", "sliding_window": "wide"}, ["--target-length", "262144"], "'sliding_window'"),
        (  # OLMo 3's window (4096) is past its L (2048): within L it is the target, not the window, that is short
            {"model_type": "olmo3"},
            ["--target-length", "2000"],
            "sliding_attention: the target N = 2000 is within its training length L = 2048",
        ),
    ],
)
def test_layer_type_misuse_is_refused_in_one_line(raw, argv, detail, tmp_path, capsys):
    config = _file(tmp_path, raw) if raw is not None else HUB_GEMMA3
    code, out, err = _run(capsys, config, *argv)
    assert code == 2 and out == "" and detail in err and err.count("\n") == 1, err


def test_a_sliding_layer_within_its_window_is_said_to_need_no_extension(capsys):
    code, out, err = _run(capsys, HUB_GEMMA3, "--target-length", "262144", "--layer-type", "sliding_attention")
    assert code == 0, err
    assert "needs no extension" in out and "sliding_window = 1024" in out and "paste" not in out
    code, out, err = _run(capsys, HUB_GEMMA3, "--target-length", "262144", "--json", "-")
    full = json.loads(out)["layer_types"]["full_attention"]
    assert (
        full["training_length"] == 16384 and full["maps"]["yarn"]["rope_parameters"]["full_attention"]["factor"] == 16
    )


def test_shared_rope_with_windowed_layers_says_which_layers_need_none(tmp_path, capsys):
    code, out, err = _run(capsys, _file(tmp_path, {"model_type": "gpt_oss"}), "--target-length", "262144")
    assert code == 0, err
    assert "18 of 36 layers are sliding_attention (sliding_window = 128)" in out and out.count("(recommended)") == 1


def _bad_configs():
    from test_census_context import BAD

    return [b for b in BAD if b[1] != "1e+308"]  # a factor overflowing the census's default target: advise sets N


@pytest.mark.parametrize(("raw", "detail"), _bad_configs(), ids=[b[1] for b in _bad_configs()])
def test_advise_refuses_the_census_bad_configs_in_one_line(raw, detail, tmp_path, capsys):
    """The issue's bad input (a sub-config not an object, layer_types of the wrong length or with unknown names,
    RoPE dicts for layer types the config does not list, ...) reaches advise through the same reader."""
    out_json = tmp_path / "out.json"
    code, out, err = _run(capsys, _file(tmp_path, raw), "--target-length", "1000000", "--json", out_json)
    assert code == 2 and out == "" and not out_json.exists()
    assert detail in err and err.count("\n") == 1, err


def test_a_config_whose_only_rope_layers_are_windowed_needs_no_extension(tmp_path, capsys):
    """Beam: RoPE on its sliding layers only (full attention has none, null in its dict): any target is fine."""
    code, out, err = _run(capsys, _file(tmp_path, {"model_type": "beam"}), "--target-length", "1000000")
    assert code == 0, err
    assert "needs no extension" in out and "paste" not in out and "full_attention" not in out
