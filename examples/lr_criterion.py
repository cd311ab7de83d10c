"""The learning-rate sweep's table and criterion (see examples/lr_sweep.toml for the criterion, declared first).

Usage: ``python examples/lr_criterion.py lr.sqlite|examples/lr_sweep_results.csv [--markdown] [--plot PNG]``

``--markdown`` prints the summary docs/article/window.md shows (between its ``lr-sweep`` markers); ``--plot`` draws the
criterion and RoPE's accuracy past the window against the learning rate.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict

import numpy as np

from poskernels.page.window import ARTICLE_TOURNAMENT
from poskernels.sweep.store import Store


def cells(path: str) -> dict:
    """``{lr: {(scheme, n): per-seed accuracies}}`` of the done rows of a sweep store, or of the CSV kept beside the
    grid (``examples/lr_sweep_results.csv``: the store's ``lr, scheme, seed, acc_<n>`` columns)."""
    out: dict = defaultdict(lambda: defaultdict(list))
    if str(path).endswith(".csv"):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                for key, a in row.items():
                    if key.startswith("acc_") and a:
                        out[float(row["lr"])][row["scheme"], key[4:]].append(float(a))
        return out
    with Store(path, create=False) as store:
        for row in store.rows():
            if row["status"] != "done":
                continue
            cfg, acc = row["config"], row["metrics"]["accuracy"]
            for n, a in acc.items():
                if a is not None:
                    out[cfg["lr"]][cfg["scheme"], n].append(a)
    return out


def criterion(per_cell: dict, test_size: int = 2000) -> tuple[float, dict]:
    """Mean over the article's cells of ``|ours - article| / SE`` (SE as declared in the grid file), and each cell's."""
    z = {}
    for scheme, row in ARTICLE_TOURNAMENT.items():
        for n, article in row.items():
            if article is None or (scheme, n) not in per_cell:
                continue
            v = np.asarray(per_cell[scheme, n])
            se = np.sqrt(v.var(ddof=1) / v.size + max(article * (1 - article), 1 / test_size) / test_size)
            z[scheme, n] = (v.mean(), se, abs(v.mean() - article) / se)
    return float(np.mean([c[2] for c in z.values()])), z


def markdown(data: dict) -> str:
    """The docs' table: each learning rate's criterion and RoPE's cells past the window (mean ± SE, article)."""
    article = ARTICLE_TOURNAMENT["rope"]
    head = "| lr | criterion (17 cells) | " + " | ".join(f"RoPE at {n} (article {article[n]:.3f})" for n in LONG) + " |"
    lines = [head, "|" + "---|" * (2 + len(LONG))]
    best = min(data, key=lambda lr: criterion(data[lr])[0])
    for lr in sorted(data):
        score, z = criterion(data[lr])
        cells_ = " | ".join(f"{z['rope', n][0]:.3f} ± {z['rope', n][1]:.3f}" for n in LONG)
        mark = "**" if lr == best else ""
        lines.append(f"| {mark}{lr:g}{mark} | {mark}{score:.2f}{mark} | {cells_} |")
    return "\n".join(lines)


def plot(data: dict, out: str) -> None:
    """Criterion and RoPE past the window against the learning rate (log axis), written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from poskernels.atomic import savefig_atomic

    lrs = sorted(data)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    a.plot(lrs, [criterion(data[lr])[0] for lr in lrs], "o-", color="k")
    a.set(
        xscale="log", xlabel="learning rate", ylabel="mean |ours - article| / SE", title="criterion (lower is better)"
    )
    for n, color in zip(LONG, ("tab:blue", "tab:orange", "tab:red")):
        m = [criterion(data[lr])[1]["rope", n][0] for lr in lrs]
        se = [criterion(data[lr])[1]["rope", n][1] for lr in lrs]
        b.errorbar(lrs, m, yerr=se, fmt="o-", color=color, capsize=3, label=f"ours at {n}")
        b.axhline(ARTICLE_TOURNAMENT["rope"][n], color=color, ls="--", lw=1)
    b.set(xscale="log", xlabel="learning rate", ylabel="accuracy", title="RoPE past the window (dashed: article)")
    b.legend(fontsize=8)
    for ax in (a, b):  # one tick per swept rate, written plainly
        ax.set_xticks(lrs, [f"{lr:g}" for lr in lrs], minor=False)
        ax.minorticks_off()
    fig.tight_layout()
    savefig_atomic(fig, out, dpi=110)
    plt.close(fig)


LONG = ("64", "128", "256")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="The learning-rate sweep's table and criterion.")
    parser.add_argument("store", help="the sweep's SQLite store, or its results exported as CSV")
    parser.add_argument("--markdown", action="store_true", help="print the documentation's summary table only")
    parser.add_argument("--plot", metavar="PNG", help="draw the criterion and RoPE's accuracy against lr")
    args = parser.parse_args(argv)
    data = cells(args.store)
    if args.plot:
        plot(data, args.plot)
    if args.markdown:
        print(markdown(data))
        return
    lengths = ["32", "64", "128", "256"]
    for lr in sorted(data):
        score, z = criterion(data[lr])
        print(f"\nlr {lr}: criterion {score:.2f} (mean |ours - article| / SE over {len(z)} cells)")
        for scheme, row in ARTICLE_TOURNAMENT.items():
            parts = []
            for n in lengths:
                if (scheme, n) in z:
                    m, se, _ = z[scheme, n]
                    parts.append(f"{m:.3f}±{se:.3f} ({row[n]:.3f})")
                else:
                    parts.append(f"{'—':>19s}")
            print(f"  {scheme:11s} " + "  ".join(parts))


if __name__ == "__main__":
    main()
