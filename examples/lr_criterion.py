"""The learning-rate sweep's table and criterion (see examples/lr_sweep.toml for the criterion, declared first).

Usage: ``python examples/lr_criterion.py lr.sqlite``
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from poskernels.page.window import ARTICLE_TOURNAMENT
from poskernels.sweep.store import Store


def cells(store_path: str) -> dict:
    """``{lr: {(scheme, n): per-seed accuracies}}`` of the done rows of a store."""
    out: dict = defaultdict(lambda: defaultdict(list))
    with Store(store_path, create=False) as store:
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


def main(argv=None) -> None:
    path = (argv or sys.argv[1:])[0]
    data = cells(path)
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
