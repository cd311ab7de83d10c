"""Every config-built rotary class of the installed transformers, read by the census: one :class:`Case` each.

For each rotary-embedding class that transformers builds from a model config (``<Family>RotaryEmbedding(config)``),
:func:`enumerate_families` builds the family's default config and one per rope type it accepts
(:data:`TYPE_OPTIONS`, from the map records), writes each as ``config.json`` (and the file forms of
:data:`VARIANTS`), runs the census on the file and compares the inverse frequencies and attention factor with the
buffers of the family's own rotary module. How the cases are counted and printed is
:mod:`poskernels.census.hf_families.summary`'s.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import logging
import math
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import PosKernelsError
from ...extension.maps import DEFAULT_TYPE, TRIAL_OPTIONS, spec_of
from ..compute import census
from ..config import load_layer_configs

__all__ = ["TYPE_OPTIONS", "VARIANTS", "Case", "enumerate_families"]

EPS32 = float(np.finfo(np.float32).eps)

#: The options each rope type is tried with, on top of the family's default config (each map record's
#: :attr:`~poskernels.extension.map_spec.Option.trial`; per-plane lists are added per config, one entry per plane).
TYPE_OPTIONS: dict[str, dict] = TRIAL_OPTIONS


@dataclass(frozen=True)
class Case:
    """One rotary class read with one rope type (and one layer type, when it has several).

    ``status`` is ``agrees``, ``refused`` or ``wrong``; ``detail`` is the refusal's message or the
    largest relative error.
    """

    rotary: str
    model_type: str
    rope_type: str
    layer_type: str | None
    status: str
    detail: str


def _rotary_classes(module, nn):
    for name, obj in vars(module).items():
        if not (name.endswith("RotaryEmbedding") and inspect.isclass(obj) and issubclass(obj, nn.Module)):
            continue
        if obj.__module__ != module.__name__:
            continue
        params = list(inspect.signature(obj.__init__).parameters)
        if len(params) > 1 and params[1] == "config":
            yield obj


def _annotation_name(cls) -> str | None:
    ann = inspect.signature(cls.__init__).parameters["config"].annotation
    if ann is inspect.Parameter.empty:
        return None
    return ann if isinstance(ann, str) else getattr(ann, "__name__", None)


def _sub_configs(cfg, depth: int = 2):
    yield cfg
    if depth == 0:
        return
    for value in vars(cfg).values():
        if hasattr(value, "to_dict") and hasattr(value, "model_type"):
            yield from _sub_configs(value, depth - 1)


def _head_planes(cfg, rope: dict) -> int:
    head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return int(head * rope.get("partial_rotary_factor", 1.0)) // 2


def _with_type(cfg, rope_type: str):
    """A config of the same class with ``rope_type`` in every RoPE dict, or None when the class refuses it."""
    try:
        return _build_with_type(cfg, rope_type)
    except Exception:  # noqa: BLE001 - the class refuses the type (or has no single head width): not a case
        return None


def _build_with_type(cfg, rope_type: str):
    raw = cfg.to_dict()
    rope = raw.get("rope_parameters") or {}
    if "max_position_embeddings" not in raw:
        return None
    nested = [k for k, v in rope.items() if isinstance(v, dict)]
    for d in [rope[k] for k in nested] or [rope]:
        d.pop("type", None)
        spec = spec_of(rope_type)
        d.update(rope_type=rope_type, **TYPE_OPTIONS[rope_type])
        if spec.needs_length:
            d["original_max_position_embeddings"] = raw["max_position_embeddings"] // 4
        for o in spec.options:
            if o.kind == "factors" and o.trial is not None:  # one factor per plane, rising with slope o.trial
                planes = _head_planes(cfg, d)
                d[o.name] = [1.0 + o.trial * j / max(planes, 1) for j in range(planes)]
    return type(cfg).from_dict(raw)


def _module_freqs(module) -> dict:
    """``{layer_type: (inv_freq, attention_factor, absolute tolerance)}`` from a rotary module's buffers."""
    if hasattr(module, "inv_freq"):
        return {None: (module.inv_freq, float(module.attention_scaling), 0.0)}
    if hasattr(module, "embed_positions"):  # GPT-J, CodeGen: a table [sin | cos] per position; read row 1's angles
        row = module.embed_positions[1].double()  # (d,)
        half = row.shape[-1] // 2
        return {None: (row[:half].atan2(row[half:]), 1.0, 4 * EPS32)}  # float32 sin and cos: angles to ~eps
    out = {}
    for name in dir(module):
        if name.endswith("_inv_freq") and not name.endswith(("original_inv_freq", "long_inv_freq")):
            lt = name[: -len("_inv_freq")]
            out[lt] = (getattr(module, name), float(getattr(module, f"{lt}_attention_scaling", 1.0)), 0.0)
    return out


