"""Where a ``config.json`` keeps its RoPE: transformers' key vocabulary, family by family.

Hugging Face transformers reads one RoPE from keys that changed names over the years and between model
families.  This package finds them the way transformers' config classes do, and nothing more (every name importable
from here; :mod:`.families`, :mod:`.layers`, :mod:`.rotary` and :mod:`.values` hold them):

- the family's own names for the standard keys (``n_head`` for ``num_attention_heads``, ``kv_channels``
  for ``head_dim``, ...): each transformers config class's ``attribute_map``, shipped as
  ``data/hf_attribute_map.json`` (regenerated and checked against the installed transformers by the tests);
- the part of the config that holds the language model: the file itself, or its ``text_config`` when the
  file is a multimodal wrapper with no attention keys of its own (``config.get_text_config()``);
- the RoPE dict: ``rope_scaling`` (v4) wins over ``rope_parameters`` (v5), as in
  ``convert_rope_params_to_dict``; it may hold one dict per layer type (Gemma 3's sliding and full
  attention with their own bases), keyed by the names in ``layer_types`` (or any dict of dicts); Gemma 3's
  older spelling, ``rope_local_base_freq`` beside a flat dict, is read per layer type as transformers converts it;
- the rotary width: multi-head latent attention rotates ``qk_rope_head_dim`` coordinates (DeepSeek V2/V3,
  Kimi: transformers sets ``head_dim = qk_rope_head_dim``); otherwise ``head_dim`` or
  ``hidden_size / num_attention_heads``, times the partial rotation;
- the partial rotation: ``partial_rotary_factor`` (in the RoPE dict first), GPT-NeoX's ``rotary_pct``,
  or ``rotary_dim / head_dim`` (MiniMax M2);
- the base: ``rope_theta`` (in the RoPE dict first, then top level), GPT-NeoX's ``rotary_emb_base``; when
  absent, the ``default_theta`` of the family's transformers config class (many families default to a base
  other than ``10**4``; shipped in the same data file), else ``10**4``, reported as assumed.

Examples
--------
>>> raw = {"hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128}
>>> width_keys(raw)
(64, 'qk_rope_head_dim')
>>> partial_rotation({"rotary_pct": 0.25}, {})
(0.25, 'rotary_pct')
"""

from __future__ import annotations

from .families import ATTENTION_KEYS, attribute_map, standard_keys, text_part
from .layers import layer_dicts, layer_head_dims, layer_type_names, layer_types, rope_dict
from .rotary import base_key, default_theta, partial_rotation, width_keys
from .values import count, factor_list, number, where

__all__ = [
    "ATTENTION_KEYS",
    "attribute_map",
    "standard_keys",
    "base_key",
    "count",
    "default_theta",
    "factor_list",
    "layer_dicts",
    "layer_head_dims",
    "layer_type_names",
    "layer_types",
    "partial_rotation",
    "rope_dict",
    "number",
    "text_part",
    "where",
    "width_keys",
]
