"""The probe's text tables: the provenance, the summary, per layer the heads' sinks, previous-token shares and
where the query energy sits by plane, beside the census's predictions (or Theorem 1's defects of a learned table)."""

from __future__ import annotations

import numpy as np

__all__ = ["never_turning_energy", "render"]


def _top(energy: list[float], k: int = 3) -> str:
    return ",".join(str(int(p)) for p in np.argsort(energy)[::-1][:k])


def never_turning_energy(result: dict) -> dict[str, tuple[float, float]]:
    """Per layer type: the share of the query chunks' mean norm in the planes that never complete a turn within the
    training length (the census's), and the share of the planes they are."""
    out = {}
    for kind, c in result["census"].items():
        never = c["never_full_turn"]
        e = np.array([h["q_energy"] for layer in result["layers"] if layer["type"] == kind for h in layer["heads"]])
        if len(e) and never:
            out[kind] = (float(e[:, never].sum() / e.sum()), len(never) / e.shape[1])
    return out


def _rotary_lines(result: dict) -> list[str]:
    lines = ["census of the config (per layer type): critical dimension, first zero of the kernel, planes that never "
             "complete a turn within the training length"]  # fmt: skip
    for kind, c in result["census"].items():
        never = c["never_full_turn"]
        span = f"{never[0]}..{never[-1]}" if never else "none"
        lines.append(f"  {kind}: base {c['base']:g}, L = {c['training_length']}, critical dimension "
                     f"{c['critical_dimension']}, first zero {c['first_zero']}, planes never turning {span}")
    for kind, (share, planes) in never_turning_energy(result).items():
        lines.append(f"  {kind}: the planes that never turn carry {share:.1%} of the queries' chunk norms "
                     f"(they are {planes:.1%} of the planes)")  # fmt: skip
    return lines


def _absolute_lines(a: dict) -> list[str]:
    r = a["random_table_defect"]
    lines = [f"learned table {a['positions']} x {a['width']}: Toeplitz defect of P P^T {a['gram_defect']:.3f} "
             f"(sinusoidal code {a['sinusoidal_defect']:.1e}; random tables {r['mean']:.3f}, 90% in "
             f"[{r['lo']:.3f}, {r['hi']:.3f}]); strongest frequencies (cycles per {a['positions']}): "
             f"{', '.join(map(str, a['top_frequencies'][:5]))}",
             "layer 0, defect of P W_Q W_K^T P^T per head (random W_Q W_K^T of its rank and norm, 90% range):"]
    for h, d in enumerate(a["heads"]):
        lines.append(f"  head {h:2d}: {d['defect']:.3f}   random {d['random_mean']:.3f} "
                     f"[{d['random_lo']:.3f}, {d['random_hi']:.3f}]")  # fmt: skip
    return lines


def render(result: dict) -> str:
    """The probe's result as text (what ``poskernels probe`` prints)."""
    p, s, c = result["provenance"], result["summary"], result["config"]
    loss = "" if result["loss"] is None else f", loss {result['loss']:.3f} nats/token"
    lines = [f"{result['model']} ({result['class']}, {c['layers']} layers x {c['heads']} heads, {c['positions']}): "
             f"{p['tokens']} tokens of {p['text']}{loss}",
             f"  file {p['file']} SHA-256 {p['sha256']}; text SHA-256 {p['text_sha256']}",
             f"  {s['heads']} heads: sinks (mean weight on the first token > {s['sink_threshold']}) "
             f"{s['sink_share']:.1%}, previous-token heads (> {s['previous_threshold']}) "
             f"{s['previous_token_share']:.1%}; "
             f"kernel from {p['sample']} sampled queries, mean standard error {s['mean_kernel_error']:.3g}; "
             f"planes sum to the kernel within {s['max_plane_sum_error']:.1e}", ""]  # fmt: skip
    lines += _rotary_lines(result) if "census" in result else _absolute_lines(result["absolute"])
    offsets = result["offsets"]
    shown = [r for r in (0, 1, 16, 256) if r in offsets]
    rotary = "census" in result
    header = "layer  type               sinks  prev  " + "".join(f"{f'r={r}':>9s}" for r in shown) + "   planes"
    lines += ["", "mean over the layer's heads of the kernel (the mean logit) at offset r; the strongest query planes "
              "of head 0 (RoPE planes)", header]  # fmt: skip
    for layer in result["layers"]:
        hs = layer["heads"]
        k = np.array([h["kernel"] for h in hs])
        cols = "".join(f"{np.nanmean(k[:, offsets.index(r)]):9.3f}" for r in shown)
        top = _top(hs[0]["q_energy"]) if rotary else "-"
        sinks = sum(h["first_token"] > s["sink_threshold"] for h in hs)
        prev = sum(h["previous_token"] > s["previous_threshold"] for h in hs)
        lines.append(f"{layer['layer']:5d}  {layer['type'][:17]:17s}  {sinks:5d}  {prev:4d}  {cols}   {top}")
    return "\n".join(lines)
