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
Bundled configs of released models live in ``poskernels/data/configs`` (:func:`bundled_configs`).
"""

from __future__ import annotations

import json
import math
import numbers
import reprlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from .encodings import DEFAULT_BASE, omega
from .errors import MAX_D, PosKernelsError, read_text
from .extension import Extension, extend

__all__ = [
    "ROPE_TYPES",
    "RopeConfig",
    "bundled_configs",
    "config_extension",
    "load_config",
    "parse_config",
]

#: rope type in a config -> the registry map that implements it (``su`` is LongRoPE's first name).
ROPE_TYPES: dict[str, str] = {
    "default": "none",
    "linear": "pi",
    "dynamic": "dynamic",
    "yarn": "yarn_hf",
    "llama3": "llama3",
    "longrope": "longrope",
    "su": "longrope",
}

# Options each rope type may carry, as the registry map's keyword arguments.
_OPTIONS = {
    "dynamic": ("factor",),
    "yarn_hf": ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor"),
    "llama3": ("low_freq_factor", "high_freq_factor"),
    "longrope": ("short_factor", "long_factor", "attention_factor"),
}


@dataclass(frozen=True)
class RopeConfig:
    """The RoPE part of a model config.

    Attributes
    ----------
    name : str
        Bundled name or file path.
    head_dim : int
    rotary_dim : int
        ``d``: the width RoPE rotates, ``int(head_dim * partial_rotary_factor)``, even.
    partial_rotary_factor : float
    base : float
        ``b = rope_theta``.
    max_position_embeddings : int
    training_length : int
        ``L``, the length the frequencies were trained at.
    rope_type : str
        Canonical type, a key of :data:`ROPE_TYPES` other than ``su``.
    scaling : dict
        The scaling dict as read (JSON-ready).
    model_type : str or None
    source : str or None
        The bundled file's ``_source`` note.
    """

    name: str
    head_dim: int
    rotary_dim: int
    partial_rotary_factor: float
    base: float
    max_position_embeddings: int
    training_length: int
    rope_type: str
    scaling: dict = field(repr=False)
    model_type: str | None = None
    source: str | None = None

    @property
    def theta(self) -> np.ndarray:
        """Trained frequencies ``b**(-2j/d)``, shape ``(d/2,)``."""
        return omega(self.rotary_dim, self.base)

    @property
    def factor(self) -> float:
        """The config's extension factor (LongRoPE: ``max_position_embeddings / L`` unless given; 1 if none)."""
        if self.rope_type == "longrope" and "factor" not in self.scaling:
            return self.max_position_embeddings / self.training_length
        return float(self.scaling.get("factor", 1.0))

    def default_target_length(self) -> int:
        """The length the config extends to, ``max(max_position_embeddings, factor L)``; ``4 L`` for plain RoPE."""
        if self.rope_type == "default":
            return 4 * self.training_length
        return max(self.max_position_embeddings, round(self.factor * self.training_length))

    def map_options(self, name: str) -> dict:
        """Keyword options the config supplies for the registry map ``name`` (empty unless it is the config's own)."""
        own = ROPE_TYPES[self.rope_type]
        if own == "yarn_hf" and name in ("yarn_hf", "yarn_hf_untruncated"):
            own = name
        if name != own:
            return {}
        keys = _OPTIONS.get("yarn_hf" if name.startswith("yarn_hf") else name, ())
        return {k: self.scaling[k] for k in keys if self.scaling.get(k) is not None}

    def summary(self) -> dict:
        """What was read, JSON-ready."""
        return {
            "name": self.name,
            "model_type": self.model_type,
            "head_dim": self.head_dim,
            "partial_rotary_factor": self.partial_rotary_factor,
            "rotary_dim": self.rotary_dim,
            "rope_theta": self.base,
            "max_position_embeddings": self.max_position_embeddings,
            "training_length": self.training_length,
            "rope_type": self.rope_type,
            "rope_scaling": self.scaling,
            "source": self.source,
        }


def _where(key: str, scope: str) -> str:
    return key if not scope else f"{scope}.{key}"


def _number(raw: dict, key: str, scope: str = "", default=None, required: bool = True) -> float | None:
    """The finite number under ``key``, else raise naming ``scope.key`` and quoting the value."""
    if key not in raw or raw[key] is None:
        if default is not None or not required:
            return default
        raise PosKernelsError(f"config key {_where(key, scope)!r} is missing; a RoPE config needs it")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite(value):
        raise PosKernelsError(f"config key {_where(key, scope)!r} must be a finite number; got {_shown(value)}")
    return float(value)


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past float64 (10**400)
        return False


def _shown(value) -> str:
    return reprlib.repr(value) if not isinstance(value, int) or abs(value) < 10**30 else f"{str(value)[:20]}..."


