"""Wall time of the whole single-head laboratory: cold, with trained heads only, and warm.

Usage: ``python benchmarks/bench_tournament.py [--workers 2] [--keep DIR]``

* cold: an empty cache; trains the tournament's heads (5 schemes and T5 and Shaw x the ten seeds of the block:
  70 heads; the article's five schemes, 50 heads, with ``--article-only``), reads each at 32-256 with the RoPE
  re-reads and runs the diagnostics;
* heads cached: the result file removed, so every head is loaded and read again;
* warm: everything cached (what a second ``poskernels reproduce`` does for these sections).

Beside the wall time it reports the CPU time the phase used (its interpreter and every worker): on a
shared machine the wall time depends on the load, while CPU time divided by the workers is what the
phase takes on idle cores.

Each phase runs in a fresh interpreter (``python -c``), so no in-process memo helps it.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNIPPET = (
    "from pathlib import Path; from poskernels.experiments.laboratory import run_laboratory; "
    "from poskernels.seeds import first_seed, seed_block; "
    "run_laboratory(Path({cache!r}), workers={workers}, extra={extra}, seeds=seed_block(first=first_seed()))"
)


def phase(cache: Path, workers: int, extra: bool) -> tuple[float, float]:
    """Wall time and CPU time (the phase's process and its workers) of one phase."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", SNIPPET.format(cache=str(cache), workers=workers, extra=extra)], check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="cache folder to use and keep (default: a temp one)")
    parser.add_argument("--article-only", action="store_true", help="the article's five schemes only (no T5, Shaw)")
    args = parser.parse_args(argv)
    cache = args.keep or Path(tempfile.mkdtemp(prefix="poskernels-bench-"))
    try:
        extra = not args.article_only
        cold = phase(cache, args.workers, extra)
        shutil.rmtree(cache / "results")
        heads_only = phase(cache, args.workers, extra)
        warm = phase(cache, args.workers, extra)
    finally:
        if args.keep is None:
            shutil.rmtree(cache, ignore_errors=True)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"laboratory on {args.workers} worker(s), {cpus} CPUs visible, load average {load:.1f} at the end")
    print("CPU time / workers is the wall time the phase would take on idle cores")
    print(f"{'phase':40s} {'wall':>8s} {'CPU':>8s} {'CPU/workers':>12s}")
    heads = 50 if args.article_only else 70
    rows = [
        (f"cold (train {heads} heads, read, diagnose)", cold),
        ("heads cached (read, diagnose)", heads_only),
        ("warm (verified result file; + imports)", warm),
    ]
    for name, (wall, cpu) in rows:
        print(f"{name:40s} {wall:7.2f}s {cpu:7.2f}s {cpu / args.workers:11.2f}s")


if __name__ == "__main__":
    main()
