"""Oracle tests against Hugging Face transformers: every bundled config, every rope type transformers implements.

poskernels computes inverse frequencies in float64 from closed forms; transformers computes them in float32
torch (``ROPE_INIT_FUNCTIONS``, and each model's ``compute_default_rope_parameters`` for plain RoPE).  They
must agree to float32 precision: the exponent ``2j/d`` is rounded to float32 before ``b**x``, so the
relative error of ``b**-x`` is about ``x ln b`` float32 ulps (``ln b`` up to 14 here); the tolerance is
``8 (1 + ln b)`` float32 epsilons.

Then the pairing conventions: poskernels rotates consecutive pairs ``(2j, 2j+1)``, transformers rotates
``j`` with ``j + d/2`` (``rotate_half``); the scores agree after :func:`poskernels.encodings.to_half_split`.
"""

from __future__ import annotations

import copy
import importlib
import json
import math
from importlib import resources

import numpy as np
import pytest
import torch  # the 'test' extra pins torch==2.13.0 and transformers>=5
from transformers import AutoConfig, LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from poskernels.census.config import bundled_configs, config_extension, parse_config
from poskernels.encodings import apply_rope, to_half_split
from poskernels.errors import PosKernelsError
from poskernels.extension import yarn
from poskernels.extension.yarn_ramp_gap import compare_yarn_ramps

EPS32 = float(np.finfo(np.float32).eps)
BUNDLED = bundled_configs()
HF_TYPES = ["default", "linear", "dynamic", "yarn", "llama3", "longrope"]


def _raw(name: str) -> dict:
    text = (resources.files("poskernels.census") / "data" / "configs" / f"{name}.json").read_text()
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def _scaling_for(raw: dict, rope_type: str, rng: np.random.Generator) -> dict | None:
    """A rope_scaling of ``rope_type`` for this model: its own if it has that type, else a typical one."""
    own = raw.get("rope_scaling") or {}
    own_type = {"su": "longrope"}.get(own.get("rope_type", own.get("type")), own.get("rope_type", own.get("type")))
    if own_type == rope_type:
        own = dict(own)
        if own.pop("type", None) is not None:  # transformers 5 renames 'su' only after it standardized the dict,
            own["rope_type"] = rope_type  # so a Phi-3 'su' config fails its own validation; pass the new name
        return own
    L = raw.get("original_max_position_embeddings", raw["max_position_embeddings"])
    planes = int(raw.get("head_dim") or raw["hidden_size"] // raw["num_attention_heads"]) // 2
    return {
        "default": None,
        "linear": {"rope_type": "linear", "factor": 4.0},
        "dynamic": {"rope_type": "dynamic", "factor": 2.0},
        "yarn": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": L},
        "llama3": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": L,
        },
        "longrope": {
            "rope_type": "longrope",
            "short_factor": np.sort(1 + 0.5 * rng.random(planes)).tolist(),  # (d/2,)  searched lists stand-ins
            "long_factor": np.sort(1 + 40 * rng.random(planes)).tolist(),  # (d/2,)
            "original_max_position_embeddings": L,
        },
    }[rope_type]


def _hf_config(raw: dict, rope_type: str):
    # Phi3Config accepts only default/longrope; the other types go through LlamaConfig with the same numbers.
    if raw["model_type"] == "phi3" and rope_type not in ("default", "longrope"):
        return LlamaConfig(**{k: v for k, v in raw.items() if k != "model_type"})
    return AutoConfig.for_model(**raw)


def _hf_default(hf_config, model_type: str):
    module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    (cls,) = [getattr(module, a) for a in dir(module) if a.endswith("RotaryEmbedding") and not a.startswith("_")]
    return cls.compute_default_rope_parameters(hf_config)


def _agree(ours: np.ndarray, theirs, base: float) -> None:
    theirs = theirs.detach().double().numpy()  # (d/2,)
    np.testing.assert_allclose(ours, theirs, rtol=8 * (1 + math.log(base)) * EPS32, atol=0)


CASES = [(name, t) for name in BUNDLED for t in HF_TYPES]