def _compare(ours: dict, inv, att: float, atol: float, base: float) -> tuple[bool, str]:
    """Same frequencies (plane by plane, or as a set when the module stores them permuted) and factor."""
    theirs = inv.detach().double().cpu().numpy()  # (d/2,)
    mine = np.asarray(ours["inv_freq"])  # (d/2,)
    zero = ""
    if mine.ndim == 1 and 0 < mine.size < theirs.size and not theirs[mine.size :].any():
        theirs, zero = theirs[: mine.size], f" ({theirs.size - mine.size} more planes at frequency 0: proportional)"
    if mine.shape != theirs.shape:
        return False, f"{mine.size} planes read, {theirs.size} in the module"
    tol = 8 * (1 + math.log(base)) * EPS32  # float32 exponents, as in tests/test_ecosystem.py
    same_factor = math.isclose(ours["attention_factor"], att, rel_tol=1e-6)
    note = ""
    for a, b in ((mine, theirs), (np.sort(mine), np.sort(theirs))):  # Ernie 4.5 VL pre-permutes its buffer
        err = float(np.max(np.maximum(np.abs(a - b) - atol, 0) / np.maximum(np.abs(b), 1e-300)))
        if err <= tol:
            return same_factor, f"{err:.1e}{note}{zero}" + ("" if same_factor else f"; attention factor {att} there")
        note = " (stored permuted)"
    return False, f"{err:.1e}"


def _forward_at(module, cfg, torch) -> bool:
    """Run the module once at position ``3 max_position_embeddings - 1``; False if transformers' own forward fails."""
    N = 3 * cfg.max_position_embeddings
    try:
        module(torch.zeros(1, dtype=torch.float32), torch.tensor([[N - 1]]))
    except Exception:  # noqa: BLE001 - e.g. multimodal rotaries that need (3, batch, n) positions
        return False
    return True


def _check(cls, hf_cfg, model_type: str, rope_type: str, folder: Path, torch, raw: dict | None = None) -> list[Case]:
    """Census of ``raw`` (default: ``hf_cfg.to_dict()``) written as config.json, against ``cls(hf_cfg)``."""
    module = cls(hf_cfg)
    path = folder / "config.json"
    path.write_text(json.dumps(hf_cfg.to_dict() if raw is None else raw, default=str))
    name = cls.__name__
    try:
        cfgs = load_layer_configs(path)
        freqs = _module_freqs(module)
        if set(cfgs) != set(freqs):
            raise AssertionError(f"layer types {sorted(map(str, cfgs))} read, {sorted(map(str, freqs))} in the module")
        cases = []
        for lt, cfg in cfgs.items():
            data = census(cfg, cfg.training_length)
            ok, detail = _compare(data["maps"]["config"], *freqs[lt], cfg.base)
            if ok and lt is None and spec_of(cfg.rope_type).follows and _forward_at(module, cfg, torch):
                N = 3 * cfg.max_position_embeddings  # the maps that follow the length, read past it
                ok, detail = _compare(census(cfg, N)["maps"]["config"], *_module_freqs(module)[None], cfg.base)
            cases.append(Case(name, model_type, rope_type, lt, "agrees" if ok else "wrong", detail))
        return cases
    except PosKernelsError as err:
        return [Case(name, model_type, rope_type, None, "refused", str(err))]
    except Exception as err:  # noqa: BLE001 - anything but the library's one-line refusal is a failure
        return [Case(name, model_type, rope_type, None, "wrong", f"{type(err).__name__}: {err}")]


def enumerate_families(rope_types=None, progress: bool = False, model_types=None) -> list[Case]:
    """Read every config-built rotary class of the installed transformers with the census (see module doc).

    Needs ``torch`` and ``transformers``; importing every family's modeling module takes most of the time.

    Parameters
    ----------
    rope_types : sequence of str, optional
        The rope types tried on each family: the default and every type of :data:`TYPE_OPTIONS` unless given.
    progress : bool
        Show a progress bar over the model types.
    model_types : sequence of str, optional
        Only these model types (keys of transformers' ``CONFIG_MAPPING``, e.g. ``"llama"``); every one unless
        given.

    Returns
    -------
    list of Case
        One per (rotary class, rope type, layer type), and one per file form of :data:`VARIANTS`; classes whose
        own module fails to build on their default config are left out.

    Raises
    ------
    PosKernelsError
        If a name of ``model_types`` is not a model type of the installed transformers.

    Examples
    --------
    >>> cases = enumerate_families(rope_types=("default", "yarn"), model_types=("llama",))
    >>> [(c.rotary, c.rope_type, c.status) for c in cases][:2]
    [('LlamaRotaryEmbedding', 'default', 'agrees'), ('LlamaRotaryEmbedding', 'yarn', 'agrees')]
    >>> {c.status for c in cases}
    {'agrees'}
    >>> enumerate_families(model_types=("lama",))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: model_types must be a sequence of ...; got ('lama',), where 'lama' is not one
    """
    rope_types = (DEFAULT_TYPE, *TYPE_OPTIONS) if rope_types is None else rope_types
    import torch
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, model_type_to_module_name

    transformers.logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    seen: set[str] = set()
    cases: list[Case] = []
    types = list(CONFIG_MAPPING.keys())
    if model_types is not None:
        unknown = [model_types] if isinstance(model_types, str) else [t for t in model_types if t not in types]
        if unknown:
            raise PosKernelsError(
                f"model_types must be a sequence of transformers' model types (e.g. ('llama',)); got {model_types!r}"
                f", where {unknown[0]!r} is not one"
            )
        types = list(model_types)
    bar = _bar(types, progress)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        for model_type in bar:
            mod = model_type_to_module_name(model_type)
            try:
                module = importlib.import_module(f"transformers.models.{mod}.modeling_{mod}")
                default = CONFIG_MAPPING[model_type]()
            except Exception:  # noqa: BLE001 - a family this installation cannot import or build
                continue
            for cls in _rotary_classes(module, torch.nn):
                if cls.__name__ in seen:
                    continue
                wanted = _annotation_name(cls)
                subs = [c for c in _sub_configs(default) if wanted is None or type(c).__name__ == wanted]
                if not subs:
                    continue
                try:
                    cls(subs[0])
                except Exception:  # noqa: BLE001 - transformers' own module fails on its default config
                    continue
                seen.add(cls.__name__)
                for rope_type in rope_types:
                    hf_cfg = subs[0] if rope_type == DEFAULT_TYPE else _with_type(subs[0], rope_type)
                    if hf_cfg is None:
                        continue
                    try:
                        cls(hf_cfg)
                    except Exception:  # noqa: BLE001 - the module refuses the type
                        continue
                    cases.extend(_check(cls, hf_cfg, model_type, rope_type, Path(tmp), torch))
                cases.extend(_file_variants(cls, default, subs[0], model_type, Path(tmp), torch))
    return cases


