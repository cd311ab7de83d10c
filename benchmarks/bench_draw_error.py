"""The test-draw error two ways, and the fidelity list's dependence on the machine's rounding.

Usage: ``python benchmarks/bench_draw_error.py [--draws 3] [--cache .cache/poskernels] [--skip-redraws]``

1. The page estimates the test-draw error of every trained cell from the reads it made: a bootstrap over the
   tournament's test sequences and over the case study's held-out filings (:mod:`poskernels.experiments.bootstrap`).
   This benchmark re-reads every head on ``--draws`` other test draws (:func:`poskernels.experiments.redraws.
   redraw_sd`, what the page computed before) and prints both per cell, their ratio, and the band that ratio should
   fall in were the bootstrap exact: the SD of ``k`` draws has ``k - 1`` degrees of freedom, so ``redraw / true``
   lies between ``sqrt(chi2_{k-1}(q) / (k - 1))`` at q = 10% and 90%, and ``bootstrap / redraw`` in the inverse band.
   It times both (the re-reads on one process, or the pool with ``--workers``; the bootstrap is inside the
   section's own reads, its resampling timed here on the cells' sizes).
2. The fidelity list (:func:`poskernels.page.fidelity.differing`) from the shipped reference numbers (made on the
   maintainers' machine) against the same list from this machine's cache (the same code, seeds and heads'
   configurations; only the floating-point rounding of 1,500 Adam steps differs): which cells enter or leave it, and
   how far each cell's ``z`` moves.  Both use this machine's test-draw SDs.

The heads come from ``--cache`` (a cold cache trains them: run ``make reproduce`` first).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats

from poskernels.experiments.bootstrap import RESAMPLES, draw_sd_table
from poskernels.experiments.filings import filings_results
from poskernels.experiments.laboratory import run_laboratory
from poskernels.experiments.redraws import redraw_sd
from poskernels.page import fidelity
from poskernels.page.readme import REFERENCE_NUMBERS
from poskernels.page.registry import Context
from poskernels.seeds import seed_block


def _pairs(boot: dict, redraw: dict):
    for section in ("tournament", "rescaled", "filings"):
        for reader, by in redraw[section].items():
            for column, r in by.items():
                b = boot.get(section, {}).get(reader, {}).get(column)
                if r is not None and b is not None and r > 0:
                    yield section, reader, column, b, r


def _compare(boot: dict, cache: Path, seeds, draws: int, workers: int | None) -> None:
    start = time.perf_counter()
    redraw = redraw_sd(cache, seeds=seeds, draws=draws, workers=workers)
    seconds = time.perf_counter() - start
    rows = list(_pairs(boot, redraw))
    ratio = np.array([b / r for *_, b, r in rows])
    lo, hi = (np.sqrt(stats.chi2.ppf(q, draws - 1) / (draws - 1)) for q in (0.1, 0.9))
    print(f"\n1. test-draw SD: bootstrap ({RESAMPLES} resamples) against {draws} redraws, {len(rows)} cells")
    print(f"{'section':<11} {'reader':<12} {'cell':>5} {'bootstrap':>10} {'redraws':>9} {'ratio':>7}")
    for (section, reader, column, b, r), q in zip(rows, ratio):
        print(f"{section:<11} {reader:<12} {column:>5} {b:>10.4f} {r:>9.4f} {q:>7.2f}")
    inside = np.mean((ratio >= 1 / hi) & (ratio <= 1 / lo))
    print(f"median ratio {np.median(ratio):.2f}; 10-90% of the ratios {np.percentile(ratio, 10):.2f}-"
          f"{np.percentile(ratio, 90):.2f}; were the bootstrap exact, 80% would lie in {1 / hi:.2f}-{1 / lo:.2f}"
          f" (chi-square, {draws - 1} df): {inside:.0%} do")  # fmt: skip
    print(f"redraws: {seconds:.1f} s (cached result: 0 s; the page's cold reproduce spent 59 s on it)")
    rng = np.random.default_rng(0)
    cells = 17 * 4 + 4 * 4 + 5  # the tournament's, the re-reads' and the sinusoidal diagnostics' cells
    table = {str(i): {"n": rng.random((10, 2000)) < 0.6} for i in range(cells)}  # ten heads on 2,000 sequences
    start = time.perf_counter()
    draw_sd_table(table)
    print(f"bootstrap: {time.perf_counter() - start:.3f} s for {cells} cells of 10 x 2,000 reads (no head read)")


def _rounding(here: dict) -> None:
    shipped = json.loads(REFERENCE_NUMBERS.read_text())
    shipped = {**shipped, "fidelity": here["fidelity"]}  # the same test-draw SDs: only the trained means differ
    a = {(c["section"], c["reader"], c["column"]): c for c in fidelity.cells(shipped)}
    b = {(c["section"], c["reader"], c["column"]): c for c in fidelity.cells(here)}
    la = {k for k, c in a.items() if c["z"] > fidelity.Z}
    lb = {k for k, c in b.items() if c["z"] > fidelity.Z}
    sa = {k for k, c in a.items() if c["z"] > fidelity.Z or c["starred"]}
    sb = {k for k, c in b.items() if c["z"] > fidelity.Z or c["starred"]}
    dz = np.array([abs(a[k]["z"] - b[k]["z"]) for k in a])
    dm = np.array([abs(a[k]["ours"] - b[k]["ours"]) / b[k]["error"] for k in a])
    print(f"\n2. the fidelity list and the machine's rounding: {len(a)} cells, shipped reference against this machine")
    print(f"beyond {fidelity.Z:g} joined errors: {len(la)} cells shipped, {len(lb)} here; "
          f"entering {sorted(lb - la)}, leaving {sorted(la - lb)}")  # fmt: skip
    print(f"listed (beyond, or starred): {len(sa)} shipped, {len(sb)} here; entering {sorted(sb - sa)}, "
          f"leaving {sorted(sa - sb)}")  # fmt: skip
    print(f"|z shipped - z here|: median {np.median(dz):.2f}, 90% {np.percentile(dz, 90):.2f}, max {dz.max():.2f};"
          f" the means moved by a median {np.median(dm):.2f} and at most {dm.max():.2f} joined errors")  # fmt: skip
    near = sorted(k for k in a if min(a[k]["z"], b[k]["z"]) <= fidelity.Z < max(a[k]["z"], b[k]["z"]))
    print(f"cells on the two sides of {fidelity.Z:g} on the two machines: {near or 'none'}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3, help="other test draws to re-read every head on")
    parser.add_argument("--cache", type=Path, default=Path(".cache") / "poskernels")
    parser.add_argument("--workers", type=int, default=None, help="processes for the redraws (default: the CPUs)")
    parser.add_argument("--skip-redraws", action="store_true", help="only the rounding comparison")
    args = parser.parse_args(argv)
    seeds = seed_block(first=0)  # the shipped reference's block
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    here = {**run_laboratory(args.cache, seeds=seeds), "filings": filings_results(args.cache, seeds=seeds)}
    ctx = Context(cache_dir=args.cache, numbers=dict(here), log=lambda msg: None, first_seed=0)
    here["fidelity"] = fidelity.FIDELITY.compute(ctx)
    if not args.skip_redraws:
        _compare(here["fidelity"], args.cache, seeds, args.draws, args.workers)
    _rounding(here)
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