@pytest.mark.parametrize(("name", "rope_type"), CASES)
def test_inv_freq_and_attention_factor_match_transformers(name, rope_type):
    rng = np.random.default_rng(sum(map(ord, name + rope_type)))
    raw = _raw(name)
    raw["rope_scaling"] = _scaling_for(raw, rope_type, rng)
    cfg = parse_config(copy.deepcopy(raw), name=name)
    hf = _hf_config(copy.deepcopy(raw), rope_type)
    lengths = [cfg.default_target_length()]
    if rope_type in ("dynamic", "longrope"):  # maps that read the sequence length: one within, one past
        lengths = [cfg.training_length, 3 * cfg.max_position_embeddings + 5]
    for N in lengths:
        ours, _, _ = config_extension(cfg, N)
        if rope_type == "default":
            inv, att = _hf_default(hf, raw["model_type"])
        else:
            inv, att = ROPE_INIT_FUNCTIONS[rope_type](hf, None, seq_len=N)
        assert ours.inv_freq.shape == tuple(inv.shape)
        _agree(ours.inv_freq, inv, cfg.base)
        assert ours.attention_factor == pytest.approx(float(att), rel=1e-12)


YARN_VARIANTS = [
    {"truncate": False},
    {"mscale": 0.707, "mscale_all_dim": 1.0},
    {"mscale": 1.0, "mscale_all_dim": 1.0},
    {"attention_factor": 1.5},
    {"beta_fast": 64, "beta_slow": 2},
    {"original_max_position_embeddings": 2**23},  # every plane turns in L: the ramp's end is clamped at d - 1
]


