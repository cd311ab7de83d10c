"""``poskernels advise CONFIG --target-length N``: the RoPE block to paste into ``config.json`` to reach ``N`` tokens.

For each map transformers implements (``linear``, ``dynamic``, ``yarn``, ``llama3``, and ``longrope`` when the
config carries its two factor lists: the map records with an ``advise_order``, :mod:`poskernels.extension.maps`),
the block is written as transformers v5 reads it (``rope_parameters``, with ``max_position_embeddings``), the config
with it is read back by the census (:func:`~poskernels.census.compute.census` at ``N``), and its verdicts are printed:
the planes reading angles training never produced (Theorem 5 (i)), the kernel's first negative offset up to
``N - 1`` (Men et al. 2024) and the logit multiplier. The blocks start from the map the weights were trained with, kept
when it reaches ``N`` and rescaled when it does not; no block lowers ``max_position_embeddings`` (dynamic NTK, which
would, is not advised there); the maps are ranked by :data:`~poskernels.census.rank.CRITERION`, and each says why it
ranks where it does (:mod:`poskernels.census.rank`; each block is written by its map's record). A block the
installed transformers' config class refuses (Phi-3 accepts LongRoPE only) is listed as refused, with transformers'
reason. :func:`~poskernels.census.advice_text.render` writes it as text; ``poskernels advise``
(:mod:`poskernels.cli.advise`) prints it, ``--json PATH`` every block and verdict (``-``: standard output).

A config with one RoPE per layer type (Gemma 2/3/3n, ModernBERT, ...) is advised per layer type: a layer type
whose attention looks back at most a window (``sliding_window``, Llama 4's ``attention_chunk_size``) within its
training length needs no extension, and the advice says so; a window past ``L`` is advised at the window, the
farthest offset the layer reads; every other layer type gets one block per map, written as the whole per-layer
``rope_parameters`` (transformers v5's form, which the installed version reads for every such family) with that
layer type's RoPE replaced and the others kept, each with its own recommendation.  ``--layer-type NAME`` advises
one layer type.  A config whose layers share one RoPE gets one block, with a note for its windowed layers.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np

from ..errors import PosKernelsError, check_positive_int, did_you_mean
from ..extension.maps import advised_types, spec_of
from .compute import census, has_rope, text_of
from .config import config_extension, load_layer_configs, parse_config, raw_config, text_config
from .context import census_work, check_work
from .keys import count, layer_dicts, rope_dict
from .rank import block_for, changed_planes, criterion, rank

__all__ = ["ADVISED_TYPES", "WINDOWED", "advise", "advised_config"]

#: The rope types advised for the built-in maps, in the order of preference on a tie (read from the map records;
#: :func:`~poskernels.extension.map_registry.advised_types` reads maps registered later too).
ADVISED_TYPES = advised_types()

#: Layer types whose attention looks back at most a window, and the config key that gives the window.
WINDOWED = {
    "sliding_attention": "sliding_window",
    "hybrid_sliding": "sliding_window",
    "reference_sliding_attention": "sliding_window",
    "window_attention": "sliding_window",
    "chunked_attention": "attention_chunk_size",
}


def _refused_by_transformers(new: dict) -> str | None:
    """Why the installed transformers' config class refuses ``new`` (Phi-3 takes LongRoPE only), else None.

    Without transformers (or for a family it does not know) nothing is refused here.
    """
    from .config.defaults import use_transformers
    from .config.hf_cache import memo

    model_type = new.get("model_type")
    if not use_transformers() or not isinstance(model_type, str):
        return None

    def compute():
        import warnings

        from transformers import CONFIG_MAPPING

        if model_type not in CONFIG_MAPPING:
            return None
        import transformers

        transformers.logging.set_verbosity_error()  # its notes on keys a rope type does not read: not ours to print
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                CONFIG_MAPPING[model_type].from_dict(json.loads(json.dumps(new)))
        except Exception as err:  # noqa: BLE001 - transformers' own refusal, quoted
            return " ".join(str(err).split())[:300]
        return None

    # a class refuses a block for its rope type and keys (Phi-3: LongRoPE only), not for the advised values
    _, text = text_of(new)
    shape = {k: sorted(v) if isinstance(v, dict) else type(v).__name__ for k, v in sorted(text.items())}
    rope = text.get("rope_parameters") or {}
    types = {k: v.get("rope_type") for k, v in rope.items() if isinstance(v, dict)} or rope.get("rope_type")
    return memo("refused", json.dumps([model_type, types, shape], sort_keys=True, default=str), compute)


def advised_config(raw: dict, block: dict, max_pos: int, layers: dict | None = None) -> dict:
    """``raw`` with its RoPE replaced by ``block`` (and ``max_position_embeddings``), ready to save as config.json.

    ``layers`` (a per-layer-type config): the whole per-layer dict to write; ``block`` is already in it.

    Parameters
    ----------
    raw : dict
        The model's ``config.json`` (a multimodal one's ``text_config`` is the part rewritten); not modified.
    block : dict
        The ``rope_parameters`` to write.
    max_pos : int
        The ``max_position_embeddings`` to write.
    layers : dict, optional
        The per-layer-type ``rope_parameters`` to write instead of ``block``.

    Returns
    -------
    dict
        A copy of ``raw`` with its old RoPE keys (``rope_scaling``, ``rope_theta``, ...) removed and the new ones
        set.

    Examples
    --------
    >>> raw = {"model_type": "llama", "rope_theta": 10000.0, "max_position_embeddings": 4096}
    >>> advised_config(raw, {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}, 16384)
    {'model_type': 'llama', 'max_position_embeddings': 16384,
     'rope_parameters': {'rope_type': 'linear', 'rope_theta': 10000.0, 'factor': 4.0}}
    """
    out, text = text_of(raw)
    for key in ("rope_scaling", "rope_theta", "original_max_position_embeddings", "rope_local_base_freq"):
        text.pop(key, None)
    if layers is None:
        text.pop("partial_rotary_factor", None)
    text["rope_parameters"] = block if layers is None else layers
    text["max_position_embeddings"] = max_pos
    return out


def _maps(raw: dict, name: str, cfg, N: int, layer_type: str | None = None, kept: dict | None = None) -> dict:
    """Every advised block for one RoPE (``layer_type`` of a per-layer config, its other dicts ``kept``) at ``N``,
    ranked (:mod:`poskernels.census.rank`)."""
    rows, refused, not_advised = {}, {}, {}
    d = cfg.rotary_dim  # every block's census reads two kernels (native, the block's) at d/2 planes: bounded first
    advised, own = advised_types(), spec_of(cfg.rope_type)
    check_work("advise", d, N, len(advised) * census_work(d, N, 2, False)[0], len(advised) * d)
    trained, _, _ = config_extension(cfg, max(cfg.max_position_embeddings, cfg.training_length))
    turned = (cfg.training_length - 1) * trained.inv_freq >= 2 * math.pi  # (P,) planes the window resolves
    # a map advised only where the model ships it (LongRoPE's lists are searched per model; proportional RoPE)
    types = tuple(t for t in advised if t == cfg.rope_type or not spec_of(t).advise_if_shipped)
    types += (cfg.rope_type,) if own.advise_if_shipped and cfg.rope_type not in advised else ()
    for rope_type in types:
        block, max_pos, how = block_for(rope_type, cfg, N)
        if block is None:
            not_advised[rope_type] = how
            continue
        layers = None if layer_type is None else {**kept, layer_type: block}
        new = advised_config(raw, block, max_pos, layers)
        why = _refused_by_transformers(new)
        if why:
            refused[rope_type] = why
            continue
        read = parse_config(new, name=f"{name} + {rope_type}", layer_type=layer_type)
        data = census(read, N, scan_base=False, every_map=False)
        inv_freq = data["maps"]["config"]["inv_freq"]
        rows[rope_type] = {
            "rope_parameters": block if layers is None else layers,
            "max_position_embeddings": max_pos,
            "how": how,
            "verdicts": {
                "unseen_planes": data["context"]["unseen_planes"]["config"],
                "planes_changed": changed_planes(trained.inv_freq, np.asarray(inv_freq), turned),
                "first_negative_offset": data["context"]["first_negative_offset"]["config"],
                "logit_multiplier": data["logit_multiplier"]["total"],
                "attention_factor": data["maps"]["config"]["attention_factor"],
                "inv_freq": inv_freq,
            },
        }
    if not rows:
        raise PosKernelsError(
            f"transformers' config class refuses every advised block for {name!r}"
            f"{f' (layer type {layer_type})' if layer_type else ''}: "
            + "; ".join(f"{t}: {w}" for t, w in refused.items())
        )
    ranked = rank(rows, types)
    best = ranked[0]
    return {
        "training_length": cfg.training_length,
        "target_length": N,
        "shipped_map": cfg.rope_type,
        "maps": {t: rows[t] for t in ranked},
        "ranking": ranked,
        "criterion": criterion(),
        "refused_by_transformers": refused,
        "not_advised": not_advised,
        "recommended": best,
        "reason": f"{best}: {rows[best]['why']}",
    }


def _window(text: dict, layer_type: str) -> tuple[str, int] | None:
    """The key and size of the window a layer type's attention looks back over (None: the whole sequence)."""
    key = WINDOWED.get(layer_type)
    size = count(text, key, required=False) if key else None
    if key == "sliding_window" and size is None and count(text, "local_attention", required=False):
        return "local_attention / 2", count(text, "local_attention") // 2  # ModernBERT: the whole two-sided window
    return (key, size) if size is not None else None


