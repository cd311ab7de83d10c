"""A file's text part completed from its family's defaults (:func:`fill_defaults`), as transformers fills it in, with
the keys taken and from where; the attention keys the census reads of it (:func:`attention_keys`).  The defaults
themselves are :mod:`~poskernels.census.config.defaults`'.
"""

from __future__ import annotations

import copy
import json
import reprlib

from ...errors import PosKernelsError
from ..keys import ATTENTION_KEYS, standard_keys
from .defaults import class_defaults, use_transformers
from .hf_cache import memo

__all__ = ["attention_keys", "fill_defaults"]

#: Switches a config class reads to derive its layer types and windows (Qwen2's ``use_sliding_window``: false sets
#: ``sliding_window`` to None, every layer reading the whole context; ``max_window_layers``: the first layers full).
_SWITCHES = ("sliding_window_pattern", "use_sliding_window", "max_window_layers")

#: Keys giving an attention window (read by ``advise``: a layer that looks back at most a window needs no extension).
_WINDOW_KEYS = ("sliding_window", "attention_chunk_size", "local_attention")


def _made_layer_types(model_type: str, n: int, switches: dict) -> list | None:
    """The layer types transformers' class derives for ``n`` layers and the file's switches (None: it refuses)."""

    def compute():
        import warnings

        from transformers import CONFIG_MAPPING

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return list(CONFIG_MAPPING[model_type](num_hidden_layers=n, **switches).layer_types)
        except Exception:  # noqa: BLE001 - the class refuses the count: the default pattern is repeated instead
            return None

    return memo("layer_types", json.dumps([model_type, n, switches], sort_keys=True), compute)


def _layer_types(entry: dict, text: dict, source: str, given: set | None = None) -> tuple[list | None, str | None]:
    """The layer types a file leaves out, for its ``num_hidden_layers``, and how they were found."""
    default = entry["defaults"].get("layer_types")
    if not isinstance(default, list) or not default:
        return None, None
    n = text.get("num_hidden_layers", len(default))
    pattern = text.get("sliding_window_pattern")
    given = set(text) if given is None else given
    switches = {  # the file's own switches, as the class reads them (a window of null: no layer is windowed)
        k: text[k] for k in _SWITCHES if k in given and (k in entry["defaults"] or k == "sliding_window_pattern")
    } | ({"sliding_window": None} if "sliding_window" in text and text["sliding_window"] is None else {})
    if switches.get("sliding_window", 0) is None and "sliding_window" not in entry["defaults"]:
        del switches["sliding_window"]
    if n == len(default) and not switches:
        return list(default), f"{source} default"
    made = _made_layer_types(entry["text_model_type"], n, switches) if use_transformers() else None
    if made is not None:
        return made, f"{source}, for num_hidden_layers = {n}"
    if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern > 0:
        made = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
        return made, f"assumed: sliding_window_pattern = {pattern} (every {pattern}th layer full attention)"
    period = next(
        p for p in range(1, len(default) + 1) if all(default[i] == default[i % p] for i in range(len(default)))
    )
    made = [default[i % period] for i in range(n)]
    return made, f"assumed: the default's pattern of {period} layers repeated to num_hidden_layers = {n}"