#: Labels of the cases that write the default config in another form than the sub-config's full dict.
VARIANTS = (
    "default without rope_theta",
    "default as a whole multimodal file",
    "linear in v4 spelling",
    "hub file, defaults from transformers",
    "hub file, defaults from the shipped table",
)


def _file_variants(cls, default, sub, model_type: str, folder: Path, torch) -> list[Case]:
    """The default config as a file without ``rope_theta`` (transformers fills in its class default); a linear
    config in transformers v4's spelling (``rope_scaling``, top-level ``rope_theta``); and, for a rotary built from
    a multimodal config's ``text_config``, the whole multimodal file."""
    cases = []
    raw = sub.to_dict()
    rope = raw.get("rope_parameters")
    if isinstance(rope, dict) and "rope_theta" in rope and not any(isinstance(v, dict) for v in rope.values()):
        rope.pop("rope_theta")
        raw.pop("rope_theta", None)
        try:
            hf_cfg = type(sub).from_dict(json.loads(json.dumps(raw, default=str)))
            cls(hf_cfg)
        except Exception:  # noqa: BLE001 - the class needs its base spelled out: not a case
            hf_cfg = None
        if hf_cfg is not None:
            cases += _check(cls, hf_cfg, model_type, VARIANTS[0], folder, torch, raw)
    legacy = _with_type(sub, "linear")
    rope = legacy.to_dict().get("rope_parameters") if legacy is not None else None
    if isinstance(rope, dict) and "rope_theta" in rope and not any(isinstance(v, dict) for v in rope.values()):
        raw = legacy.to_dict()  # v4: rope_theta and partial_rotary_factor at the top, the rest under rope_scaling
        scaling = dict(raw.pop("rope_parameters"))
        raw["rope_theta"] = scaling.pop("rope_theta")
        if "partial_rotary_factor" in scaling:
            raw["partial_rotary_factor"] = scaling.pop("partial_rotary_factor")
        raw["rope_scaling"] = scaling
        try:  # transformers reads the v4 file itself
            hf_cfg = type(sub).from_dict(json.loads(json.dumps(raw, default=str)))
            cls(hf_cfg)
        except Exception:  # noqa: BLE001 - the family refuses the type or the spelling: not a case
            hf_cfg = None
        if hf_cfg is not None:
            cases += _check(cls, hf_cfg, model_type, VARIANTS[2], folder, torch, raw)
    if sub is not default and sub is default.get_text_config():
        cases += _check(cls, sub, model_type, VARIANTS[1], folder, torch, default.to_dict())
    if sub is default.get_text_config():  # the rotary reads the language model's config, as the hub file gives it
        cases += _hub_files(cls, default, sub, model_type, folder, torch)
    return cases


def _hub_files(cls, default, sub, model_type: str, folder: Path, torch) -> list[Case]:
    """The default config as a hub file holds it: every key equal to the class default removed (for a
    multimodal family, the wrapper's ``model_type`` alone); read with the defaults from transformers and from
    the shipped table."""
    from ..config.defaults import use_transformers

    raw = {"model_type": default.model_type}
    cases = []
    for flag, label in ((True, VARIANTS[3]), (False, VARIANTS[4])):
        use_transformers(flag)
        try:
            cases += _check(cls, sub, model_type, label, folder, torch, raw)
        finally:
            use_transformers(True)
    return cases


def _bar(items, progress: bool):
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="model types", unit="type", leave=False)