def _layer_notes(text: dict, N: int) -> list[str]:
    """For a config whose layers share one RoPE: its windowed layers, which never read offsets past the window."""
    kinds = Counter(t for t in (text.get("layer_types") or []) if isinstance(t, str))
    notes = []
    for lt, n in kinds.items():
        window = _window(text, lt)
        if window and window[1] < N:
            notes.append(
                f"{n} of {sum(kinds.values())} layers are {lt} ({window[0]} = {window[1]}): they never read offsets "
                f"past {window[1] - 1}, so they need no extension; the block changes their frequencies too (all "
                "layers share one RoPE)"
            )
    return notes


def _layer_advice(raw: dict, name: str, cfgs: dict, N: int) -> dict:
    """One advice per layer type with RoPE: its blocks, or why it needs no extension."""
    text = text_config(raw)
    scaling, scope = rope_dict(text)
    dicts = layer_dicts(scaling, text, scope) or {}
    kept = dict(dicts)  # a layer type without RoPE (null) stays null
    for lt, cfg in cfgs.items():  # every kept RoPE carries its own base: the flat keys are dropped
        kept[lt] = {"rope_type": cfg.rope_type, **{k: v for k, v in (dicts.get(lt) or {}).items() if k != "type"}}
        kept[lt]["rope_theta"] = (cfg.read_from.get("proportional") or {}).get("rope_theta", cfg.base)
    out = {}
    for lt, cfg in cfgs.items():
        L, window = cfg.training_length, _window(text, lt)
        reach = min(N, window[1]) if window else N  # one more than the farthest offset the layer reads
        if reach <= L:
            why = (
                f"its attention looks back at most {window[0]} = {window[1]} tokens, within its training length "
                f"L = {L}: its frequencies need no extension at any target"
                if window and window[1] <= L
                else f"the target N = {N} is within its training length L = {L}"
            )
            out[lt] = {"training_length": L, "needs_extension": False, "why": why}
            continue
        advice = _maps(raw, name, cfg, reach, layer_type=lt, kept=kept)
        if window:
            advice["why"] = f"advised at its window {window[0]} = {window[1]}, the farthest offset it reads"
        out[lt] = {"needs_extension": True} | advice
    whole = [a for lt, a in out.items() if not _window(text, lt)]  # layer types reading the whole sequence
    if whole and not any(a["needs_extension"] for a in whole):  # windows alone: any target is fine, and said
        raise PosKernelsError(
            f"the target length must be above the training length of a layer type that reads it; got {N!r}, and "
            + "; ".join(f"{lt}: {a['why']}" for lt, a in out.items())
        )
    return out


