"""``poskernels census CONFIG``: Theorem 5 plane by plane for a real model, and every extension map beside it.

For a model's RoPE (:mod:`poskernels.rope_config`) at a target length ``N`` (``kappa = N / L``):

- per plane ``j``: the wavelength ``lambda_j = 2 pi / theta_j``, the turns ``(L - 1) / lambda_j`` over the
  training offsets and whether a whole turn completes (Theorem 5 (i)), the plane's term ``theta_j**2`` of the
  interpolation constant (Theorem 5 (iv)), and the factor ``inv_freq_j / theta_j`` of every map of
  :data:`~poskernels.extension.MAPS` at ``kappa`` and of the map the config itself asks for (``config``);
- the interpolation bound's constant ``sum_j theta_j**2`` (corrected) beside Chen et al.'s published
  ``d / (4 ln b)``, and the constant after each map, ``sum_j inv_freq_j**2``;
- where the reference YaRN ramp departs from the article's (:func:`~poskernels.extension_ecosystem.compare_yarn_ramps`).

``--json PATH`` writes ``{"config", "target_length", "kappa", "planes", "maps", "interpolation_bound",
"yarn_ramps"}``; ``maps[NAME]`` is ``{"inv_freq", "attention_factor", "kappa", "L"}``.  ``--plot PNG``
draws the factors per plane.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .atomic import savefig_atomic, write_json_atomic
from .errors import PosKernelsError, check_positive_int
from .extension import MAPS, extend
from .extension_ecosystem import compare_yarn_ramps
from .rope_config import RopeConfig, bundled_configs, config_extension, load_config
from .theory.census import chen_constant, sum_theta_sq, wavelength_census

__all__ = ["add_arguments", "census", "plot_census", "render_census", "run"]


def census(cfg: RopeConfig, target_length: int | None = None) -> dict:
    """The census of ``cfg`` at ``target_length`` (default: :meth:`RopeConfig.default_target_length`), JSON-ready.

    Examples
    --------
    >>> from poskernels.rope_config import load_config
    >>> c = census(load_config("llama-2-7b"))
    >>> c["target_length"], c["kappa"], sum(p["full_turn"] for p in c["planes"])
    (16384, 4.0, 46)
    >>> round(c["interpolation_bound"]["ratio"], 2)  # the article's 1.15 at d = 128, b = 10**4
    1.15
    """
    L = cfg.training_length
    N = cfg.default_target_length() if target_length is None else check_positive_int("the target length", target_length)
    if N < L:
        raise PosKernelsError(f"the target length must be >= the training length L = {L}; got {N!r}")
    kappa = N / L
    theta = cfg.theta  # (d/2,)
    d, b = cfg.rotary_dim, cfg.base
    maps = {}
    for name in MAPS:
        ext = extend(name, theta, kappa, L, **cfg.map_options(name))
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
        c = compare_yarn_ramps(theta, kappa, L, truncate=truncate)
        ramps["truncated" if truncate else "untruncated"] = {k: c[k] for k in ("max_gap", "plane", "factor_gap")} | {
            "planes_differing": c["planes_differing"]
        }
    return {
        "config": cfg.summary(),
        "target_length": N,
        "kappa": kappa,
        "planes": planes,
        "maps": maps,
        "interpolation_bound": bound,
        "yarn_ramps": ramps,
    }


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def _g(x: float) -> str:
    return f"{x:.4g}"


def render_census(data: dict) -> str:
    """The census as text: a header, one row per plane, and the summary lines."""
    cfg, maps = data["config"], data["maps"]
    names = [n for n in maps if n != "none"]
    head = [
        f"RoPE census: {cfg['name']}" + (f" ({cfg['model_type']})" if cfg["model_type"] else ""),
        f"rotary width d = {cfg['rotary_dim']} (head_dim {cfg['head_dim']}, partial_rotary_factor "
        f"{cfg['partial_rotary_factor']:g}), base b = {cfg['rope_theta']:g}, "
        f"training length L = {cfg['training_length']}, "
        f"rope type {cfg['rope_type']!r}",
        f"target length N = {data['target_length']}, kappa = N / L = {data['kappa']:.4g}; "
        f"config's own map: {maps['config']['map']} at kappa = {maps['config']['kappa']:.4g}",
        "turns = (L - 1) / lambda_j over the training offsets; turn = a whole turn completes (Theorem 5 (i)); "
        "factor = inv_freq / theta (1 = unchanged, 1/kappa = interpolated)",
        "",
    ]
    rows = [
        [str(p["plane"]), _g(p["wavelength"]), _g(p["turns"]), "yes" if p["full_turn"] else "no", _g(p["theta_sq"])]
        + [_g(p["factors"][n]) for n in names]
        for p in data["planes"]
    ]
    table = _table(["j", "lambda_j", "turns", "turn", "theta_j^2"] + names, rows)
    bound = data["interpolation_bound"]
    tail = [
        "",
        "attention factor (on cos and sin; logits scale by its square): "
        + ", ".join(f"{n} {maps[n]['attention_factor']:.4g}" for n in names),
        f"interpolation bound, Theorem 5 (iv): |a - l| <= (1/2)(D - D1)(D2 - D) sum_j |h_j| theta_j^2; "
        f"constant sum_j theta_j^2 = {bound['sum_theta_sq']:.4f} (corrected) vs d/(4 ln b) = "
        f"{bound['chen_constant']:.4f} (Chen et al. 2023, published): {bound['ratio']:.3f} times too small",
        "constant after each map, sum_j inv_freq_j^2: " + ", ".join(f"{n} {bound['after_map'][n]:.4g}" for n in names),
    ]
    for key, r in data["yarn_ramps"].items():
        tail.append(
            f"YaRN ramps ({key}): reference (linear in plane index) vs article (linear in turns): largest gap in "
            f"gamma {r['max_gap']:.3f} at plane {r['plane']} (factor gap {r['factor_gap']:.3f}), "
            f"{r['planes_differing']} planes differ"
        )
    return "\n".join(head + [table] + tail)


def plot_census(data: dict, path) -> Path:
    """Write a PNG of every map's factor per plane (log scale), with the full-turn boundary marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    planes = [p["plane"] for p in data["planes"]]
    fig, ax = plt.subplots(figsize=(9, 5), dpi=120)
    dashes = ["-", "--", "-.", ":"]  # maps that coincide (PI and LongRoPE without lists, say) stay visible
    for k, name in enumerate(n for n in data["maps"] if n != "none"):
        style = {"lw": 3.0, "color": "black", "alpha": 0.45} if name == "config" else {"lw": 1.5, "ls": dashes[k % 4]}
        label = f"config ({data['maps']['config']['map']})" if name == "config" else name
        ax.plot(planes, [p["factors"][name] for p in data["planes"]], label=label, **style)
    turned = [p["plane"] for p in data["planes"] if p["full_turn"]]
    if turned:
        ax.axvline(max(turned) + 0.5, color="grey", ls="--", lw=1, label="last plane to turn in L")
    ax.set_yscale("log")
    ax.set_xlabel("plane j")
    ax.set_ylabel("factor inv_freq / theta")
    cfg = data["config"]
    ax.set_title(f"{cfg['name']}: factors per plane at N = {data['target_length']} (kappa = {data['kappa']:.3g})")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    savefig_atomic(fig, path)  # the format from the suffix, as fig.savefig(path) chose it
    plt.close(fig)
    return path


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``poskernels census``."""
    p.add_argument(
        "config", metavar="CONFIG", help=f"a config.json path or a bundled name ({', '.join(bundled_configs())})"
    )
    p.add_argument(
        "--target-length",
        type=int,
        default=None,
        metavar="N",
        help="length to extend to (default: the config's extended length, or 4 L for plain RoPE)",
    )
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the census as JSON")
    p.add_argument("--plot", type=Path, default=None, metavar="PNG", help="also draw the factors per plane")


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels census``: every check happens before anything is printed or written."""
    data = census(load_config(args.config), args.target_length)
    text = render_census(data)
    if args.json is not None:
        write_json_atomic(args.json, data)
    if args.plot is not None:
        plot_census(data, args.plot)
    print(text)
    for label, path in (("json", args.json), ("plot", args.plot)):
        if path is not None:
            print(f"wrote {label}: {path}", file=sys.stderr)
    return 0
