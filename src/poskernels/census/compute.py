"""The census of a model's RoPE as data: one RoPE at a target length, or every RoPE of a config.

:func:`census` reads one RoPE at a target length, :func:`census_all` every RoPE of a config.

What each census holds is described in :mod:`poskernels.cli.census` (the command line that prints it); this module
computes it, JSON-ready: the planes (Theorem 5 (i), (iv)), every extension map's frequencies, what the frequencies mean
for a context of ``N`` tokens (:func:`~poskernels.census.context.context_census`: critical dimension, the kernel's first
negative offset, the smallest base, the planes reading unseen angles) and the logit multiplier
(:func:`~poskernels.census.context.logit_multiplier`). A config without RoPE (:func:`has_rope`) is refused.  The lab's
census view and ``poskernels advise`` read it too.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..errors import PosKernelsError, check_positive_int, did_you_mean
from ..extension import MAPS, extend_core, map_arguments, map_core
from ..extension.yarn_ramp_gap import compare_yarn_ramps_core
from ..theory.census import chen_constant, sum_theta_sq, wavelength_census
from .config import ROPE_TYPES, RopeConfig, config_extension, parse_layer_configs, raw_config
from .config.defaults import class_defaults
from .context import WORK_BUDGET, census_work, check_work, context_census, logit_multiplier

__all__ = [
    "NULL_MEANS",
    "census",
    "census_all",
    "has_rope",
    "json_safe",
    "text_of",
]


#: Keys that carry a RoPE in a file (a family whose defaults and file have none has no RoPE).
_ROPE_KEYS = ("rope_theta", "rope_parameters", "rope_scaling", "rotary_emb_base", "rotary_pct", "qk_rope_head_dim")


def text_of(raw: dict) -> tuple[dict, dict]:
    """A deep copy of the file and the dict in it that holds the language model's keys.

    Parameters
    ----------
    raw : dict
        A ``config.json`` as a dict; not modified.

    Returns
    -------
    out : dict
        The copy.
    text : dict
        The part of ``out`` with the language model's keys (its ``text_config`` for a multimodal file, else
        ``out``).

    Examples
    --------
    >>> raw = {"model_type": "llava", "text_config": {"model_type": "llama", "rope_theta": 1e6}}
    >>> out, text = text_of(raw)
    >>> text, text is out["text_config"], out is raw
    ({'model_type': 'llama', 'rope_theta': 1000000.0}, True, False)
    """
    out = copy.deepcopy(raw)
    model_type = out.get("model_type")
    entry = class_defaults(model_type)[0] if isinstance(model_type, str) else None
    part = entry["part"] if entry else ""
    if part and isinstance(out.get(part), dict):
        return out, out[part]
    if not part and isinstance(out.get("text_config"), dict) and "max_position_embeddings" not in out:
        return out, out["text_config"]
    return out, out


def has_rope(raw: dict) -> bool:
    """Whether a config dict has a RoPE: a rotary key in the file, or in its family's class defaults.

    A family transformers does not know is read as RoPE (the census's reading of a bare dict).

    Parameters
    ----------
    raw : dict
        A ``config.json`` as a dict.

    Returns
    -------
    bool
        Whether the census reads it.

    Examples
    --------
    >>> has_rope({"model_type": "gpt2"}), has_rope({"model_type": "llama"}), has_rope({"head_dim": 64})
    (False, True, True)
    """
    _, text = text_of(raw)
    if any(text.get(k) is not None for k in _ROPE_KEYS):
        return True
    model_type = text.get("model_type", raw.get("model_type"))
    entry = class_defaults(model_type)[0] if isinstance(model_type, str) else None
    if entry is None:
        return True  # a family transformers does not know: read as RoPE, as the census reads it
    return any(entry["defaults"].get(k) is not None for k in _ROPE_KEYS)


def census(cfg: RopeConfig, target_length: int | None = None, scan_base: bool = True, every_map: bool = True) -> dict:
    """The census of ``cfg`` at ``target_length`` (default: :meth:`RopeConfig.default_target_length`), JSON-ready.

    ``scan_base=False`` skips the smallest-base scan (seconds at ``d = 128``; the lab's census view leaves it out);
    ``every_map=False`` reads the config's own map alone (``advise``).  The work is bounded before it starts
    (:data:`~poskernels.census.context.WORK_BUDGET`): a size past it is refused with the target that fits, and a base
    scan past it is skipped, with the reason.

    Parameters
    ----------
    cfg : RopeConfig
        A parsed config (:func:`~poskernels.census.config.parse_config`).
    target_length : int, optional
        ``N``; the config's default target by default.
    scan_base : bool
        Scan for the smallest base whose kernel stays nonnegative.
    every_map : bool
        Read every registered map (else the config's own alone).

    Returns
    -------
    dict
        ``config``, ``target_length``, ``kappa``, ``planes`` (per plane: wavelength, turns, full turn, each map's
        factor), ``maps``, ``context`` (:func:`~poskernels.census.context.context_census`), ``interpolation_bound`` and
        the logit multiplier.

    Raises
    ------
    PosKernelsError
        If the target length is not a positive integer at most ``2^53``, or the work exceeds
        :data:`~poskernels.census.context.WORK_BUDGET`.

    Examples
    --------
    >>> from poskernels.census.config import load_config
    >>> c = census(load_config("llama-2-7b"))
    >>> c["target_length"], c["kappa"], sum(p["full_turn"] for p in c["planes"])
    (16384, 4.0, 46)
    >>> round(c["interpolation_bound"]["ratio"], 2)  # the article's 1.15 at d = 128, b = 10**4
    1.15
    """
    L = cfg.training_length
    N = cfg.default_target_length() if target_length is None else check_positive_int("the target length", target_length)
    if N > 2**53:  # checked first: a larger N would be refused by the kernel's scans only after all of them had run
        raise PosKernelsError(
            f"the target length must be at most 2^53 = {2**53} (float64 holds every offset below it exactly); got {N}"
        )
    if N < L:
        raise PosKernelsError(f"the target length must be >= the training length L = {L}; got {N!r}")
    kappa = N / L
    theta, kappa, L = map_arguments(cfg.theta, kappa, L)  # (d/2,)  checked once for every map below
    d, b = cfg.rotary_dim, cfg.base
    kernels = len(MAPS) + 2 if every_map else 2  # native, each map (LongRoPE's short list too), the config's
    terms, base_terms = census_work(d, N, kernels, scan_base)
    check_work("the census", d, N, terms, kernels * (d // 2))
    skipped = None
    if base_terms and terms + base_terms > WORK_BUDGET:
        scan_base = False
        skipped = f"it would evaluate {base_terms:.3g} kernel terms more, past the budget of {WORK_BUDGET:.3g}"
    maps, not_applicable = {}, {}
    cores = {}  # each map through its core: theta, kappa and L were checked once, above
    for name in MAPS if every_map else ():
        cores[name] = map_core(name)
        try:
            ext = _extension(cores[name], name, theta, kappa, L, cfg.map_options(name))
        except PosKernelsError as err:  # a map the config did not ask for that cannot apply (NTK-aware at d = 2)
            if name == ROPE_TYPES[cfg.rope_type]:
                raise
            not_applicable[name] = str(err)
            continue
        maps[name] = {
            "inv_freq": ext.inv_freq.tolist(),
            "attention_factor": ext.attention_factor,
            "kappa": kappa,
            "L": L,
        }
    own, own_kappa, own_L = config_extension(cfg, N)
    maps["config"] = {
        "map": own.name,
        "inv_freq": own.inv_freq.tolist(),
        "attention_factor": own.attention_factor,
        "kappa": own_kappa,
        "L": own_L,
    }
    factors_read = None
    if cfg.rope_type == "longrope":  # both lists: transformers' module starts on short_factor, switches past L
        options = cfg.map_options("longrope") | {"factor": cfg.factor}
        short = _extension(
            cores["longrope"] if "longrope" in cores else map_core("longrope"), "longrope", theta, 1.0, L, options
        )
        maps["config_short"] = {
            "map": "longrope",
            "inv_freq": short.inv_freq.tolist(),
            "attention_factor": short.attention_factor,
            "kappa": 1.0,
            "L": L,
        }
        factors_read = {
            "config": "long_factor" if N > L else "short_factor",
            "config_short": "short_factor",
            "switch_at": L,
        }
    planes = []
    for row in wavelength_census(L, d, b):  # Theorem 5 (i)
        j = row.plane
        planes.append(
            {
                "plane": j,
                "theta": float(theta[j]),
                "wavelength": row.wavelength,
                "turns": row.turns,
                "full_turn": row.full_turn,
                "theta_sq": float(theta[j] ** 2),
                "factors": {name: m["inv_freq"][j] / theta[j] for name, m in maps.items()},
            }
        )
    corrected, published = sum_theta_sq(d, b), chen_constant(d, b)  # Theorem 5 (iv)
    bound = {
        "sum_theta_sq": corrected,
        "chen_constant": published,
        "ratio": corrected / published,
        "after_map": {name: float(np.sum(np.square(m["inv_freq"]))) for name, m in maps.items()},
    }
    ramps = {}
    for truncate in (True, False):
        if "yarn_hf" in not_applicable or not every_map:  # one plane: no ramp to compare
            break
        c = compare_yarn_ramps_core(theta, kappa, L, truncate)
        ramps["truncated" if truncate else "untruncated"] = {k: c[k] for k in ("max_gap", "plane", "factor_gap")} | {
            "planes_differing": c["planes_differing"]
        }
    return json_safe(
        {
            "config": cfg.summary(),
            "target_length": N,
            "kappa": kappa,
            "context": context_census(cfg, N, maps, scan_base) | ({"base_not_scanned": skipped} if skipped else {}),
            "logit_multiplier": logit_multiplier(cfg, maps["config"]["attention_factor"], N),
            "planes": planes,
            "maps": maps,
            "not_applicable": not_applicable,
            "longrope_factors": factors_read,
            "interpolation_bound": bound,
            "yarn_ramps": ramps,
            "null": NULL_MEANS,
        }
    )


def _extension(core, name: str, theta: np.ndarray, kappa: float, L: int, options: dict):
    """The map ``name`` on checked arguments: through its core (`core`, from ``map_core``), or, for a map
    registered from outside, :func:`~poskernels.extension.extend_core`."""
    return core(theta, kappa, L, **options) if core is not None else extend_core(name, theta, kappa, L, **options)


#: What ``null`` stands for in the census JSON (JSON has no infinity; ``jq`` and ``JSON.parse`` refuse it).
NULL_MEANS = (
    "infinite or absent: a wavelength of a plane whose frequency underflows to 0 (it never turns), an "
    "extrapolation bound no plane limits, a kernel that stays nonnegative through the target length, a base "
    "not found or not scanned"
)


def json_safe(value):
    """``value`` with every non-finite float replaced by None (see :data:`NULL_MEANS`).

    Parameters
    ----------
    value : object
        A JSON-ready value (dicts, lists and tuples are walked).

    Returns
    -------
    object
        The same, with NaN and infinities as None (lists for tuples).

    Examples
    --------
    >>> json_safe({"a": [1.0, float("inf")], "b": float("nan")})
    {'a': [1.0, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def census_all(
    spec,
    target_length: int | None = None,
    layer_type: str | None = None,
    scan_base: bool = True,
    name: str | None = None,
) -> dict:
    """The census of every RoPE of a config: one census, or ``{"layer_types": {name: census}}``.

    Parameters
    ----------
    spec : str, path or dict
        A bundled config's name, a ``config.json`` path (or its model folder), or the config as a dict.
    target_length : int, optional
        ``N``; each config's default target by default.
    layer_type : str, optional
        One layer type of a per-layer-type config.
    scan_base : bool
        Scan for the smallest nonnegative base.
    name : str, optional
        The config's name in the result (the file's by default).

    Returns
    -------
    dict
        :func:`census`'s result, or one per layer type under ``layer_types``.

    Raises
    ------
    PosKernelsError
        If the config cannot be read or has no RoPE, or ``layer_type`` does not match it.

    Examples
    --------
    >>> sorted(census_all("mistral-7b"))[:3]
    ['config', 'context', 'interpolation_bound']
    """
    if layer_type is not None and not isinstance(layer_type, str):  # a list is unhashable: no lookup, a refusal
        raise PosKernelsError(f"layer_type must be a layer type's name (a str) or None; got {layer_type!r:.80}")
    raw, read_name = raw_config(spec)
    name = read_name if name is None else name  # the lab names an upload by its file name
    if not has_rope(raw):
        raise PosKernelsError(
            f"config {name!r} (model type {raw.get('model_type')!r}) has no RoPE: no rope_theta, rope_parameters "
            "or rotary keys in the file or its class defaults; the census reads rotary models only"
        )
    cfgs = parse_layer_configs(raw, name=name)
    if layer_type is not None and list(cfgs) == [None]:
        raise PosKernelsError(
            f"--layer-type {layer_type!r} was given, but this config has no layer types: one RoPE for all layers"
        )
    if layer_type is not None:
        if layer_type not in cfgs:
            accepted = ", ".join(str(k) for k in cfgs)
            raise PosKernelsError(
                f"unknown layer type {layer_type!r}{did_you_mean(layer_type, [k for k in cfgs if k])}; "
                f"this config's: {accepted}"
            )
        cfgs = {layer_type: cfgs[layer_type]}
    if list(cfgs) == [None]:
        return census(cfgs[None], target_length, scan_base)
    return {"layer_types": {lt: census(c, target_length, scan_base) for lt, c in cfgs.items()}}
