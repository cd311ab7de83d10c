"""The RoPE dict of a config, one per layer type where the config has several, and the layer types themselves.
"""

from __future__ import annotations

import functools
import json
import reprlib
from importlib import resources

from ...errors import PosKernelsError
from .values import count

__all__ = ["layer_dicts", "layer_head_dims", "layer_type_names", "layer_types", "rope_dict"]


def layer_head_dims(raw: dict, key: str = "per_layer_config") -> dict[str, int]:
    """The head width each layer type's layers are given by ``per_layer_config``: ``{layer type: head_dim}``.

    Gemma 4's full-attention layers have ``head_dim = 512`` beside 256; every layer of a type must have the same.

    Parameters
    ----------
    raw : dict
        The language model's keys (``layer_types`` and ``per_layer_config``, by layer index).
    key : str
        The name quoted in an error.

    Returns
    -------
    dict of str to int
        The layer types whose layers set a ``head_dim``; empty without ``per_layer_config``.

    Raises
    ------
    PosKernelsError
        If a layer index is not one of the config's layers, or layers of one type differ in width.

    Examples
    --------
    >>> layer_head_dims({"layer_types": ["sliding_attention", "full_attention"],
    ...                  "per_layer_config": {"1": {"head_dim": 512}}})
    {'full_attention': 512}
    >>> layer_head_dims({"layer_types": ["full_attention"], "per_layer_config": {"5": {"head_dim": 3}}})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'per_layer_config' gives layers their own head widths; the census
    reads one width per RoPE (one per layer type); got layers ['5']
    """
    given = raw.get("per_layer_config")
    if not given:
        return {}
    types = layer_types(raw)
    items = list(given.items()) if isinstance(given, dict) else list(enumerate(given))
    widths: dict[int, object] = {}
    bad = False
    for index, over in items:
        i = int(index) if isinstance(index, int) or (isinstance(index, str) and index.isdigit()) else -1
        if not 0 <= i < len(types) or not isinstance(over, dict):
            bad = True
            break
        if over.get("head_dim") is not None:
            widths[i] = over["head_dim"]
    out: dict[str, int] = {}
    for lt in dict.fromkeys(types):
        mine = [widths.get(i) for i, t in enumerate(types) if t == lt]
        if bad or len({repr(w) for w in mine}) > 1:
            raise PosKernelsError(
                f"config key {key!r} gives layers their own head widths; the census reads one width per "
                f"RoPE (one per layer type); got layers {reprlib.repr([k for k, _ in items])}"
            )
        if mine and mine[0] is not None:
            out[lt] = count({"head_dim": mine[0]}, "head_dim", key)
    return out


