"""``poskernels advise``: each emitted block loads in transformers and gives the frequencies and attention factor
the census printed for it (every bundled model, several targets), and bad input is refused in one line."""

from __future__ import annotations

import json
import warnings

import pytest
import torch  # the test extra installs it; a missing one is an error, not a skip
from transformers import CONFIG_MAPPING

from poskernels import cli
from poskernels.advise_cli import advise, advised_config
from poskernels.hf_families.cases import _compare, _module_freqs
from poskernels.rope_config import bundled_configs, load_config, raw_config


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