def advise(spec, target_length: int, layer_type: str | None = None) -> dict:
    """Every advised block for ``spec`` at ``target_length``, its census verdicts, and the recommendation.

    A config with one RoPE per layer type is advised per layer type (``layer_type``: only that one):
    ``{"config", "target_length", "layer_types": {NAME: advice}}``.

    Parameters
    ----------
    spec : str, path or dict
        A bundled config's name, a ``config.json`` path (or its model folder), or the config as a dict.
    target_length : int
        The context length to reach, ``N``.
    layer_type : str, optional
        One layer type of a per-layer-type config.

    Returns
    -------
    dict
        ``config``, ``training_length``, ``target_length``, ``maps`` (per rope type: its ``rope_parameters``,
        ``max_position_embeddings``, ``how``, census ``verdicts``, ``rank`` and ``why``), ``recommended`` and the
        maps not advised with why; per layer type under ``layer_types`` for a per-layer-type config.

    Raises
    ------
    PosKernelsError
        If the config cannot be read or has no RoPE, ``target_length`` is not a positive integer, or
        ``layer_type`` does not match the config.

    Examples
    --------
    >>> a = advise("llama-2-7b", 16384)
    >>> a["maps"]["linear"]["rope_parameters"]
    {'rope_type': 'linear', 'rope_theta': 10000.0, 'factor': 4.0}
    >>> a["recommended"], a["maps"]["yarn"]["verdicts"]["unseen_planes"]
    ('llama3', [])
    >>> advise("llama-3.1-8b", 65536)["maps"]["llama3"]["how"]  # the shipped llama3 x8 reaches 65,536: kept
    'kept'
    >>> g = advise({"model_type": "modernbert"}, 32768)["layer_types"]
    >>> g["sliding_attention"]["needs_extension"], g["full_attention"]["recommended"]
    (False, 'llama3')
    """
    raw, name = raw_config(spec)
    N = check_positive_int("the target length", target_length)
    if layer_type is not None and not isinstance(layer_type, str):
        raise PosKernelsError(f"layer_type must be a layer type's name (a str) or None; got {layer_type!r:.80}")
    if not has_rope(raw):
        raise PosKernelsError(
            f"config {name!r} (model type {raw.get('model_type')!r}) has no RoPE: no rope_theta, rope_parameters "
            "or rotary keys in the file or its class defaults; advise reads rotary models only"
        )
    cfgs = load_layer_configs(raw)
    if list(cfgs) != [None]:
        if layer_type is not None:
            if layer_type not in cfgs:
                raise PosKernelsError(
                    f"unknown layer type {layer_type!r}{did_you_mean(layer_type, list(cfgs))}; this config's layer "
                    f"types with RoPE: {', '.join(cfgs)}"
                )
            cfgs = {layer_type: cfgs[layer_type]}
        return {"config": name, "target_length": N, "layer_types": _layer_advice(raw, name, cfgs, N)}
    if layer_type is not None:
        kinds = sorted(set(text_config(raw).get("layer_types") or []))
        raise PosKernelsError(
            f"--layer-type {layer_type!r} was given, but "
            + (
                f"this config's layer types ({', '.join(kinds)}) share one RoPE; leave --layer-type out"
                if kinds
                else "this config has no layer types: one RoPE for all layers"
            )
        )
    cfg = cfgs[None]
    if N <= cfg.training_length:
        raise PosKernelsError(
            f"the target length must be above the training length L = {cfg.training_length}; got {N!r}"
        )
    notes = _layer_notes(text_config(raw), N)
    att = cfg.attention
    if att.get("layers_without_rope"):
        notes.append(
            f"{att['layers_without_rope']} of {att['layers']} layers have no RoPE (no_rope_layers entries 0): no block "
            "changes them; past L they read positions only through the causal mask"
        )
    return {"config": name} | _maps(raw, name, cfg, N) | {"layer_notes": notes}
