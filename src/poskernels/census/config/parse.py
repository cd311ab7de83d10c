"""A model's RoPE, read from its ``config.json``: the frequencies it trains with and the extension it asks for.

What is read (Hugging Face transformers' keys, v4 ``rope_scaling`` or v5 ``rope_parameters``):

- the rotary width ``d = int(head_dim * partial_rotary_factor)``, with ``head_dim`` or
  ``hidden_size / num_attention_heads``; it must be even (planes are coordinate pairs);
- the base ``b = rope_theta`` (10000 when absent, as in transformers);
- ``max_position_embeddings``, and the training length ``L``: ``original_max_position_embeddings``
  (top level first, as transformers does for Phi-3, then inside the scaling dict) or else
  ``max_position_embeddings``;
- the rope type (``rope_type``, or the legacy ``type``; ``"su"`` is LongRoPE's first name) and its options.

Bad input raises :class:`~poskernels.errors.PosKernelsError` naming the key and quoting the value.
Where a config comes from (a bundled name, a file, a transformers object) is :mod:`poskernels.census.config.load`.
"""


from __future__ import annotations

import math
import reprlib

from ...encodings import DEFAULT_BASE
from ...errors import MAX_D, PosKernelsError, did_you_mean
from ...extension.maps import DEFAULT_TYPE, ROPE_TYPES, MapSpec, Option, spec_of
from ..keys import (
    base_key,
    count,
    factor_list,
    layer_dicts,
    layer_head_dims,
    number,
    partial_rotation,
    rope_dict,
    text_part,
    where,
    width_keys,
)
from .fill import attention_keys, fill_defaults
from .record import RopeConfig

__all__ = ["REFUSED_TYPES", "parse_config", "parse_layer_configs"]


#: Rope types transformers knows that the census refuses, and why (one line each).
REFUSED_TYPES: dict[str, str] = {
    "axial": "a 2-D (image) rotary embedding over (row, column) positions, not one sequence of offsets",
}


def _rope_type(scaling: dict, scope: str) -> str:
    rope_type = scaling.get("rope_type", scaling.get("type", DEFAULT_TYPE))
    if not isinstance(rope_type, str):  # a list or a table would reach the registries' hashing
        key = where("rope_type" if "rope_type" in scaling else "type", scope)
        raise PosKernelsError(
            f"config key {key!r} names an unknown rope type {reprlib.repr(rope_type)} (not a name); "
            f"accepted: {', '.join(ROPE_TYPES)}"
        )
    if rope_type in REFUSED_TYPES:
        raise PosKernelsError(
            f"config key {where('rope_type', scope)!r} names rope type {rope_type!r}, "
            f"{REFUSED_TYPES[rope_type]}; the census does not read it"
        )
    if rope_type not in ROPE_TYPES:
        key = where("rope_type" if "rope_type" in scaling else "type", scope)
        accepted = ", ".join(ROPE_TYPES)
        raise PosKernelsError(
            f"config key {key!r} names an unknown rope type {rope_type!r}{did_you_mean(rope_type, ROPE_TYPES)}; "
            f"accepted: {accepted}"
        )
    return str(spec_of(rope_type).rope_type)  # an alias (``su``) read as its map's spelling


def _check_options(spec: MapSpec, scaling: dict, scope: str, planes: int, clean: dict) -> None:
    """The options of ``spec`` a config gives, checked (numbers, then switches, then per-plane lists; ``factor``
    is checked before, with the training length); per-plane lists are written into ``clean`` as read."""
    for o in (o for kind in ("number", "bool", "factors") for o in spec.options if o.kind == kind):
        if o.name == "factor" or (not o.required and o.name not in scaling):
            continue
        if o.kind == "factors":
            clean[o.name] = factor_list(scaling, o.name, scope, planes)
        elif o.kind == "bool" and not isinstance(scaling[o.name], bool):
            raise PosKernelsError(f"config key {where(o.name, scope)!r} must be true or false; got {scaling[o.name]!r}")
        elif o.kind == "number":
            _bounded(scaling, o, scope, number(scaling, o.name, scope, required=o.required))


def _bounded(scaling: dict, o, scope: str, value: float | None) -> None:
    if value is not None and o.minimum is not None and (value <= o.minimum if o.strict else value < o.minimum):
        raise PosKernelsError(
            f"config key {where(o.name, scope)!r} must be {'>' if o.strict else '>='} {o.minimum:g}; "
            f"got {scaling[o.name]!r}"
        )


