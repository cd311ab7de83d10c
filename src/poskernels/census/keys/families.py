"""A family's names for the standard keys (transformers' ``attribute_map``, shipped as ``data/hf_attribute_map.json``)
and the part of a config that holds the language model.
"""

from __future__ import annotations

import functools
import json
import math
import numbers
import reprlib
from importlib import resources

from ...errors import PosKernelsError
from .layers import layer_head_dims

__all__ = ["ATTENTION_KEYS", "attribute_map", "standard_keys", "text_part"]


#: Keys that mark a dict as the attention part of a config (else its ``text_config`` is read).
ATTENTION_KEYS = ("head_dim", "hidden_size", "num_attention_heads", "max_position_embeddings", "qk_rope_head_dim")


@functools.cache
def attribute_map() -> dict[str, dict[str, str]]:
    """``{model_type: {standard key: the family's key}}``, from transformers' config classes.

    >>> attribute_map()["jetmoe"]
    {'head_dim': 'kv_channels'}
    """
    text = (resources.files("poskernels.census") / "data" / "hf_attribute_map.json").read_text()
    return json.loads(text)["attribute_map"]


def standard_keys(raw: dict) -> dict:
    """``raw`` with each standard key the family names otherwise copied under its standard name.

    Parameters
    ----------
    raw : dict
        A config as read from ``config.json``; its ``model_type`` picks the family's names (:func:`attribute_map`).

    Returns
    -------
    dict
        ``raw`` itself when nothing is renamed, else a copy with the standard keys added (a key already set wins).

    Raises
    ------
    PosKernelsError
        If ``model_type`` is set but is not a string.

    Examples
    --------
    >>> standard_keys({"model_type": "gptj", "n_embd": 4096, "n_head": 16})["num_attention_heads"]
    16
    >>> standard_keys({"model_type": [1]})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'model_type' must be a name (a string); got [1]
    """
    model_type = raw.get("model_type")
    if model_type is not None and not isinstance(model_type, str):  # a table or a list would reach a dict lookup
        raise PosKernelsError(f"config key 'model_type' must be a name (a string); got {reprlib.repr(model_type)}")
    names = attribute_map().get(model_type, {})
    extra = {k: raw[v] for k, v in names.items() if raw.get(k) is None and raw.get(v) is not None}
    return {**raw, **extra} if extra else raw


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def text_part(raw: dict) -> tuple[dict, str]:
    """The dict holding the language model's keys, and its path (``""`` or ``"text_config"``).

    Parameters
    ----------
    raw : dict
        A config; its ``text_config`` is read when the top level has none of :data:`ATTENTION_KEYS`.

    Returns
    -------
    part : dict
        The language model's keys, standard names added (:func:`standard_keys`).
    path : str
        ``""`` or ``"text_config"``.

    Raises
    ------
    PosKernelsError
        If ``per_layer_config`` is neither an object nor a list, or gives one layer type several head widths.

    Examples
    --------
    >>> text_part({"model_type": "qwen2_vl", "text_config": {"hidden_size": 8}})
    ({'hidden_size': 8}, 'text_config')
    >>> text_part({"per_layer_config": 3})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'per_layer_config' must be an object of per-layer settings
    (or null); got 3
    """
    raw, part = standard_keys(raw), ""
    if not any(k in raw for k in ATTENTION_KEYS) and isinstance(raw.get("text_config"), dict):
        raw, part = standard_keys(raw["text_config"]), "text_config"
    if raw.get("per_layer_config") is not None:  # transformers' heterogeneous configs: a head width per layer
        key = "per_layer_config" if not part else f"{part}.per_layer_config"
        if not isinstance(raw["per_layer_config"], (dict, list)):
            raise PosKernelsError(
                f"config key {key!r} must be an object of per-layer settings (or null); "
                f"got {reprlib.repr(raw['per_layer_config'])}"
            )
        layer_head_dims(raw, key)  # one width per layer type, or refused
    return raw, part
