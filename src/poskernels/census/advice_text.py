"""The advice as text (``poskernels advise``): each advised map best first, its block and why it ranks there."""

from __future__ import annotations

import json

__all__ = ["render"]


def _render_maps(data: dict) -> list[str]:
    lines = []
    for rope_type, row in data["maps"].items():
        v = row["verdicts"]
        first = v["first_negative_offset"]
        shipped = {"kept": " (the shipped map, kept)", "rescaled": " (the shipped map, rescaled)"}.get(row["how"], "")
        label = ("  (recommended)" if rope_type == data["recommended"] else "") + shipped
        lines += [
            f"{rope_type}{label}: paste into config.json",
            json.dumps(
                {"max_position_embeddings": row["max_position_embeddings"], "rope_parameters": row["rope_parameters"]}
            ),
            f"  planes reading angles training never produced: {len(v['unseen_planes'])}; trained planes moved: "
            f"{len(v['planes_changed'])}; kernel first negative at {first if first is not None else 'none up to N - 1'}"
            f"; logit multiplier {v['logit_multiplier']:.4g}",
            f"  rank {row['rank']}, {row['why']}",
            "",
        ]
    for rope_type, why in data["refused_by_transformers"].items():
        lines.append(f"{rope_type}: not advised, transformers' config class refuses it: {why}")
    for rope_type, why in data.get("not_advised", {}).items():
        lines.append(f"{rope_type}: not advised: {why}")
    lines += [data["criterion"], f"recommended: {data['reason']}"]
    return lines


def render(data: dict) -> str:
    """The advice as text (what ``poskernels advise`` prints).

    Parameters
    ----------
    data : dict
        :func:`~poskernels.census.advice.advise`'s result.

    Returns
    -------
    str
        The header, then each advised map best first with its block to paste and why it ranks there.

    Examples
    --------
    >>> from poskernels.census.advice import advise
    >>> render(advise("llama-2-7b", 16384)).splitlines()[0]
    'advise: llama-2-7b, training length L = 4096, target N = 16384'
    """
    if "layer_types" in data:
        lines = [f"advise: {data['config']}, one RoPE per layer type, target N = {data['target_length']}"]
        for lt, a in data["layer_types"].items():
            lines += ["", f"== layer type {lt}: training length L = {a['training_length']} =="]
            if not a["needs_extension"]:
                lines.append(f"needs no extension: {a['why']}")
                continue
            if a.get("why"):
                lines.append(a["why"])
            lines += ["", *_render_maps(a)]
        return "\n".join(lines)
    lines = [
        f"advise: {data['config']}, training length L = {data['training_length']}, target N = {data['target_length']}",
        *data.get("layer_notes", []),
        "",
    ]
    return "\n".join(lines + _render_maps(data))
