"""Every RoPE family the installed transformers knows, read by the census and checked against its own module.

An oracle over the ecosystem rather than over a handful of configs.  For each rotary-embedding class
that transformers builds from a model config (``<Family>RotaryEmbedding(config)``; vision and audio
rotaries built from ``(dim, theta)`` are not read from a config and are left out), this module

1. builds the family's default config, and one config per rope type it accepts (``linear``, ``dynamic``,
   ``yarn``, ``llama3``, ``longrope`` on top of its defaults; a type the config class refuses is skipped);
2. writes it as ``config.json`` (``to_dict()``: every key written, as ``save_pretrained`` writes a full config;
   also the default without ``rope_theta``, and the whole multimodal file when the rotary reads its
   ``text_config``: :data:`VARIANTS`);
3. runs the census on the file (:func:`~poskernels.rope_config.load_layer_configs` and
   :func:`~poskernels.census_cli.census`, per layer type when the config has several);
4. compares the census's inverse frequencies and attention factor with the buffers of the family's own
   rotary module (and, for the rope types that follow the sequence length, after a forward pass at three
   times ``max_position_embeddings``).

Each case ends ``agrees``, ``refused`` (the census raised :class:`~poskernels.errors.PosKernelsError`:
one line, nothing printed as if read) or ``wrong`` (read, and read differently): the test requires no
``wrong``.  Run ``python -m poskernels.hf_families`` for the summary (``--markdown`` for the README's form,
``--readme README.md`` to rewrite the README's generated block with it).
Needs ``torch`` and ``transformers`` (the ``test`` extra); imports them only when called.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import logging
import math
import re
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .census_cli import census
from .errors import PosKernelsError
from .rope_config import load_layer_configs

__all__ = [
    "VARIANTS",
    "Case",
    "TYPE_OPTIONS",
    "enumerate_families",
    "main",
    "render",
    "summarize",
    "write_readme_block",
]

EPS32 = float(np.finfo(np.float32).eps)

#: The options each rope type is tried with, on top of the family's default config.
TYPE_OPTIONS: dict[str, dict] = {
    "linear": {"factor": 4.0},
    "dynamic": {"factor": 2.0},
    "yarn": {"factor": 8.0},
    "llama3": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "longrope": {},  # short_factor / long_factor lists are added per config, one entry per plane
}


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
        d.update(rope_type=rope_type, **TYPE_OPTIONS[rope_type])
        if rope_type in ("yarn", "llama3", "longrope"):
            d["original_max_position_embeddings"] = raw["max_position_embeddings"] // 4
        if rope_type == "longrope":
            planes = _head_planes(cfg, d)
            d["short_factor"] = [1.0 + 0.5 * j / max(planes, 1) for j in range(planes)]
            d["long_factor"] = [1.0 + 40.0 * j / max(planes, 1) for j in range(planes)]
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
    if mine.shape != theirs.shape:
        return False, f"{mine.size} planes read, {theirs.size} in the module"
    tol = 8 * (1 + math.log(base)) * EPS32  # float32 exponents, as in tests/test_ecosystem.py
    same_factor = math.isclose(ours["attention_factor"], att, rel_tol=1e-6)
    note = ""
    for a, b in ((mine, theirs), (np.sort(mine), np.sort(theirs))):  # Ernie 4.5 VL pre-permutes its buffer
        err = float(np.max(np.maximum(np.abs(a - b) - atol, 0) / np.maximum(np.abs(b), 1e-300)))
        if err <= tol:
            return same_factor, f"{err:.1e}{note}" + ("" if same_factor else f"; attention factor {att} there")
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
            if ok and lt is None and cfg.rope_type in ("dynamic", "longrope") and _forward_at(module, cfg, torch):
                N = 3 * cfg.max_position_embeddings  # the maps that follow the length, read past it
                ok, detail = _compare(census(cfg, N)["maps"]["config"], *_module_freqs(module)[None], cfg.base)
            cases.append(Case(name, model_type, rope_type, lt, "agrees" if ok else "wrong", detail))
        return cases
    except PosKernelsError as err:
        return [Case(name, model_type, rope_type, None, "refused", str(err))]
    except Exception as err:  # noqa: BLE001 - anything but the library's one-line refusal is a failure
        return [Case(name, model_type, rope_type, None, "wrong", f"{type(err).__name__}: {err}")]


def enumerate_families(rope_types=("default", *TYPE_OPTIONS), progress: bool = False) -> list[Case]:
    """Read every config-built rotary class of the installed transformers with the census (see module doc).

    Returns one :class:`Case` per (rotary class, rope type, layer type); classes whose own module fails
    to build on its default config are left out.
    """
    import torch
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, model_type_to_module_name

    transformers.logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    seen: set[str] = set()
    cases: list[Case] = []
    types = list(CONFIG_MAPPING.keys())
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
                    hf_cfg = subs[0] if rope_type == "default" else _with_type(subs[0], rope_type)
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
VARIANTS = ("default without rope_theta", "default as a whole multimodal file", "linear in v4 spelling")


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
    return cases


def _bar(items, progress: bool):
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="model types", unit="type", leave=False)


def summarize(cases: list[Case]) -> dict:
    """Counts per class (a class agrees when every case of it agrees), and one reason per refused class."""
    by_class: dict[str, list[Case]] = {}
    for c in cases:
        by_class.setdefault(c.rotary, []).append(c)
    defaults = {k: [c for c in v if c.rope_type == "default"] for k, v in by_class.items()}
    agree = sorted(k for k, v in defaults.items() if v and all(c.status == "agrees" for c in v))
    refused = {k: v[0].detail for k, v in defaults.items() if v and v[0].status == "refused"}
    wrong = sorted({c.rotary + f" ({c.rope_type})" for c in cases if c.status == "wrong"})
    import transformers

    return {
        "transformers": transformers.__version__,
        "classes": len(by_class),
        "agree": agree,
        "refused": refused,
        "wrong": wrong,
        "cases": Counter(c.status for c in cases),
        "types": Counter(c.rope_type for c in cases if c.status == "agrees"),
    }


def _reason(message: str) -> str:
    """A refusal's message without its values, so that refusals for one cause group together."""
    text = message.split("; got")[0]
    text = re.sub(r" = [^ ;:]+", "", text)  # 'hidden_size' = 4096 -> 'hidden_size'
    text = re.sub(r"config keys? ", "", text)
    return text.split("; ")[0]


