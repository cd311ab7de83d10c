"""The text table and the figure of ``poskernels probe MODEL --past-window``, drawn from its result (the JSON): the
loss by position bin per reading, the means inside and past the training window, and the census's verdict on each
map beside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...atomic import save_figure
from .past_window import READINGS, TITLES

__all__ = ["draw", "render", "verdict"]


def _span(planes: list[int]) -> str:
    if not planes:
        return "none"
    return f"{planes[0]}..{planes[-1]} ({len(planes)})" if planes == list(range(planes[0], planes[-1] + 1)) else (
        ",".join(map(str, planes)))  # fmt: skip


def verdict(row: dict) -> str:
    """The census's verdict on one reading, in one line: the planes reading angles training never produced
    (Theorem 5 (i)), the planes that turned in training moved by more than 1%, and where the kernel
    ``sum_j cos(r theta_j)`` first turns negative (Men et al. 2024).

    Parameters
    ----------
    row : dict
        One reading of a past-window result (``result["readings"][name]``).

    Returns
    -------
    str
        The verdict.

    Examples
    --------
    >>> from poskernels.census.probe.ship_past_window import shipped
    >>> verdict(shipped()["smollm2-135m"]["readings"]["yarn"])
    'unseen planes none; turned planes moved 11..19 (9); kernel first negative at r = 6506'
    """
    v = row["verdicts"]
    neg = v["first_negative_offset"]
    return (f"unseen planes {_span(v['unseen_planes'])}; turned planes moved {_span(v['planes_changed'])}; kernel "
            f"first negative at r = {neg if neg is not None else 'never (within the length)'}")  # fmt: skip


def render(result: dict) -> str:
    """The past-window result as text (what ``poskernels probe MODEL --past-window`` prints).

    Parameters
    ----------
    result : dict
        A past-window result (:func:`poskernels.census.probe.ship_past_window.shipped` holds one).

    Returns
    -------
    str
        The table of losses by position bin and reading, then each reading's verdict and block.

    Examples
    --------
    >>> from poskernels.census.probe.ship_past_window import shipped
    >>> render(shipped()["smollm2-135m"]).splitlines()[0]  # doctest: +ELLIPSIS
    'smollm2-135m (LlamaForCausalLM): loss (nats/token) of each next token by position, 16384 tokens of ...'
    """
    p, L, T = result["provenance"], result["window"], result["length"]
    read = [n for n in READINGS if "bins" in result["readings"][n]]
    lines = [f"{result['model']} ({result['class']}): loss (nats/token) of each next token by position, {T} tokens "
             f"of {p['text']}; training window {L} tokens, maps at factor {result['factor']:g}, no fine-tuning",
             f"  file {p['file']} SHA-256 {p['sha256']}; text SHA-256 {p['text_sha256']}", ""]  # fmt: skip
    w = result["bin"]
    header = f"{'positions':>13s}" + "".join(f"{TITLES[n]:>13s}" for n in read)
    lines.append(header)
    n_bins = len(result["readings"][read[0]]["bins"]) if read else 0
    for b in range(n_bins):
        lo, hi = b * w, min((b + 1) * w, T - 1) - 1
        mark = "*" if lo >= L else " "
        lines.append(f"{f'{lo}-{hi}':>12s}{mark}" + "".join(f"{result['readings'][n]['bins'][b]:13.3f}" for n in read))
    for label, key in ((f"inside (<{L})", "mean_inside"), (f"past (>={L})", "mean_past"), ("all", "mean")):
        lines.append(f"{label:>13s}" + "".join(f"{result['readings'][n][key]:13.3f}" for n in read))
    secs = [result["readings"][n].get("seconds") for n in read]
    lines.append(f"{'seconds':>13s}" + "".join(f"{s:13.1f}" if s is not None else f"{'-':>13s}" for s in secs))
    lines += [
        "",
        "* past the training window",
        "",
        f"the census's verdict on each reading at {round(result['factor'] * L)} tokens, and the block read:",
    ]
    for n in READINGS:
        row = result["readings"][n]
        if "not_read" in row:
            lines.append(f"  {TITLES[n]}: not read: {row['not_read']}")
            continue
        block = row["rope_parameters"]
        lines.append(f"  {TITLES[n]}: {verdict(row)}")
        lines.append(
            "    "
            + (
                "the model's own config"
                if block is None
                else f"rope_parameters {block}, max_position_embeddings {row['max_position_embeddings']}"
            )
        )
    return "\n".join(lines)


def draw(result: dict, folder: Path) -> list[Path]:
    """The loss against position, one curve per reading, the window marked: ``folder/NAME-past-window.png``.

    Parameters
    ----------
    result : dict
        A past-window result.
    folder : path
        Where the figure goes (made if missing); written through :mod:`poskernels.atomic`.

    Returns
    -------
    list of Path
        The one figure written.

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.census.probe.ship_past_window import shipped
    >>> [p.name for p in draw(shipped()["smollm2-135m"], tempfile.mkdtemp())]
    ['smollm2-135m-past-window.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Path(folder).mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    w = result["curve_bin"]
    for n in READINGS:
        row = result["readings"][n]
        if "curve" not in row:
            continue
        y = np.asarray(row["curve"])
        x = np.minimum(np.arange(len(y)) * w + w / 2, result["length"] - 1)
        ax.plot(x, y, label=f"{TITLES[n]} (past the window {row['mean_past']:.2f})", lw=1.2)
    ax.axvline(result["window"], color="k", ls="--", lw=1)
    ax.text(result["window"], ax.get_ylim()[1], " training window", va="top", fontsize=8)
    ax.set(
        xlabel="position of the predicting token",
        ylabel=f"loss, nats/token (mean of {w} positions)",
        title=f"{result['model']}: maps read past the window, factor {result['factor']:g}, no fine-tuning",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(folder) / f"{result['name']}-past-window.png"
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return [path]
