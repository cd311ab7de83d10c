"""Where a ``config.json`` keeps its RoPE: transformers' key vocabulary, family by family.

Hugging Face transformers reads one RoPE from keys that changed names over the years and between model
families.  This module finds them the way transformers' config classes do, and nothing more:

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

import functools
import json
import math
import numbers
import reprlib
from importlib import resources

from .errors import PosKernelsError

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

#: Keys that mark a dict as the attention part of a config (else its ``text_config`` is read).
ATTENTION_KEYS = ("head_dim", "hidden_size", "num_attention_heads", "max_position_embeddings", "qk_rope_head_dim")


@functools.cache
def attribute_map() -> dict[str, dict[str, str]]:
    """``{model_type: {standard key: the family's key}}``, from transformers' config classes.

    >>> attribute_map()["jetmoe"]
    {'head_dim': 'kv_channels'}
    """
    text = (resources.files("poskernels") / "data" / "hf_attribute_map.json").read_text()
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
        from .errors import did_you_mean

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
    text = (resources.files("poskernels") / "data" / "hf_attribute_map.json").read_text()
    return tuple(json.loads(text)["layer_types"])


def width_keys(raw: dict) -> tuple[int, str]:
    """The per-head width RoPE works in, before partial rotation, and the key(s) it came from.

    Multi-head latent attention (``qk_rope_head_dim``) rotates only its rope part: that is the width.

    Parameters
    ----------
    raw : dict
        The language model's keys.

    Returns
    -------
    width : int
        The head width.
    keys : str
        ``"qk_rope_head_dim"``, ``"head_dim"`` or ``"hidden_size / num_attention_heads"``.

    Raises
    ------
    PosKernelsError
        If no width is given, a width is not a positive integer, or the heads do not divide ``hidden_size``.

    Examples
    --------
    >>> width_keys({"hidden_size": 4096, "num_attention_heads": 32})
    (128, 'hidden_size / num_attention_heads')
    >>> width_keys({"hidden_size": 10, "num_attention_heads": 3})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config keys 'hidden_size' = 10 and 'num_attention_heads' = 3 do not give
    a whole head_dim; set 'head_dim'
    """
    for key in ("qk_rope_head_dim", "head_dim"):
        value = count(raw, key, required=False)  # a positive integer, kept exact (10**400 refused, not overflowed)
        if value is not None:
            return value, key
    for key in ("hidden_size", "num_attention_heads"):
        if raw.get(key) is None:
            raise PosKernelsError(f"config key {key!r} is missing; a RoPE config needs it (or 'head_dim')")
    hidden, heads = count(raw, "hidden_size"), count(raw, "num_attention_heads")
    if hidden % heads:
        raise PosKernelsError(
            f"config keys 'hidden_size' = {raw['hidden_size']!r} and 'num_attention_heads' = "
            f"{raw['num_attention_heads']!r} do not give a whole head_dim; set 'head_dim'"
        )
    return hidden // heads, "hidden_size / num_attention_heads"


def partial_rotation(raw: dict, scaling: dict, scope: str = "rope_parameters", head_dim: int | None = None):
    """The fraction of the width that rotates, and the key it came from (None: the whole width).

    ``rotary_dim`` (GPT-J, CodeGen, MiniMax M2) counts rotated coordinates: the fraction is ``rotary_dim / head_dim``.

    Parameters
    ----------
    raw : dict
        The language model's keys (``partial_rotary_factor``, ``rotary_pct`` or ``rotary_dim``).
    scaling : dict
        The RoPE dict, whose ``partial_rotary_factor`` wins.
    scope : str
        The RoPE dict's key, quoted in an error.
    head_dim : int, optional
        The head width ``rotary_dim`` divides (default: ``raw["head_dim"]``).

    Returns
    -------
    fraction : float
        In ``(0, 1]``.
    key : str or None
        The key it came from; None when nothing is set (``fraction == 1``).

    Raises
    ------
    PosKernelsError
        If the fraction is not in ``(0, 1]`` or ``rotary_dim`` is not in ``(0, head_dim]``.

    Examples
    --------
    >>> partial_rotation({"rotary_dim": 64}, {}, head_dim=128)
    (0.5, 'rotary_dim')
    >>> partial_rotation({"partial_rotary_factor": 2}, {})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'partial_rotary_factor' must lie in (0, 1]; got 2
    """
    candidates = [(scaling, "partial_rotary_factor", f"{scope}.partial_rotary_factor")]
    candidates += [(raw, k, k) for k in ("partial_rotary_factor", "rotary_pct")]
    for where, key, label in candidates:
        value = where.get(key)
        if value is None:
            continue
        if not _real(value) or not 0 < value <= 1:
            raise PosKernelsError(f"config key {label!r} must lie in (0, 1]; got {value!r}")
        return float(value), label
    head = head_dim or raw.get("head_dim")
    if raw.get("rotary_dim") is not None and head:
        value = raw["rotary_dim"]
        if not _real(value) or not 0 < value <= head:
            raise PosKernelsError(f"config key 'rotary_dim' must lie in (0, head_dim = {head!r}]; got {value!r}")
        return value / head, "rotary_dim"
    return 1.0, None


@functools.cache
def _ignoring() -> frozenset:
    """Model types whose transformers config class drops a v4 ``rope_scaling`` (reads ``rope_parameters`` only)."""
    text = (resources.files("poskernels") / "data" / "hf_attribute_map.json").read_text()
    return frozenset(json.loads(text)["ignores_rope_scaling"])


@functools.cache
def default_theta() -> dict:
    """``{model_type: base}``: the ``default_theta`` of each transformers config class (used when a file has none).

    >>> default_theta()["cohere"], default_theta()["llama"]
    (500000.0, 10000.0)
    """
    text = (resources.files("poskernels") / "data" / "hf_attribute_map.json").read_text()
    return json.loads(text)["default_theta"]


def base_key(raw: dict, scaling: dict, scope: str, default: float, per_layer: bool = False) -> tuple[float, str]:
    """The base ``b`` and where it came from: a key, ``transformers default`` or ``assumed``.

    A file without a base takes its family's default (:func:`default_theta`), or ``default``, reported as
    assumed, for a family transformers does not know.  A per-layer-type RoPE without its base is refused:
    the layer types' defaults differ (Gemma 3: 10**6 global, 10**4 local).

    Parameters
    ----------
    raw : dict
        The language model's keys (``rope_theta``, ``rotary_emb_base``, ``model_type``).
    scaling : dict
        The RoPE dict, whose ``rope_theta`` wins.
    scope : str
        The RoPE dict's key, quoted in an error.
    default : float
        The base assumed for a family transformers does not know.
    per_layer : bool
        Whether ``scaling`` is one layer type's dict (then a missing base is refused).

    Returns
    -------
    base : float
    key : str
        The key, ``"transformers default"`` or ``"assumed"``.

    Raises
    ------
    PosKernelsError
        If the base is not a finite number > 1, or a per-layer-type dict has none.

    Examples
    --------
    >>> base_key({"rotary_emb_base": 10000}, {}, "rope_parameters", 1e4)
    (10000.0, 'rotary_emb_base')
    >>> base_key({"model_type": "cohere"}, {}, "rope_parameters", 1e4)
    (500000.0, 'transformers default')
    >>> base_key({}, {}, "rope_parameters", 1e4)
    (10000.0, 'assumed')
    >>> base_key({"rope_theta": 1}, {}, "rope_parameters", 1e4)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_theta' must be a finite number > 1; got 1
    """
    for where, key, label in (
        (scaling, "rope_theta", f"{scope}.rope_theta"),
        (raw, "rope_theta", "rope_theta"),
        (raw, "rotary_emb_base", "rotary_emb_base"),
    ):
        value = where.get(key)
        if value is None:
            continue
        if not _real(value) or value <= 1:
            raise PosKernelsError(f"config key {label!r} must be a finite number > 1; got {value!r}")
        return float(value), label
    if per_layer:
        raise PosKernelsError(
            f"config key {scope + '.rope_theta'!r} is missing; per-layer-type bases have no common default"
        )
    theirs = default_theta().get(raw.get("model_type"))
    if _real(theirs):
        return float(theirs), "transformers default"
    return float(default), "assumed"


# Validators of one key, naming it as scope.key and quoting the value
def where(key: str, scope: str) -> str:
    """The dotted name of ``key`` inside ``scope``, as errors quote it.

    Parameters
    ----------
    key : str
        A config key.
    scope : str
        The dict it lies in (``""``: the top level).

    Returns
    -------
    str
        ``scope.key``, or ``key`` at the top level.

    Examples
    --------
    >>> where("factor", "rope_parameters"), where("head_dim", "")
    ('rope_parameters.factor', 'head_dim')
    """
    return key if not scope else f"{scope}.{key}"


def number(raw: dict, key: str, scope: str = "", default=None, required: bool = True) -> float | None:
    """The finite number under ``key``, else raise naming ``scope.key`` and quoting the value.

    Parameters
    ----------
    raw : dict
        The dict holding the key.
    key : str
        The key read.
    scope : str
        Where ``raw`` lies, for the error (:func:`where`).
    default : float, optional
        Returned when the key is missing or null.
    required : bool
        Whether a missing key (without ``default``) is refused; else None is returned.

    Returns
    -------
    float or None
        The value as a float, ``default``, or None.

    Raises
    ------
    PosKernelsError
        If the value is not a finite real number (booleans refused), or a required key is missing.

    Examples
    --------
    >>> number({"factor": 8}, "factor"), number({}, "factor", default=1.0)
    (8.0, 1.0)
    >>> number({"factor": "x"}, "factor", "rope_parameters")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_parameters.factor' must be a finite number; got 'x'
    """
    if key not in raw or raw[key] is None:
        if default is not None or not required:
            return default
        raise PosKernelsError(f"config key {where(key, scope)!r} is missing; a RoPE config needs it")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite(value):
        raise PosKernelsError(f"config key {where(key, scope)!r} must be a finite number; got {shown(value)}")
    return float(value)


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past float64 (10**400)
        return False


def shown(value) -> str:
    """A short quote of a config value (a 5,000-digit integer is cut).

    Parameters
    ----------
    value : object
        A config value.

    Returns
    -------
    str
        Its ``reprlib`` quote, or an integer's first 20 digits and ``...`` past ``10**30``.

    Examples
    --------
    >>> shown([1, 2]), shown(10**40)
    ('[1, 2]', '10000000000000000000...')
    """
    return reprlib.repr(value) if not isinstance(value, int) or abs(value) < 10**30 else f"{str(value)[:20]}..."


#: Largest count a config may give (head_dim, max_position_embeddings, ...): a signed 64-bit integer, as in the
#: frameworks that read these files.  The rotary width itself is bounded by :data:`poskernels.errors.MAX_D`.
MAX_COUNT = 2**63 - 1


def count(raw: dict, key: str, scope: str = "", required: bool = True) -> int | None:
    """The positive integer under ``key``, kept exact, else raise naming ``scope.key`` and quoting the value.

    Parameters
    ----------
    raw : dict
        The dict holding the key.
    key : str
        The key read.
    scope : str
        Where ``raw`` lies, for the error (:func:`where`).
    required : bool
        Whether a missing key is refused; else None is returned.

    Returns
    -------
    int or None
        The count (an int stays exact: ``2**53 + 1`` is not rounded), or None when missing and not required.

    Raises
    ------
    PosKernelsError
        If the value is not a positive integer up to :data:`MAX_COUNT`, or a required key is missing.

    Examples
    --------
    >>> count({"head_dim": 2**53 + 1}, "head_dim")
    9007199254740993
    >>> count({"head_dim": 1.5}, "head_dim")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'head_dim' must be a positive integer up to 9223372036854775807;
    got 1.5
    """
    value = number(raw, key, scope, required=required)
    if value is None:
        return None
    exact = raw.get(key)  # an int is kept exact, not rounded through float (2**53 + 1 stays odd)
    if value <= 0 or not float(value).is_integer() or value > MAX_COUNT:
        raise PosKernelsError(
            f"config key {where(key, scope)!r} must be a positive integer up to {MAX_COUNT}; got {shown(exact)}"
        )
    return exact if isinstance(exact, int) and not isinstance(exact, bool) else int(value)


def factor_list(raw: dict, key: str, scope: str, planes: int) -> list[float]:
    """LongRoPE's list of per-plane factors under ``key``: one positive number per plane.

    Parameters
    ----------
    raw : dict
        The RoPE dict.
    key : str
        The list's key (a map's per-plane option, LongRoPE's ``short_factor`` or ``long_factor``).
    scope : str
        Where ``raw`` lies, for the error (:func:`where`).
    planes : int
        The number of rotated planes (half the rotated width).

    Returns
    -------
    list of float

    Raises
    ------
    PosKernelsError
        If the key is missing, or is not a list of ``planes`` positive finite numbers.

    Examples
    --------
    >>> factor_list({"long_factor": [1, 2.5]}, "long_factor", "rope_parameters", 2)
    [1.0, 2.5]
    >>> factor_list({"long_factor": [1.0]}, "long_factor", "rope_parameters", 2)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_parameters.long_factor' must be a list of 2 positive
    numbers (one per plane); got 1 values: [1.0]
    """
    if key not in raw or raw[key] is None:
        raise PosKernelsError(f"config key {where(key, scope)!r} is missing; LongRoPE needs one factor per plane")
    values = raw[key]
    ok = isinstance(values, list) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in values
    )
    if not ok or len(values) != planes:
        count = f"{len(values)} values: " if isinstance(values, list) else ""
        raise PosKernelsError(
            f"config key {where(key, scope)!r} must be a list of {planes} positive numbers (one per plane); "
            f"got {count}{reprlib.repr(values)}"
        )
    return [float(v) for v in values]
