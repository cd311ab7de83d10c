"""``poskernels advise CONFIG --target-length N``: the RoPE block to paste into ``config.json`` to reach ``N`` tokens.

For each map transformers implements (``linear``, ``dynamic``, ``yarn``, ``llama3``, and ``longrope`` when the
config carries its two factor lists), the block is written as transformers v5 reads it (``rope_parameters``,
with ``max_position_embeddings``), the config with it is read back by the census
(:func:`~poskernels.census_cli.census` at ``N``), and its verdicts are printed: the planes reading angles
training never produced (Theorem 5 (i)), the kernel's first negative offset up to ``N - 1`` (Men et al. 2024)
and the logit multiplier.  One map is recommended, with its reason: the fewest unseen planes, then the kernel
that stays nonnegative longest (through ``N`` best), then the order yarn, llama3, longrope, linear, dynamic
(the maps that keep the fast planes unchanged first).  A block the installed transformers' config class refuses
(Phi-3 accepts LongRoPE only) is listed as refused, with transformers' reason.  ``--json PATH`` writes every
block and verdict (``-``: standard output).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
from pathlib import Path

from .atomic import check_outputs
from .census_cli import census
from .errors import PosKernelsError, check_positive_int
from .rope_config import load_layer_configs, parse_config, raw_config
from .rope_config.defaults import class_defaults

__all__ = ["ADVISED_TYPES", "add_arguments", "advise", "run"]

#: The rope types advised, in the order of preference on a tie.
ADVISED_TYPES = ("yarn", "llama3", "longrope", "linear", "dynamic")

#: Keys that carry a RoPE in a file (a family whose defaults and file have none has no RoPE).
_ROPE_KEYS = ("rope_theta", "rope_parameters", "rope_scaling", "rotary_emb_base", "rotary_pct", "qk_rope_head_dim")


def _text(raw: dict) -> tuple[dict, dict]:
    """A deep copy of the file and the dict in it that holds the language model's keys."""
    out = copy.deepcopy(raw)
    model_type = out.get("model_type")
    entry = class_defaults(model_type)[0] if isinstance(model_type, str) else None
    part = entry["part"] if entry else ""
    if part and isinstance(out.get(part), dict):
        return out, out[part]
    if not part and isinstance(out.get("text_config"), dict) and "max_position_embeddings" not in out:
        return out, out["text_config"]
    return out, out


def _has_rope(raw: dict) -> bool:
    _, text = _text(raw)
    if any(text.get(k) is not None for k in _ROPE_KEYS):
        return True
    model_type = text.get("model_type", raw.get("model_type"))
    entry = class_defaults(model_type)[0] if isinstance(model_type, str) else None
    if entry is None:
        return True  # a family transformers does not know: read as RoPE, as the census reads it
    return any(entry["defaults"].get(k) is not None for k in _ROPE_KEYS)


def _refused_by_transformers(new: dict) -> str | None:
    """Why the installed transformers' config class refuses ``new`` (Phi-3 takes LongRoPE only), else None.

    Without transformers (or for a family it does not know) nothing is refused here.
    """
    from .rope_config.defaults import use_transformers

    model_type = new.get("model_type")
    if not use_transformers() or not isinstance(model_type, str):
        return None
    import warnings

    from transformers import CONFIG_MAPPING

    if model_type not in CONFIG_MAPPING:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            CONFIG_MAPPING[model_type].from_dict(json.loads(json.dumps(new)))
    except Exception as err:  # noqa: BLE001 - transformers' own refusal, quoted
        return " ".join(str(err).split())[:300]
    return None


def _block(rope_type: str, cfg, N: int) -> tuple[dict, int]:
    """The ``rope_parameters`` block for ``rope_type`` reaching ``N`` from ``cfg``, and ``max_position_embeddings``."""
    L, factor = cfg.training_length, N / cfg.training_length
    block = {"rope_type": rope_type, "rope_theta": cfg.base}
    if cfg.partial_rotary_factor != 1.0 and cfg.read_from.get("width") != "qk_rope_head_dim":
        block["partial_rotary_factor"] = cfg.partial_rotary_factor
    if rope_type == "dynamic":  # transformers' dynamic NTK grows past max_position_embeddings: it stays L
        return block | {"factor": factor}, L
    if rope_type == "linear":  # the census reads L = max_position_embeddings / factor
        return block | {"factor": factor}, N
    block |= {"factor": factor, "original_max_position_embeddings": L}
    if rope_type == "llama3":
        block |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
    if rope_type == "longrope":
        block |= {k: list(cfg.scaling[k]) for k in ("short_factor", "long_factor")}
        del block["factor"]  # LongRoPE's factor is max_position_embeddings / original
    return block, N


def advised_config(raw: dict, block: dict, max_pos: int) -> dict:
    """``raw`` with its RoPE replaced by ``block`` (and ``max_position_embeddings``), ready to save as config.json."""
    out, text = _text(raw)
    for key in ("rope_scaling", "rope_theta", "original_max_position_embeddings", "partial_rotary_factor"):
        text.pop(key, None)
    text["rope_parameters"] = block
    text["max_position_embeddings"] = max_pos
    return out