def _count(raw: dict, key: str, scope: str = "", required: bool = True) -> int | None:
    value = _number(raw, key, scope, required=required)
    if value is None:
        return None
    exact = raw.get(key)  # an int is kept exact, not rounded through float (2**53 + 1 stays odd)
    if value <= 0 or not float(value).is_integer() or value > _MAX_COUNT:
        raise PosKernelsError(
            f"config key {_where(key, scope)!r} must be a positive integer up to {_MAX_COUNT}; got {_shown(exact)}"
        )
    return exact if isinstance(exact, int) and not isinstance(exact, bool) else int(value)


#: Largest count a config may give (head_dim, max_position_embeddings, ...): a signed 64-bit integer, as in the
#: frameworks that read these files.  The rotary width itself is bounded by :data:`poskernels.errors.MAX_D`.
_MAX_COUNT = 2**63 - 1


def _factor_list(raw: dict, key: str, scope: str, planes: int) -> list[float]:
    if key not in raw or raw[key] is None:
        raise PosKernelsError(f"config key {_where(key, scope)!r} is missing; LongRoPE needs one factor per plane")
    values = raw[key]
    ok = isinstance(values, list) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in values
    )
    if not ok or len(values) != planes:
        count = f"{len(values)} values: " if isinstance(values, list) else ""
        raise PosKernelsError(
            f"config key {_where(key, scope)!r} must be a list of {planes} positive numbers (one per plane); "
            f"got {count}{reprlib.repr(values)}"
        )
    return [float(v) for v in values]


def _scaling_dict(raw: dict) -> tuple[dict, str]:
    for key in ("rope_scaling", "rope_parameters"):  # transformers: rope_scaling wins when both are set
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise PosKernelsError(f"config key {key!r} must be a dict or null; got {value!r}")
        if any(isinstance(v, dict) for v in value.values()):
            raise PosKernelsError(f"config key {key!r} holds per-layer-type dicts, which the census does not read")
        if value:
            return value, key
    return {}, "rope_scaling"


