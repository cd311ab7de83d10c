"""The lab's "Real models" view: the shipped probe results (``poskernels/data/probe/*.json``, written by
``make probe``) read one head at a time, its kernel over offsets and plane energies beside the census's predictions.

The lab server answers ``GET /probe/models`` (:func:`models`) and ``GET /probe/view?name=NAME&layer=L&head=H``
(:func:`view_of_query`); bad input is one line (status 400).  The view only reads: it never runs a model.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from urllib.parse import parse_qs

from ..errors import PosKernelsError

__all__ = ["models", "view", "view_of_query"]


@lru_cache(maxsize=1)
def _results() -> dict[str, dict]:
    folder = resources.files("poskernels") / "data" / "probe"
    if not folder.is_dir():
        return {}
    return {f.name[:-5]: json.loads(f.read_text()) for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".json")}  # fmt: skip


def _finite(values) -> list:
    return [None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v for v in values]


def models() -> list[dict]:
    """The shipped results: name, class, layers, heads, tokens, positions.

    >>> [m["name"] for m in models()]
    ['minilm-l6', 'smollm2-135m']
    """
    return [{"name": n, "class": r["class"], "layers": r["config"]["layers"], "heads": r["config"]["heads"],
             "tokens": r["provenance"]["tokens"], "positions": r["config"]["positions"]}
            for n, r in _results().items()]  # fmt: skip


def view(name: str, layer: int, head: int) -> dict:
    """One head of a shipped result: its kernel over offsets, plane split and energies, and the census's predictions.

    >>> v = view("smollm2-135m", 0, 0)
    >>> v["census"]["critical_dimension"], len(v["q_energy"]), len(v["kernel"]["offsets"]) == len(v["kernel"]["mean"])
    (40, 32, True)
    """
    results = _results()
    if name not in results:
        raise PosKernelsError(f"no probe result named {name[:80]!r}; accepted: {', '.join(results) or 'none shipped'}")
    r = results[name]
    layers, heads = r["config"]["layers"], r["config"]["heads"]
    if not (0 <= layer < layers and 0 <= head < heads):
        raise PosKernelsError(f"layer {layer}, head {head}: accepted layers 0..{layers - 1} and heads 0..{heads - 1}")
    lay = r["layers"][layer]
    h = lay["heads"][head]
    census = r.get("census", {}).get(lay["type"])
    return {
        "name": name, "layer": layer, "head": head, "type": lay["type"], "positions": r["config"]["positions"],
        "kernel": {"offsets": r["offsets"], "mean": _finite(h["kernel"]), "error": h["kernel_error"]},
        "plane_split": {"offsets": r["plane_offsets"], "planes": [_finite(p) for p in h["plane_split"]]},
        "q_energy": h["q_energy"], "k_energy": h["k_energy"],
        "first_token": h["first_token"], "previous_token": h["previous_token"],
        "census": None if census is None else {k: census[k] for k in ("base", "training_length",
                                                                        "critical_dimension", "first_zero",
                                                                        "never_full_turn")},
        "absolute": r["absolute"]["heads"][head] if "absolute" in r and layer == 0 else None,  # Theorem 1, layer 0
        "provenance": r["provenance"],
    }  # fmt: skip


def view_of_query(query: str) -> dict:
    """:func:`view` of ``name=...&layer=...&head=...`` (layer and head default to 0)."""
    q = parse_qs(query)
    name = q.get("name", [""])[-1]
    try:
        layer, head = int(q.get("layer", ["0"])[-1]), int(q.get("head", ["0"])[-1])
    except ValueError:
        raise PosKernelsError(f"layer and head must be integers; got {query[:80]!r}") from None
    return view(name, layer, head)