def _reason(rows: dict, best: str) -> str:
    r = rows[best]["verdicts"]
    zero = (
        "reaches no angle training never produced"
        if not r["unseen_planes"]
        else (f"leaves {len(r['unseen_planes'])} planes with angles training never produced (the fewest)")
    )
    kernel = (
        "and its kernel stays nonnegative through N"
        if r["first_negative_offset"] is None
        else f"and its kernel stays nonnegative longest, to offset {r['first_negative_offset'] - 1}"
    )
    return f"{best} {zero}, {kernel}; ties go to {', '.join(ADVISED_TYPES)} in that order"


def advise(spec, target_length: int) -> dict:
    """Every advised block for ``spec`` at ``target_length``, its census verdicts, and the recommendation.

    Examples
    --------
    >>> a = advise("llama-2-7b", 16384)
    >>> a["maps"]["linear"]["rope_parameters"]
    {'rope_type': 'linear', 'rope_theta': 10000.0, 'factor': 4.0}
    >>> a["recommended"], a["maps"]["yarn"]["verdicts"]["unseen_planes"]
    ('dynamic', [])
    """
    raw, name = raw_config(spec)
    N = check_positive_int("the target length", target_length)
    if not _has_rope(raw):
        raise PosKernelsError(
            f"config {name!r} (model type {raw.get('model_type')!r}) has no RoPE: no rope_theta, rope_parameters "
            "or rotary keys in the file or its class defaults; advise reads rotary models only"
        )
    cfgs = load_layer_configs(raw)
    if list(cfgs) != [None]:
        raise PosKernelsError(
            f"config {name!r} has one RoPE per layer type ({', '.join(map(str, cfgs))}); advise reads a config "
            "with one RoPE"
        )
    cfg = cfgs[None]
    if N <= cfg.training_length:
        raise PosKernelsError(
            f"the target length must be above the training length L = {cfg.training_length}; got {N!r}"
        )
    rows, refused = {}, {}
    for rope_type in ADVISED_TYPES:
        if rope_type == "longrope" and cfg.rope_type != "longrope":
            continue  # its factor lists are searched per model: only a config that carries them is advised
        block, max_pos = _block(rope_type, cfg, N)
        new = advised_config(raw, block, max_pos)
        why = _refused_by_transformers(new)
        if why:
            refused[rope_type] = why
            continue
        data = census(parse_config(new, name=f"{name} + {rope_type}"), N)
        rows[rope_type] = {
            "rope_parameters": block,
            "max_position_embeddings": max_pos,
            "verdicts": {
                "unseen_planes": data["context"]["unseen_planes"]["config"],
                "first_negative_offset": data["context"]["first_negative_offset"]["config"],
                "logit_multiplier": data["logit_multiplier"]["total"],
                "attention_factor": data["maps"]["config"]["attention_factor"],
                "inv_freq": data["maps"]["config"]["inv_freq"],
            },
        }
    order = {t: i for i, t in enumerate(ADVISED_TYPES)}
    best = min(
        rows,
        key=lambda t: (
            len(rows[t]["verdicts"]["unseen_planes"]),
            -(rows[t]["verdicts"]["first_negative_offset"] or math.inf),  # nonnegative longest
            order[t],
        ),
    )
    return {
        "config": name,
        "training_length": cfg.training_length,
        "target_length": N,
        "maps": rows,
        "refused_by_transformers": refused,
        "recommended": best,
        "reason": _reason(rows, best),
    }


def render(data: dict) -> str:
    lines = [
        f"advise: {data['config']}, training length L = {data['training_length']}, target N = {data['target_length']}",
        "",
    ]
    for rope_type, row in data["maps"].items():
        v = row["verdicts"]
        first = v["first_negative_offset"]
        lines += [
            f"{rope_type}{'  (recommended)' if rope_type == data['recommended'] else ''}: paste into config.json",
            json.dumps(
                {"max_position_embeddings": row["max_position_embeddings"], "rope_parameters": row["rope_parameters"]}
            ),
            f"  planes reading angles training never produced: {len(v['unseen_planes'])}; kernel first negative at "
            f"{first if first is not None else 'none up to N - 1'}; logit multiplier {v['logit_multiplier']:.4g}",
            "",
        ]
    for rope_type, why in data["refused_by_transformers"].items():
        lines.append(f"{rope_type}: not advised, transformers' config class refuses it: {why}")
    lines.append(f"recommended: {data['reason']}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``poskernels advise``."""
    p.add_argument("config", metavar="CONFIG", help="a config.json path or a bundled name")
    p.add_argument("--target-length", type=int, required=True, metavar="N", help="the context length to reach")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the advice as JSON ('-': JSON alone)")


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels advise``: every check happens before anything is printed or written."""
    data = advise(args.config, args.target_length)
    config = args.config if Path(args.config).is_file() else None  # a bundled name is not a file
    outs = check_outputs({"--json": args.json}, inputs=[config])
    if "--json" in outs:
        outs["--json"].write(json.dumps(data, indent=1) + "\n")
    if not any(out.is_stdout for out in outs.values()):
        print(render(data))
    for label, out in outs.items():
        if not out.is_stdout and not getattr(args, "quiet", False):
            print(f"wrote {label.lstrip('-')}: {out.given}", file=sys.stderr)
    return 0