def fill_defaults(raw: dict) -> tuple[dict, str, dict]:
    """The file's text part with every key it leaves out taken from its class, its path, and the notes.

    Returns ``(text, part, assumed)``: ``part`` is ``""`` or the wrapper's key (``"text_config"``);
    ``assumed`` maps each key taken from the defaults to its source.  A file without ``model_type`` (or of a
    family transformers does not know) is returned as it is.

    Parameters
    ----------
    raw : dict
        A ``config.json`` as a dict (a hub file holds only what differs from the class defaults).

    Returns
    -------
    text : dict
        The text part with the class defaults filled in.
    part : str
        ``""`` or the wrapper's key.
    assumed : dict of str to str
        Each key taken from the defaults, and its source.

    Examples
    --------
    >>> text, part, assumed = fill_defaults({"model_type": "gemma3", "text_config": {"hidden_size": 2560}})
    >>> part, text["num_attention_heads"], sorted(text["rope_parameters"])
    ('text_config', 8, ['full_attention', 'sliding_attention'])
    >>> assumed["num_attention_heads"].startswith("transformers")
    True
    """
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        return raw, "", {}
    entry, source = class_defaults(model_type)
    if entry is None:
        return raw, "", {}
    part = entry["part"]
    text = raw
    if part and any(k in raw for k in ATTENTION_KEYS):  # the wrapper holds attention keys of its own: read it
        return raw, "", {}
    if part:
        sub = raw.get(part)
        if sub is None:
            sub = {}
        if not isinstance(sub, dict):
            raise PosKernelsError(
                f"config key {part!r} must be an object (the {model_type} language model's config); "
                f"got {reprlib.repr(sub)}"
            )
        text = dict(sub)
        text.setdefault("model_type", entry["text_model_type"])
    text = dict(text)
    given = {k for k, v in standard_keys(text).items() if v is not None}  # the file's own keys, standard names too
    defaults = copy.deepcopy(entry["defaults"])
    assumed = {}
    default_rope = defaults.pop("rope_parameters", None)
    derived = set(entry.get("derived", ())) if {"hidden_size", "num_attention_heads"} & given else set()
    for key, value in defaults.items():
        if key == "per_layer_config":
            continue  # derived below for the file's own layers
        if key == "layer_types" or key in given or (key == "num_hidden_layers" and "layer_types" in given):
            continue  # a file's own layer_types give its layer count
        if key in derived:
            continue  # computed by the class from the file's own keys (head_dim = hidden_size // heads)
        text[key] = value
        if key not in _WINDOW_KEYS:  # read by advise alone (the census does not depend on windows)
            assumed[key] = f"{source} default"
    if isinstance(default_rope, dict) and default_rope:
        if any(isinstance(v, dict) for v in default_rope.values()):
            rope = _nested_from_flat(text, default_rope, entry.get("flat_to") or {}, assumed, source)
            if rope is not None:
                text["rope_parameters"] = rope
                text.pop("rope_scaling", None)
        elif not ({"rope_scaling", "rope_parameters"} & given):
            rope = dict(default_rope)
            if {"rope_theta", "rotary_emb_base"} & given:  # the file's own base wins over the class's
                rope.pop("rope_theta", None)
            if {"partial_rotary_factor", "rotary_pct", "rotary_dim"} & given:
                rope.pop("partial_rotary_factor", None)
            text["rope_parameters"] = rope
            assumed["rope_parameters"] = f"{source} default"
    if text.get("use_sliding_window") is False and "use_sliding_window" in entry["defaults"]:
        text["sliding_window"] = None  # as the class does: no layer looks back over a window
    if text.get("layer_types") is None:
        layer_types, how = _layer_types(entry, text, source, given)
        if layer_types is not None:
            text["layer_types"] = layer_types
            assumed["layer_types"] = how
    if "per_layer_config" not in given and defaults.get("per_layer_config"):
        _per_layer_widths(text, entry, defaults["per_layer_config"], assumed, source)
    return text, part, assumed


def _per_layer_widths(text: dict, entry: dict, default: dict, assumed: dict, source: str) -> None:
    """The class's per-layer head widths (Gemma 4: 512 on its full-attention layers, ``global_head_dim``), placed on
    the file's own layers by layer type, as the class derives them from ``layer_types``."""
    from ..keys import layer_head_dims

    types = entry["defaults"].get("layer_types") or []
    try:
        widths = layer_head_dims({"layer_types": types, "per_layer_config": default})
    except PosKernelsError:
        return  # not one width per layer type: the file's reading refuses it as the census does
    if isinstance(text.get("global_head_dim"), int) and "full_attention" in widths:  # Gemma 4 reads it so
        widths["full_attention"] = text["global_head_dim"]
    own = text.get("layer_types") if isinstance(text.get("layer_types"), list) else []
    text["per_layer_config"] = {str(i): {"head_dim": widths[t]} for i, t in enumerate(own) if t in widths}
    assumed["per_layer_config"] = f"{source} default, placed on the file's layer types"


