"""The probe's text tables: the provenance, the summary, per layer the heads' sinks, previous-token shares and
where the query energy sits by plane, beside the census's predictions (or Theorem 1's defects of a learned table)."""

from __future__ import annotations

import numpy as np

from .measure import HORIZON

__all__ = ["never_turning_energy", "rebound_summary", "render"]


def _top(energy: list[float], k: int = 3) -> str:
    return ",".join(str(int(p)) for p in np.argsort(energy)[::-1][:k])


def never_turning_energy(result: dict) -> dict[str, tuple[float, float]]:
    """Per layer type: the share of the query chunks' mean norm in the planes that never complete a turn within the
    training length (the census's), and the share of the planes they are.

    Parameters
    ----------
    result : dict
        A probe's result, as ``poskernels probe`` writes it (:func:`~poskernels.census.probe.ship.shipped` holds some).

    Returns
    -------
    dict of str to (float, float)
        By layer type (``"None"`` where one RoPE serves every layer): the never-turning planes' share of the
        energy, and their share of the planes; a layer type with no such plane is left out.

    Examples
    --------
    >>> from poskernels.census.probe.ship import shipped
    >>> {k: (round(e, 3), p) for k, (e, p) in never_turning_energy(shipped()["gemma-3-270m"]).items()}
    {'sliding_attention': (0.059, 0.0703125), 'full_attention': (0.452, 0.375)}
    """
    out = {}
    for kind, c in result["census"].items():
        never = c["never_full_turn"]
        e = np.array([h["q_energy"] for layer in result["layers"] if layer["type"] == kind for h in layer["heads"]])
        if len(e) and never:
            out[kind] = (float(e[:, never].sum() / e.sum()), len(never) / e.shape[1])
    return out


def rebound_summary(result: dict) -> dict[str, dict]:
    """Per layer type, from each head's ``rebound`` (:func:`~poskernels.theory.empirical.polynomial_rebound` of its
    polynomial, up to :data:`~poskernels.census.probe.measure.HORIZON` training lengths): the share of heads that
    rebound past the training length, the share whose climb past it outscores even offset 0 (``height >= fall``, a key
    past
    the window above the nearest one), the median first offset that rebounds, the median peak past the window, and
    the median height on the scale of the head's fall across the window.

    Parameters
    ----------
    result : dict
        A probe's result, as ``poskernels probe`` writes it (:func:`~poskernels.census.probe.ship.shipped` holds some).

    Returns
    -------
    dict of str to dict
        By layer type: ``heads``, ``share``, ``overtake_share``, ``median_first``, ``median_peak``,
        ``median_relative_height`` (None where no head rebounds) and ``horizon``.

    Examples
    --------
    >>> from poskernels.census.probe.ship import shipped
    >>> s = rebound_summary(shipped()["smollm2-135m"])["None"]
    >>> s["heads"], s["share"], s["median_first"], s["horizon"]
    (270, 1.0, 8192.0, 32768)
    """
    out = {}
    for kind, c in result.get("census", {}).items():
        rb = [h["rebound"] for layer in result["layers"] if layer["type"] == kind for h in layer["heads"]
              if "rebound" in h]  # fmt: skip
        if not rb:
            continue
        up = [r for r in rb if r["rebounds"]]
        rel = [r["height"] / r["fall"] for r in up if r["fall"] > 0]
        out[kind] = {"heads": len(rb), "share": len(up) / len(rb),
                     "overtake_share": float(np.mean([r["height"] >= r["fall"] for r in rb])),
                     "median_first": float(np.median([r["first"] for r in up])) if up else None,
                     "median_peak": float(np.median([r["peak"] for r in up])) if up else None,
                     "median_relative_height": float(np.median(rel)) if rel else None,
                     "horizon": HORIZON * c["training_length"]}  # fmt: skip
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
    rebound = rebound_summary(result)
    if rebound:
        lines.append("each head's polynomial (its mean query against its mean key, s(r) = Re sum_p h_p "
                     "e^{-i r theta_p}): the heads that rebound past the training length L (max_{L <= r <= 4L} s(r) "
                     "> s(L - 1)), and those whose climb outscores s(0)")  # fmt: skip
    for kind, rb in rebound.items():
        first, peak, rel = (("-" if rb[k] is None else f"{rb[k]:{f}}") for k, f in
                            (("median_first", ".0f"), ("median_peak", ".0f"), ("median_relative_height", ".3g")))
        lines.append(f"  {kind}: {rb['share']:.1%} of {rb['heads']} heads rebound within r <= {rb['horizon']}, "
                     f"{rb['overtake_share']:.1%} above s(0); median first offset {first}, median peak {peak}, "
                     f"median height / fall across the window {rel}")  # fmt: skip
    window = result["config"].get("sliding_window")
    if window and any("sliding" in kind for kind in result["census"]):
        lines.append(f"  (sliding-window layers mask every key past offset {window - 1}: their kernel past it is "
                     "never read)")  # fmt: skip
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
    """The probe's result as text (what ``poskernels probe`` prints).

    Parameters
    ----------
    result : dict
        A probe's result, as ``poskernels probe`` writes it (:func:`~poskernels.census.probe.ship.shipped` holds some).

    Returns
    -------
    str
        Provenance, summary, the census's lines (or Theorem 1's defects of a learned table), and one row per layer.

    Examples
    --------
    >>> from poskernels.census.probe.ship import shipped
    >>> render(shipped()["smollm2-135m"]).splitlines()[0]  # doctest: +ELLIPSIS
    'smollm2-135m (LlamaForCausalLM, 30 layers x 9 heads, RoPE): 2048 tokens of ... loss 1.930 nats/token'
    """
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
