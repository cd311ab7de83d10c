"""Gemma 4's ``proportional`` RoPE (p-RoPE as the family ships it: 64 of 256 planes turning at ``b**(-2j/512)``, the
rest at frequency 0) read per layer type with its own head width, against transformers' own rotary module; and
``advise`` keeps its one option, ``factor``, writing no partial-rotary block that would pair coordinates otherwise."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from transformers import CONFIG_MAPPING

from poskernels.census.advice import advise, advised_config
from poskernels.census.config import load_layer_configs, raw_config
from poskernels.census.hf_families.cases import _module_freqs

GEMMA4 = {"model_type": "gemma4", "text_config": {"model_type": "gemma4_text"}}


def _module(raw: dict):
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = CONFIG_MAPPING[raw["model_type"]].from_dict(json.loads(json.dumps(raw)))
    text = hf.get_text_config()
    mod = importlib.import_module(type(text).__module__.replace(".configuration_", ".modeling_"))
    cls = next(v for k, v in vars(mod).items() if k.endswith("TextRotaryEmbedding") and v.__module__ == mod.__name__)
    return cls(text)


def test_the_turning_planes_are_transformers_own():
    cfgs = load_layer_configs(GEMMA4)
    full = cfgs["full_attention"]
    assert full.rope_type == "proportional" and full.head_dim == 512 and full.rotary_dim == 128
    inv, _, _ = _module_freqs(_module(GEMMA4))["full_attention"]
    inv = inv.double().numpy()
    assert inv.size == 256 and np.count_nonzero(inv) == 64 and not inv[64:].any()
    np.testing.assert_allclose(full.theta, inv[:64], rtol=1e-6)  # float32 buffers
    sliding, _, _ = _module_freqs(_module(GEMMA4))["sliding_attention"]
    np.testing.assert_allclose(cfgs["sliding_attention"].theta, sliding.double().numpy(), rtol=1e-6)
    assert full.read_from["proportional"] == {"rope_theta": 1e6, "turning_planes": 64, "planes": 256}


def test_advise_rescales_the_proportional_factor_and_writes_nothing_else():
    a = advise(GEMMA4, 4 * 131072)["layer_types"]
    full = a["full_attention"]
    assert full["ranking"] == ["proportional"] and full["maps"]["proportional"]["how"] == "rescaled"
    assert set(full["not_advised"]) == {"yarn", "llama3", "linear", "dynamic"}
    row = full["maps"]["proportional"]
    layers = row["rope_parameters"]
    raw, _ = raw_config(GEMMA4)
    new = advised_config(raw, layers["full_attention"], row["max_position_embeddings"], layers)
    inv, _, _ = _module_freqs(_module(new))["full_attention"]
    turning = inv.double().numpy()[:64]
    np.testing.assert_allclose(row["verdicts"]["inv_freq"], turning, rtol=1e-6)
    assert layers["full_attention"]["factor"] == 4.0 and layers["full_attention"]["rope_theta"] == 1e6
    assert a["sliding_attention"]["needs_extension"] is False


@pytest.mark.parametrize("width", [256, 32])
def test_a_file_whose_layers_of_one_type_disagree_on_their_width_is_refused(width):
    from poskernels.errors import PosKernelsError

    raw = {"head_dim": 64, "max_position_embeddings": 8, "layer_types": ["full_attention"] * 2,
           "per_layer_config": {"0": {"head_dim": 128}, "1": {"head_dim": width}}}  # fmt: skip
    with pytest.raises(PosKernelsError, match="gives layers their own head widths"):
        load_layer_configs(raw)