@pytest.mark.parametrize("extra", YARN_VARIANTS, ids=lambda e: ",".join(e))
def test_yarn_options_match_transformers(extra):
    """transformers' YaRN options: truncate, mscale / mscale_all_dim, an explicit attention factor, betas."""
    raw = _raw("qwen2.5-7b-yarn")
    raw["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, **extra}
    cfg = parse_config(copy.deepcopy(raw))
    ours, kappa, L = config_extension(cfg, 131072)
    inv, att = ROPE_INIT_FUNCTIONS["yarn"](AutoConfig.for_model(**raw), None)
    _agree(ours.inv_freq, inv, cfg.base)
    assert ours.attention_factor == pytest.approx(float(att), rel=1e-12)
    assert ours.name == ("yarn_hf_untruncated" if extra.get("truncate") is False else "yarn_hf")


def test_article_yarn_ramp_is_not_transformers_yarn():
    """The article's ramp (linear in turns) departs from transformers' (linear in plane index), as measured."""
    raw = _raw("qwen2.5-7b-yarn")
    cfg = parse_config(copy.deepcopy(raw))
    theta, L = cfg.theta, cfg.training_length  # (d/2,)
    inv, _ = ROPE_INIT_FUNCTIONS["yarn"](AutoConfig.for_model(**raw), None)
    hf_factors = inv.double().numpy() / theta  # (d/2,)
    article_factors = yarn(theta, 4.0, L).factors  # (d/2,)
    gap = hf_factors - article_factors  # (d/2,)  the reference ramp keeps more of the trained frequency
    measured = compare_yarn_ramps(theta, 4.0, L)
    assert gap.min() > -1e-6
    assert np.abs(gap).max() == pytest.approx(measured["factor_gap"], abs=1e-5)
    assert int(np.argmax(np.abs(gap))) == measured["plane"]
    assert measured["factor_gap"] > 0.25  # a quarter of a plane's frequency or more, on a real config


def _hf_scores(q, k, positions, hf_config):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    rope = LlamaRotaryEmbedding(hf_config)
    pos = torch.tensor(positions)[None, :]  # (1, n)
    qt = torch.tensor(q, dtype=torch.float32)[None, None]  # (1, 1, n, d)
    kt = torch.tensor(k, dtype=torch.float32)[None, None]  # (1, 1, n, d)
    cos, sin = rope(qt, pos)  # (1, n, d) each, attention factor included
    qe, ke = apply_rotary_pos_emb(qt, kt, cos, sin)
    return (qe[0, 0] @ ke[0, 0].T).double().numpy()  # (n, n)


@pytest.mark.parametrize("name", ["llama-3.1-8b", "qwen2.5-7b-yarn", "llama-2-7b"])
def test_scores_agree_after_half_split_reordering(name):
    """Consecutive pairs here, rotate_half there: the same scores once q and k are reordered."""
    raw = _raw(name)
    cfg = parse_config(copy.deepcopy(raw))
    ext, _, _ = config_extension(cfg, cfg.default_target_length())
    rng = np.random.default_rng(7)
    d = cfg.rotary_dim
    q, k = rng.normal(size=(2, 24, d)) / math.sqrt(d)  # (n, d) each, this library's layout
    positions = np.concatenate([np.arange(12), 3000 + np.arange(12)])  # (n,)
    ours = apply_rope(q, positions, ext.inv_freq) @ apply_rope(k, positions, ext.inv_freq).T  # (n, n)
    ours *= ext.logit_scale
    hf_config = LlamaConfig(**{k_: v for k_, v in raw.items() if k_ != "model_type"})
    theirs = _hf_scores(to_half_split(q), to_half_split(k), positions, hf_config)
    # float32 angles m * theta_j are off by about m ulps of a radian: the score by that times |q| |k|
    scale = ext.logit_scale * np.linalg.norm(q, axis=1).max() * np.linalg.norm(k, axis=1).max()
    np.testing.assert_allclose(ours, theirs, atol=4 * positions.max() * EPS32 * scale)
    unordered = _hf_scores(q, k, positions, hf_config)  # the same vectors without the reordering
    assert np.abs(unordered - ours).max() > 0.1 * np.abs(ours).max()


# Hub-style configs whose rotary width is not head_dim: read as transformers reads them, or it is silently wrong.
HUB_STYLE = {
    "deepseek_v3": {  # multi-head latent attention: RoPE on qk_rope_head_dim coordinates only
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "max_position_embeddings": 163840,
        "rope_theta": 10000,
        "rope_scaling": {
            "type": "yarn",
            "factor": 40,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
        },
    },
    "gpt_neox": {  # Pythia: a quarter of the head rotates, base under rotary_emb_base
        "model_type": "gpt_neox",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
        "max_position_embeddings": 2048,
    },
    "jetmoe": {
        "model_type": "jetmoe",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "kv_channels": 128,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
    },  # fmt: skip
}


@pytest.mark.parametrize("model_type", sorted(HUB_STYLE))
def test_hub_style_widths_match_transformers(model_type, tmp_path):
    raw = HUB_STYLE[model_type]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    from poskernels.census import census
    from poskernels.census.config import load_config

    cfg = load_config(path)
    hf = AutoConfig.for_model(**copy.deepcopy(raw))
    module = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    (cls,) = [getattr(module, a) for a in dir(module) if a.endswith("RotaryEmbedding") and not a.startswith("_")]
    rotary = cls(hf)
    ours = census(cfg, cfg.training_length)["maps"]["config"]
    _agree(np.asarray(ours["inv_freq"]), rotary.inv_freq, cfg.base)
    assert ours["attention_factor"] == pytest.approx(float(rotary.attention_scaling), rel=1e-12)
    assert cfg.rotary_dim == 2 * rotary.inv_freq.numel()  # 64 for MLA (not 56), 32 for Pythia (not 128)


def test_gemma3_v4_spelling_is_read_per_layer_type(tmp_path):
    """Gemma 3 on the Hub: rope_theta and rope_scaling for full attention, rope_local_base_freq for sliding layers."""
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    from poskernels.census import census
    from poskernels.census.config import load_config, load_layer_configs

    raw = {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "num_hidden_layers": 34,
        "max_position_embeddings": 131072,
        "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    cfgs = load_layer_configs(path)
    rotary = Gemma3RotaryEmbedding(AutoConfig.for_model(**copy.deepcopy(raw)))
    assert set(cfgs) == {"full_attention", "sliding_attention"}
    for layer_type, cfg in cfgs.items():
        ours = census(cfg, cfg.training_length)["maps"]["config"]
        _agree(np.asarray(ours["inv_freq"]), getattr(rotary, f"{layer_type}_inv_freq"), cfg.base)
        assert ours["attention_factor"] == getattr(rotary, f"{layer_type}_attention_scaling")
    assert (cfgs["full_attention"].rope_type, cfgs["sliding_attention"].base) == ("linear", 1e4)
    with pytest.raises(PosKernelsError, match="per layer type"):
        load_config(path)