def render(summary: dict, markdown: bool = False) -> str:
    """The summary as lines: counts, then each refused class with its reason (grouped by reason)."""
    reasons: dict[str, list[str]] = {}
    for cls, why in summary["refused"].items():
        reasons.setdefault(_reason(why), []).append(cls.replace("RotaryEmbedding", ""))
    n, a, r = summary["classes"], len(summary["agree"]), len(summary["refused"])
    cases = summary["cases"]
    types = ", ".join(f"{k} {v}" for k, v in sorted(summary["types"].items()))
    bullet = "- " if markdown else "  "
    lines = [
        f"transformers {summary['transformers']}: {n} rotary-embedding classes built from a model config; "
        f"with their default configs the census agrees with {a}, refuses {r}, reads {len(summary['wrong'])} wrong.",
        f"Over every rope type each class accepts ({types} "
        f"agreeing cases): {cases.get('agrees', 0)} agree, {cases.get('refused', 0)} refused, "
        f"{cases.get('wrong', 0)} wrong.",
    ]
    if reasons:
        lines.append("Refused (default config), by reason:")
        for why, classes in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"{bullet}{why}: {', '.join(sorted(classes))}")
    for w in summary["wrong"]:
        lines.append(f"{bullet}WRONG: {w}")
    return "\n".join(lines)


