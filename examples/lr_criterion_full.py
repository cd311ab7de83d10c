"""The learning rate judged on every trained cell of the article, not the tournament alone.

Usage: ``python examples/lr_criterion_full.py 0.01 0.02 [--cache DIR]``

``examples/lr_sweep.toml`` chose the tournament's learning rate on the article's first table (17 cells).  This
script applies the same measure to every trained figure the article prints as a mean over its seeds, for each
learning rate given, by computing the trained sections of ``poskernels reproduce`` with the tournament preset's
``lr`` replaced (the filing heads train with that preset too):

* the tournament (17 cells) and the three re-reads at 64, 128, 256 (9 cells);
* the sinusoidal head's projected and shifted readings (5 cells) and its defect before and after training (2);
* the filings readers on all and on far queries (14 cells);
* the horizon table's means over seeds, per stream: horizon ``W/s``, inside half of it, beyond it (6 cells).

Criterion, declared before these runs: the mean over those 53 cells of ``|ours - article| / SE``, where "ours" is
the mean over the seed block and ``SE = sqrt(s^2 / k + b)``, ``s`` the seeds' standard deviation, ``k`` their
number, and ``b`` the binomial variance ``max(a (1 - a), 1 / N) / N`` of the article's figure ``a`` on ``N`` test
queries for an accuracy (``N = 2,000`` sequences for the tournament's cells, the article's query counts for the
filings, ``b = 0`` for a horizon, a share of a horizon's queries or a defect; a cell whose every seed equals the
article's figure counts 0).  The lowest mean wins.  The rebound's figures are seed 0's alone in
the article, so they are not cells here (the page compares them seed by seed).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from poskernels import page
from poskernels.model import config as model_config
from poskernels.page.clocks import ARTICLE_DEFECT
from poskernels.page.filings import ARTICLE_ACCURACY, ARTICLE_CORPUS, ARTICLE_HORIZON
from poskernels.page.window import (
    ARTICLE_PROJECTED,
    ARTICLE_RESCALED,
    ARTICLE_SHIFTED,
    ARTICLE_TOURNAMENT,
)
from poskernels.seeds import first_seed

SECTIONS = ("tournament", "rescaled", "sinusoidal", "thm2", "filings")
TEST_COUNT = 2000


def _z(per_seed, article: float, count: int | None) -> float:
    v = np.asarray(per_seed, dtype=float)  # (k,)
    b = 0.0 if count is None else max(article * (1 - article), 1 / count) / count
    gap, se = abs(v.mean() - article), np.sqrt(v.var(ddof=1) / v.size + b)
    return 0.0 if gap == 0 else float(gap / se)  # every seed equal to the article's figure: no miss


def cells(numbers: dict) -> dict:
    """``{cell name: z}`` over every trained cell of the article that is a mean over seeds."""
    z = {}
    t = numbers["tournament"]["per_seed"]
    for scheme, row in ARTICLE_TOURNAMENT.items():
        for n, a in row.items():
            if a is not None:
                z[f"tournament {scheme} {n}"] = _z(t[scheme][n], a, TEST_COUNT)
    r = numbers["rescaled"]["per_seed"]
    for reader, row in ARTICLE_RESCALED.items():
        if reader != "rope":  # plain RoPE's cells are the tournament's
            for n, a in row.items():
                z[f"rescaled {reader} {n}"] = _z(r[reader][n], a, TEST_COUNT)
    s = numbers["sinusoidal"]["per_seed"]
    for name, article in (("projected", ARTICLE_PROJECTED), ("shifted", ARTICLE_SHIFTED)):
        for n, a in article.items():
            if a is not None:
                z[f"sinusoidal {name} {n}"] = _z(s[name][n], a, TEST_COUNT)
    defect = numbers["thm2"]["sinusoidal_defect"]
    for when, values in ARTICLE_DEFECT.items():
        z[f"defect {when}"] = _z(defect[when], float(np.mean(values)), None)
    f = numbers["filings"]["per_seed"]
    counts = {"all": ARTICLE_CORPUS["queries"], "far": ARTICLE_CORPUS["far_queries"]}
    for reader, (a_all, a_far) in ARTICLE_ACCURACY.items():
        for part, a in (("all", a_all), ("far", a_far)):
            z[f"filings {reader} {part}"] = _z(f[reader][part], a, counts[part])
    stats = numbers["filings"]["horizon_stats"]
    for stream in sorted({k[0] for k in ARTICLE_HORIZON}):
        rows = [v for k, v in ARTICLE_HORIZON.items() if k[0] == stream]
        for i, name in enumerate(("horizon", "inside_half", "beyond")):
            article = float(np.mean([row[i] for row in rows]))
            z[f"horizon {stream} {name}"] = _z(stats[stream]["per_seed"][name], article, None)
    return z


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lrs", nargs="+", type=float, help="learning rates to compare")
    parser.add_argument("--cache", type=Path, default=Path(".cache") / "poskernels")
    args = parser.parse_args(argv)
    tournament = model_config.PRESETS["tournament"]
    scores = {}
    try:
        for lr in args.lrs:
            model_config.PRESETS["tournament"] = replace(tournament, lr=lr)
            ctx = page.Context(cache_dir=args.cache, log=lambda msg: None, first_seed=first_seed())
            numbers = page.assemble(ctx, keys=SECTIONS)
            z = cells(numbers)
            scores[lr] = float(np.mean(list(z.values())))
            print(f"\nlr {lr}: criterion {scores[lr]:.2f} over {len(z)} cells")
            for name, value in z.items():
                print(f"  {name:32s} {value:6.2f}")
    finally:
        model_config.PRESETS["tournament"] = tournament
    print("\n" + "  ".join(f"lr {lr}: {s:.2f}" for lr, s in scores.items()))


if __name__ == "__main__":
    main()