def rope_dict(raw: dict) -> tuple[dict, str]:
    """The RoPE dict and its key: ``rope_scaling`` wins when both are set, as in transformers.

    Parameters
    ----------
    raw : dict
        The language model's keys.

    Returns
    -------
    rope : dict
        The RoPE settings (empty for plain RoPE); Gemma 3's ``rope_local_base_freq`` makes it per layer type.
    key : str
        ``"rope_scaling"`` or ``"rope_parameters"``.

    Raises
    ------
    PosKernelsError
        If either key is neither a dict nor null, or ``rope_scaling`` is given to a family whose transformers
        config ignores it.

    Examples
    --------
    >>> rope_dict({"rope_parameters": {"rope_theta": 1e6}})
    ({'rope_theta': 1000000.0}, 'rope_parameters')
    >>> rope_dict({"rope_scaling": 3})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_scaling' must be a dict or null; got 3
    """
    found, where = {}, "rope_parameters"
    for key in ("rope_scaling", "rope_parameters"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise PosKernelsError(f"config key {key!r} must be a dict or null; got {value!r}")
        if value:
            found, where = value, key
            break
    if where == "rope_scaling" and not raw.get("rope_parameters") and raw.get("model_type") in _ignoring():
        raise PosKernelsError(
            f"config key 'rope_scaling' is ignored by transformers for model type {raw['model_type']!r} (its config "
            "reads rope_parameters only), so the model runs plain RoPE where the file asks for "
            f"{reprlib.repr(found)}; the census will not guess: give it as rope_parameters"
        )
    if raw.get("rope_local_base_freq") is not None and not any(isinstance(v, dict) for v in found.values()):
        return _local_global(raw, found), where
    return found, where


def _local_global(raw: dict, flat: dict) -> dict:
    """Gemma 3's v4 spelling, per layer type as transformers converts it: the RoPE dict (and ``rope_theta``) is the
    full-attention layers', ``rope_local_base_freq`` the sliding-window layers' base with plain RoPE.

    >>> _local_global({"rope_theta": 1e6, "rope_local_base_freq": 1e4}, {"rope_type": "linear", "factor": 8.0})
    {'full_attention': {'rope_type': 'linear', 'factor': 8.0, 'rope_theta': 1000000.0}, \
'sliding_attention': {'rope_type': 'default', 'rope_theta': 10000.0}}
    """
    full = dict(flat)
    if raw.get("rope_theta") is not None:
        full.setdefault("rope_theta", raw["rope_theta"])
    return {
        "full_attention": full,
        "sliding_attention": {"rope_type": "default", "rope_theta": raw["rope_local_base_freq"]},
    }


def layer_dicts(scaling: dict, raw: dict, scope: str) -> dict[str, dict | None] | None:
    """One RoPE dict per layer type, or None when the dict is flat.

    A dict is per layer type when its keys are the config's ``layer_types`` or every value is a dict (or
    null: a layer type without RoPE).  Mixed dicts are refused.

    Parameters
    ----------
    scaling : dict
        The RoPE dict (:func:`rope_dict`).
    raw : dict
        The language model's keys (its ``layer_types``).
    scope : str
        The key quoted in an error.

    Returns
    -------
    dict or None
        ``{layer type: dict or None}`` (only the types the layers use), or None for a flat dict.

    Raises
    ------
    PosKernelsError
        If the dict mixes per-layer-type dicts with flat keys, or names only layer types the config does not list.

    Examples
    --------
    >>> layer_dicts({"full_attention": {"rope_theta": 1e6}, "sliding_attention": {}}, {}, "rope_parameters")
    {'full_attention': {'rope_theta': 1000000.0}, 'sliding_attention': {}}
    >>> layer_dicts({"rope_theta": 1e6}, {}, "rope_parameters") is None
    True
    >>> layer_dicts({"full_attention": {}, "rope_theta": 1e6}, {}, "rope_parameters")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_parameters' mixes per-layer-type dicts (full_attention)
    with flat keys (rope_theta); transformers reads one or the other
    """
    labels = set(layer_types(raw))
    nested = [k for k, v in scaling.items() if isinstance(v, dict) or (v is None and k in labels)]
    if not nested:
        return None
    if labels and set(nested) & labels:  # transformers reads the layer types the layers use, and ignores the rest
        return {k: scaling[k] for k in nested if k in labels}
    if labels and all(k in layer_type_names() for k in nested):
        raise PosKernelsError(
            f"config key {scope!r} has RoPE dicts only for layer types the config does not list "
            f"({', '.join(nested)}); its layer_types: {', '.join(sorted(labels))}"
        )
    flat = sorted(set(scaling) - set(nested))
    if flat:
        raise PosKernelsError(
            f"config key {scope!r} mixes per-layer-type dicts ({', '.join(nested)}) with flat keys "
            f"({', '.join(flat)}); transformers reads one or the other"
        )
    return dict(scaling)


def layer_types(raw: dict) -> list[str]:
    """The config's ``layer_types`` (empty when absent), checked: a list of known names, one per layer.

    Parameters
    ----------
    raw : dict
        The language model's keys (``layer_types``, and ``num_hidden_layers`` when set).

    Returns
    -------
    list of str
        The layer types, one per layer.

    Raises
    ------
    PosKernelsError
        If ``layer_types`` is not a list of strings, names a type transformers does not know, or does not have
        ``num_hidden_layers`` entries.

    Examples
    --------
    >>> layer_types({"layer_types": ["sliding_attention", "full_attention"], "num_hidden_layers": 2})
    ['sliding_attention', 'full_attention']
    >>> layer_types({"layer_types": [["full_attention"]]})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'layer_types' must be a list of layer-type names (strings);
    got [['full_attention']]
    """
    value = raw.get("layer_types")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PosKernelsError(
            f"config key 'layer_types' must be a list of layer-type names (strings); got {reprlib.repr(value)}"
        )
    allowed = layer_type_names()
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        from ...errors import did_you_mean

        raise PosKernelsError(
            f"config key 'layer_types' names unknown layer types {', '.join(map(repr, unknown))}"
            f"{did_you_mean(unknown[0], allowed)}; accepted: {', '.join(allowed)}"
        )
    n = raw.get("num_hidden_layers")
    if isinstance(n, int) and not isinstance(n, bool) and n != len(value):
        raise PosKernelsError(
            f"config key 'layer_types' has {len(value)} entries but 'num_hidden_layers' = {n}; one per layer"
        )
    return value


@functools.cache
def layer_type_names() -> tuple[str, ...]:
    """Layer-type names transformers accepts (its ``ALLOWED_LAYER_TYPES``, legacy names included), shipped."""
    text = (resources.files("poskernels.census") / "data" / "hf_attribute_map.json").read_text()
    return tuple(json.loads(text)["layer_types"])


@functools.cache
def _ignoring() -> frozenset:
    """Model types whose transformers config class drops a v4 ``rope_scaling`` (reads ``rope_parameters`` only)."""
    text = (resources.files("poskernels.census") / "data" / "hf_attribute_map.json").read_text()
    return frozenset(json.loads(text)["ignores_rope_scaling"])