def attribute_map_table() -> dict:
    """What ``data/hf_attribute_map.json`` holds, from the installed transformers' config classes."""
    import transformers
    from transformers import CONFIG_MAPPING

    keys = ("head_dim", "hidden_size", "num_attention_heads", "max_position_embeddings", "layer_types")
    table, thetas = {}, {}
    for model_type in sorted(CONFIG_MAPPING.keys()):
        try:
            cls = CONFIG_MAPPING[model_type]
            names = cls.attribute_map
            # a class's own rope_theta default (a field) wins over the mixin's default_theta, as in
            # convert_rope_params_to_dict: getattr(self, "rope_theta", self.default_theta)
            theta = getattr(cls, "rope_theta", None)
            if not isinstance(theta, int | float) or isinstance(theta, bool):
                theta = getattr(cls, "default_theta", None)
        except Exception:  # noqa: BLE001 - a config class this installation cannot import
            continue
        own = {k: names[k] for k in keys if k in names and names[k] != k}
        if own:
            table[model_type] = own
        if isinstance(theta, int | float) and not isinstance(theta, bool):
            thetas[model_type] = float(theta)
    source = (
        f"transformers {transformers.__version__}: each config class's attribute_map, restricted to the keys "
        "the census reads, its default_theta, and the model types whose config class drops a v4 rope_scaling "
        "(python -m poskernels.hf_families --attribute-map PATH)"
    )
    ignoring = sorted(mt for mt in CONFIG_MAPPING.keys() if _drops_rope_scaling(CONFIG_MAPPING, mt))
    return {"_source": source, "attribute_map": table, "default_theta": thetas, "ignores_rope_scaling": ignoring}


def _drops_rope_scaling(mapping, model_type: str) -> bool:
    """True when the config class, given a v4 file (``rope_scaling`` linear, factor 2), keeps plain RoPE."""
    try:
        cls = mapping[model_type]
        raw = cls().to_dict()
        rope = raw.pop("rope_parameters", None)
        if not isinstance(rope, dict) or any(isinstance(v, dict) for v in rope.values()) or "rope_theta" not in rope:
            return False
        raw.update(rope_theta=rope["rope_theta"], rope_scaling={"rope_type": "linear", "factor": 2.0})
        read = cls.from_dict(raw).rope_parameters
    except Exception:  # noqa: BLE001 - a class this installation cannot build, or one that refuses linear
        return False
    return isinstance(read, dict) and read.get("rope_type") != "linear"


README_BLOCK = re.compile(r"(<!-- hf-families:start -->\n).*?(<!-- hf-families:end -->)", re.S)


def write_readme_block(path, text: str) -> None:
    """Replace the README's block between ``<!-- hf-families:start -->`` and ``<!-- hf-families:end -->``."""
    from .atomic import write_text_atomic

    readme = Path(path).read_text()
    if not README_BLOCK.search(readme):
        raise PosKernelsError(f"{str(path)!r} has no <!-- hf-families:start --> ... <!-- hf-families:end --> block")
    write_text_atomic(path, README_BLOCK.sub(lambda m: m.group(1) + text.strip() + "\n" + m.group(2), readme))


def main(argv=None) -> int:
    """``python -m poskernels.hf_families [--markdown] [--json PATH] [--attribute-map PATH] [--readme README]``."""
    p = argparse.ArgumentParser(prog="python -m poskernels.hf_families", description=__doc__.splitlines()[0])
    p.add_argument("--markdown", action="store_true", help="print the summary as the README's Markdown")
    p.add_argument("--json", type=Path, help="also write every case as JSON")
    p.add_argument("--attribute-map", type=Path, metavar="PATH", help="write the attribute-map table and stop")
    p.add_argument("--readme", type=Path, metavar="README", help="also rewrite the README's generated block")
    args = p.parse_args(argv)
    if args.attribute_map is not None:
        from .atomic import write_json_atomic

        write_json_atomic(args.attribute_map, attribute_map_table())
        return 0
    cases = enumerate_families(progress=True)
    summary = summarize(cases)
    if args.readme is not None:  # files first, then the printout
        write_readme_block(args.readme, render(summary, markdown=True))
    if args.json is not None:
        from .atomic import write_json_atomic

        write_json_atomic(args.json, [c.__dict__ for c in cases])
    print(render(summary, markdown=args.markdown))
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