def _nested_from_flat(text: dict, default_rope: dict, flat_to: dict, assumed: dict, source: str) -> dict | None:
    """A per-layer-type default completed by the file's flat keys, placed as transformers places them."""
    given = text.get("rope_parameters") or text.get("rope_scaling")
    if isinstance(given, dict) and any(isinstance(v, dict) for v in given.values()):
        return None  # the file's own per-layer-type dict: read as it is
    rope = copy.deepcopy(default_rope)
    placed = False
    if isinstance(given, dict) and given:
        targets = flat_to.get("rope_scaling")
        if targets is None:
            return None  # a flat dict replaces the per-layer default (the generic transformers reading)
        for lt in targets:
            rope[lt] = {**rope[lt], **given}
        placed = True
    for key in ("rope_theta", "rope_local_base_freq"):
        value = text.get(key)
        if value is not None and flat_to.get(key):
            for lt in flat_to[key]:
                if not (
                    isinstance(given, dict) and "rope_theta" in given and lt in (flat_to.get("rope_scaling") or [])
                ):
                    rope[lt] = {**rope[lt], "rope_theta": value}
            placed = True
    text.pop("rope_local_base_freq", None)
    assumed["rope_parameters"] = f"{source} default per layer type" + (
        ", with the file's keys placed" if placed else ""
    )
    return rope


def attention_keys(text: dict, head_dim: int) -> dict:
    """What the family's attention module adds to the logit scale, read from the text config (JSON-ready).

    ``query_pre_attn_scalar`` (Gemma: logits scaled by ``query_pre_attn_scalar**-0.5`` instead of
    ``head_dim**-0.5``), whether the attention multiplies by YaRN's ``mscale(factor, mscale_all_dim)**2``
    (DeepSeek V2/V3 and the families whose modeling module does, enumerated from transformers), and Llama 4's
    attention-temperature tuning on its layers without RoPE (``no_rope_layers`` entries 0).

    Parameters
    ----------
    text : dict
        The text config.
    head_dim : int
        The attention's head width.

    Returns
    -------
    dict
        ``head_dim``, ``mscale_all_dim_in_attention`` and, where the config sets them, ``query_pre_attn_scalar``,
        the layers without RoPE and their temperature tuning.

    Examples
    --------
    >>> attention_keys({"model_type": "deepseek_v3"}, 64)["mscale_all_dim_in_attention"]
    True
    >>> attention_keys({"query_pre_attn_scalar": 144}, 128)["query_pre_attn_scalar"]
    144
    """
    out: dict = {"head_dim": head_dim}
    model_type = text.get("model_type")
    entry = class_defaults(model_type)[0] if isinstance(model_type, str) else None
    out["mscale_all_dim_in_attention"] = bool(entry and entry.get("mscale_all_dim_in_attention"))
    scalar = text.get("query_pre_attn_scalar")
    if isinstance(scalar, (int, float)) and not isinstance(scalar, bool) and scalar > 0:
        out["query_pre_attn_scalar"] = scalar
    nope = text.get("no_rope_layers")
    if isinstance(nope, list) and nope and all(v in (0, 1) for v in nope):
        out["layers"] = len(nope)
        out["layers_without_rope"] = sum(1 for v in nope if not v)
        if out["layers_without_rope"] and text.get("attn_temperature_tuning"):
            out["attn_temperature_tuning"] = {
                "floor_scale": text.get("floor_scale", 8192),
                "attn_scale": text.get("attn_scale", 0.1),
            }
    return out