def _text(raw: dict) -> tuple[dict, str, dict]:
    """The language model's keys with the class defaults the file leaves out, its path, and what was assumed."""
    text, part, assumed = fill_defaults(raw)
    text, inner = text_part(text)
    return text, part or inner, assumed


def parse_config(
    raw: dict, name: str = "config", source: str | None = None, layer_type: str | None = None
) -> RopeConfig:
    """Read the RoPE part of a ``config.json`` dict (keys as transformers reads them, :mod:`~poskernels.census.keys`).

    Parameters
    ----------
    raw : dict
        A ``config.json`` as a dict (a multimodal one's ``text_config`` is read when it holds the RoPE).
    name, source : str, optional
        The config's name and where it was read from, carried on the result.
    layer_type : str, optional
        One layer type's RoPE, where the config sets one per layer type (see :func:`parse_layer_configs`).

    Returns
    -------
    RopeConfig
        Rotary width, base, lengths, map and its options, as transformers' rotary module would read them.

    Raises
    ------
    PosKernelsError
        If ``raw`` is not a dict, a key the map needs is missing or out of range, or ``layer_type`` does not
        match how the config sets its RoPE.

    Examples
    --------
    >>> c = parse_config({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096})
    >>> c.rotary_dim, c.base, c.training_length, c.rope_type
    (128, 10000.0, 4096, 'default')
    >>> neox = {"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25, "rotary_emb_base": 10000,
    ...         "max_position_embeddings": 2048}
    >>> parse_config(neox).rotary_dim
    24
    >>> parse_config({"head_dim": 128, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "linear"}})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_scaling.factor' is missing; a RoPE config needs it
    """
    if not isinstance(raw, dict):
        raise PosKernelsError(f"a config must be a JSON object; got {reprlib.repr(raw)}")
    if layer_type is not None and not isinstance(layer_type, str):  # a list is unhashable: no lookup, a refusal
        raise PosKernelsError(f"layer_type must be a layer type's name (a str) or None; got {reprlib.repr(layer_type)}")
    raw, part, assumed = _text(raw)
    scaling, scope = rope_dict(raw)
    layers = layer_dicts(scaling, raw, scope)
    if layers is None and layer_type is not None:
        raise PosKernelsError(f"layer_type {layer_type!r} was given, but the config has one RoPE for all layers")
    if layers is not None:
        if layer_type not in layers:
            raise PosKernelsError(
                f"config key {scope!r} holds one RoPE per layer type ({', '.join(layers)}); "
                f"choose one with layer_type; got {layer_type!r}"
            )
        if layers[layer_type] is None:
            raise PosKernelsError(f"layer type {layer_type!r} has no RoPE ({scope}.{layer_type} is null)")
        scaling, scope = layers[layer_type], f"{scope}.{layer_type}"
    if part:
        scope = f"{part}.{scope}"
    widths = layer_head_dims(raw)  # a head width of the layer type's own (Gemma 4's full attention: 512)
    if layer_type in widths:
        raw = {**raw, "head_dim": widths[layer_type]}
    # Rotary width d = int(width * partial rotation)
    head_dim, width_from = width_keys(raw)
    if layer_type in widths:
        width_from = f"per_layer_config (the {layer_type} layers' head_dim)"
    prf, prf_from = partial_rotation(raw, scaling, scope, head_dim)
    if width_from == "qk_rope_head_dim":
        prf, prf_from = 1.0, None  # MLA: the rope part is rotated whole (transformers ignores the factor there)
    rotary_dim = int(head_dim * prf)
    named = scaling.get("rope_type", scaling.get("type"))
    proportional = isinstance(named, str) and named in ROPE_TYPES and spec_of(named).head_planes
    if proportional:  # p-RoPE as transformers ships it: b**(-2j/head_dim) on the first planes, zero on the rest
        rotary_dim = 2 * int(prf * head_dim // 2)
    if rotary_dim > MAX_D:
        raise PosKernelsError(
            f"the rotary width int({width_from} * {prf_from or 'partial_rotary_factor'}) = {rotary_dim} is past "
            f"{MAX_D} (one census row per plane; "
            f"the widest released head is 512); got head_dim = {head_dim}"
        )
    if rotary_dim < 2 or rotary_dim % 2:
        width = f"'{width_from}'" if width_from != "hidden_size / num_attention_heads" else f"'{width_from}'"
        raise PosKernelsError(
            f"config keys {width} = {head_dim} and {prf_from or 'partial_rotary_factor'!r} = {prf!r} give the "
            f"rotary width int({head_dim} * {prf!r}) = {rotary_dim}; it must be a positive even integer "
            "(planes are pairs)"
        )
    base, base_from = base_key(raw, scaling, scope, DEFAULT_BASE, per_layer=layer_type is not None)
    if proportional:  # the turning planes read b**(-2j/head_dim) = (b**(d/head_dim))**(-2j/d): the base over d
        proportional = {"rope_theta": base, "turning_planes": rotary_dim // 2, "planes": head_dim // 2}
        base, base_from = base ** (rotary_dim / head_dim), f"{base_from} ** (rotary width / head_dim)"
    max_pos = count(raw, "max_position_embeddings")
    rope_type = _rope_type(scaling, scope)
    spec = spec_of(rope_type)
    L, L_from = count(raw, "original_max_position_embeddings", required=False), "original_max_position_embeddings"
    if L is None:
        L, L_from = (
            count(scaling, "original_max_position_embeddings", scope, required=False),
            where("original_max_position_embeddings", scope),
        )
    # Options the type needs, checked now so nothing downstream sees a bad value
    clean = {k: v for k, v in scaling.items() if k != "mrope_section"}
    factor_option = spec.option("factor") or Option("factor", minimum=1.0)
    if factor_option.required or "factor" in scaling:  # every rope type's factor is >= 1
        factor = number(scaling, "factor", scope, required=not spec.factor_from_lengths)
        _bounded(scaling, factor_option, scope, factor)
    if L is None and spec.length_from_factor:  # linear stretches the trained positions factor-fold up to max_pos
        ratio = max_pos / number(scaling, "factor", scope)
        L = max(1, round(ratio) if abs(ratio - round(ratio)) < 1e-9 * ratio else math.floor(ratio))
        L_from = "max_position_embeddings / factor (linear scaling without original_max_position_embeddings)"
    elif L is None:
        L, L_from = max_pos, "max_position_embeddings"
    _check_options(spec, scaling, scope, rotary_dim // 2, clean)
    notes = {"width": width_from, "partial_rotation": prf_from, "base": base_from, "training_length": L_from}
    if part:
        notes["part"] = part
    if assumed:
        notes["defaults"] = assumed
    if proportional:
        notes["proportional"] = proportional
    if "mrope_section" in scaling:  # Qwen2-VL: planes split among (t, h, w) position ids, equal on text
        notes["mrope_section"] = scaling["mrope_section"]
    return RopeConfig(
        attention=attention_keys(raw, head_dim),
        name=name,
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        partial_rotary_factor=prf,
        base=base,
        max_position_embeddings=max_pos,
        training_length=L,
        rope_type=rope_type,
        scaling=clean,
        model_type=raw.get("model_type"),
        source=source if source is not None else raw.get("_source"),
        layer_type=layer_type,
        read_from=notes,
    )


def parse_layer_configs(raw: dict, name: str = "config", source: str | None = None) -> dict[str | None, RopeConfig]:
    """Every RoPE of a config: ``{None: cfg}`` for one RoPE, else one entry per layer type that has RoPE.

    Parameters
    ----------
    raw : dict
        A ``config.json`` as a dict.
    name, source : str, optional
        As for :func:`parse_config`.

    Returns
    -------
    dict of str or None to RopeConfig
        By layer type (None when one RoPE serves every layer); a layer type without RoPE is left out.

    Raises
    ------
    PosKernelsError
        If ``raw`` is not a dict, no layer type has RoPE, or a layer type's RoPE is refused by :func:`parse_config`.

    Examples
    --------
    >>> raw = {"head_dim": 256, "max_position_embeddings": 131072,
    ...        "layer_types": ["sliding_attention", "full_attention"],
    ...        "rope_parameters": {"sliding_attention": {"rope_theta": 1e4},
    ...                            "full_attention": {"rope_theta": 1e6, "rope_type": "linear", "factor": 8.0}}}
    >>> {k: (c.base, c.rope_type) for k, c in parse_layer_configs(raw).items()}
    {'sliding_attention': (10000.0, 'default'), 'full_attention': (1000000.0, 'linear')}
    """
    if not isinstance(raw, dict):
        raise PosKernelsError(f"a config must be a JSON object; got {reprlib.repr(raw)}")
    part, _, _ = _text(raw)
    scaling, scope = rope_dict(part)
    layers = layer_dicts(scaling, part, scope)
    if layers is None:
        return {None: parse_config(raw, name, source)}
    out = {lt: parse_config(raw, name, source, layer_type=lt) for lt, d in layers.items() if d is not None}
    if not out:
        raise PosKernelsError(f"config key {scope!r} gives no layer type a RoPE; got {reprlib.repr(scaling)}")
    return out