def parse_config(raw: dict, name: str = "config", source: str | None = None) -> RopeConfig:
    """Read the RoPE part of a ``config.json`` dict.

    Examples
    --------
    >>> c = parse_config({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096})
    >>> c.rotary_dim, c.base, c.training_length, c.rope_type
    (128, 10000.0, 4096, 'default')
    >>> parse_config({"head_dim": 128, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "linear"}})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_scaling.factor' is missing; a RoPE config needs it
    """
    if not isinstance(raw, dict):
        raise PosKernelsError(f"a config must be a JSON object; got {raw!r}")
    scaling, scope = _scaling_dict(raw)
    # Rotary width d = int(head_dim * partial_rotary_factor)
    head_dim = _count(raw, "head_dim", required=False)
    if head_dim is None:
        hidden = _count(raw, "hidden_size")
        heads = _count(raw, "num_attention_heads")
        if hidden % heads:
            raise PosKernelsError(
                f"config keys 'hidden_size' = {raw['hidden_size']!r} and 'num_attention_heads' = "
                f"{raw['num_attention_heads']!r} do not give a whole head_dim; set 'head_dim'"
            )
        head_dim = hidden // heads
    prf_key = "partial_rotary_factor"
    prf = _number(scaling, prf_key, scope, required=False)
    if prf is None:
        prf = _number(raw, prf_key, default=1.0)
    if not 0 < prf <= 1:
        raise PosKernelsError(f"config key {prf_key!r} must lie in (0, 1]; got {prf!r}")
    rotary_dim = int(head_dim * prf)
    if rotary_dim > MAX_D:
        raise PosKernelsError(
            f"the rotary width int(head_dim * {prf_key}) = {rotary_dim} is past {MAX_D} (one census row per plane; "
            f"the widest released head is 512); got head_dim = {head_dim}"
        )
    if rotary_dim < 2 or rotary_dim % 2:
        width = "'head_dim'" if "head_dim" in raw else "'hidden_size' / 'num_attention_heads'"
        raise PosKernelsError(
            f"config keys {width} = {head_dim} and {prf_key!r} = {prf!r} give the rotary width "
            f"int({head_dim} * {prf!r}) = {rotary_dim}; it must be a positive even integer (planes are pairs)"
        )
    base = _number(scaling, "rope_theta", scope, required=False)
    if base is None:
        base = _number(raw, "rope_theta", default=DEFAULT_BASE)
    if base <= 1:
        raise PosKernelsError(f"config key 'rope_theta' must be a number > 1; got {base!r}")
    max_pos = _count(raw, "max_position_embeddings")
    # Rope type, canonical name
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if not isinstance(rope_type, str) or rope_type not in ROPE_TYPES:
        key = _where("rope_type" if "rope_type" in scaling else "type", scope)
        raise PosKernelsError(
            f"config key {key!r} names an unknown rope type {rope_type!r}; accepted: {', '.join(ROPE_TYPES)}"
        )
    rope_type = "longrope" if rope_type == "su" else rope_type
    L = _count(raw, "original_max_position_embeddings", required=False)
    if L is None:
        L = _count(scaling, "original_max_position_embeddings", scope, required=False) or max_pos
    # Options the type needs, checked now so nothing downstream sees a bad value
    clean = dict(scaling)
    if rope_type in ("linear", "dynamic", "yarn", "llama3") or "factor" in scaling:
        factor = _number(scaling, "factor", scope, required=rope_type != "longrope")
        if factor is not None and factor < 1:
            raise PosKernelsError(f"config key {_where('factor', scope)!r} must be >= 1; got {scaling['factor']!r}")
    for key in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor"):
        if rope_type in ("yarn", "longrope") and key in scaling:
            _number(scaling, key, scope, required=False)
    if rope_type == "yarn" and "truncate" in scaling and not isinstance(scaling["truncate"], bool):
        raise PosKernelsError(
            f"config key {_where('truncate', scope)!r} must be true or false; got {scaling['truncate']!r}"
        )
    if rope_type == "llama3":
        for key in ("low_freq_factor", "high_freq_factor"):
            if _number(scaling, key, scope) <= 0:
                raise PosKernelsError(f"config key {_where(key, scope)!r} must be > 0; got {scaling[key]!r}")
    if rope_type == "longrope":
        for key in ("short_factor", "long_factor"):
            clean[key] = _factor_list(scaling, key, scope, rotary_dim // 2)
    return RopeConfig(
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
    )


def _configs_dir():
    return resources.files("poskernels") / "data" / "configs"


def bundled_configs() -> list[str]:
    """Names of the bundled configs (``poskernels census NAME``).

    >>> "llama-3.1-8b" in bundled_configs()
    True
    """
    return sorted(p.name[: -len(".json")] for p in _configs_dir().iterdir() if p.name.endswith(".json"))


def load_config(spec) -> RopeConfig:
    """Read a bundled config by name, or a ``config.json`` by path.

    Examples
    --------
    >>> c = load_config("llama-3.1-8b")
    >>> c.rope_type, c.training_length, c.factor
    ('llama3', 8192, 8.0)
    """
    spec = str(spec)
    if spec in bundled_configs():
        text, name = (_configs_dir() / f"{spec}.json").read_text(encoding="utf-8"), spec
    else:
        path = Path(spec)
        try:
            found = path.is_file()
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            found = False
        if not found:
            raise PosKernelsError(
                f"no config file at {spec if len(spec) <= 200 else spec[:100] + '...' + spec[-50:]!r} and no bundled "
                "config of that name; "
                f"bundled: {', '.join(bundled_configs())}"
            )
        text, name = read_text(path, "config file"), str(path)  # UTF-8 only: binary, UTF-16, Latin-1 refused
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise PosKernelsError(f"{name!r} is not valid JSON: {err}") from None
    except (ValueError, RecursionError) as err:  # a 5,000-digit integer; nesting deeper than Python's stack
        raise PosKernelsError(f"{name!r} cannot be read as a config: {str(err)[:120]}") from None
    return parse_config(raw, name=name)


def config_extension(cfg: RopeConfig, target_length: int) -> tuple[Extension, float, int]:
    """The extension the config itself asks for, read at ``target_length``.

    Returns ``(extension, kappa, L)``: ``kappa`` is the config's factor for the static maps (linear,
    YaRN, Llama 3), and the ratio of ``target_length`` to the map's reference length for the ones that
    follow the sequence length (dynamic NTK against ``max_position_embeddings``, LongRoPE's switch
    against ``L``).

    Examples
    --------
    >>> e, kappa, L = config_extension(load_config("qwen2.5-7b-yarn"), 131072)
    >>> e.name, kappa, L, round(e.attention_factor, 4)
    ('yarn_hf', 4.0, 32768, 1.1386)
    """
    name = ROPE_TYPES[cfg.rope_type]
    L = cfg.training_length
    if cfg.rope_type in ("default",):
        kappa = 1.0
    elif cfg.rope_type == "dynamic":
        L = cfg.max_position_embeddings
        kappa = max(target_length, L) / L
    elif cfg.rope_type == "longrope":
        kappa = max(target_length, L) / L
    else:
        kappa = cfg.factor
    if name == "yarn_hf" and cfg.scaling.get("truncate") is False:
        name = "yarn_hf_untruncated"
    options = cfg.map_options(name)
    if name == "longrope":
        options["factor"] = cfg.factor
    return extend(name, cfg.theta, kappa, L, **options), kappa, L
