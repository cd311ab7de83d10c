"""Time `poskernels reproduce`: its deterministic part, the whole of it warm, and the whole of it cold.

Usage: ``python benchmarks/bench_reproduce.py [--repeats 3] [--full] [--cold]``

Each run is a fresh interpreter (``python -m poskernels.cli reproduce``, one BLAS thread as ``make reproduce``
sets), so imports count, as they do for a user.  The deterministic part (``--no-train``) has a budget of 15 s
on 2 cores; with ``--full`` the whole reproduce is timed too, once to warm the cache and then warm (budget 1 s).
``--cold`` times the whole reproduce on an empty cache directory (every head trained, every section computed;
budget 40 s on 2 cores), its CPU time (the command and its pool's processes: less sensitive than the wall to other
load on a shared machine) and its peak resident memory (the largest of the command and its pool's processes, each
alone; budget 400 MB), ``--repeats`` times, each on a fresh cache.  Figures are wall-clock seconds; the minimum
over repeats is the least disturbed by other load on a shared machine; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_BLAS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_ENV = {**os.environ, **{v: os.environ.get(v, "1") for v in _BLAS}}  # as `make reproduce` sets them


def _run(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "poskernels.cli", "reproduce", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_ENV,
    )
    return time.perf_counter() - t0


def _cold(repeats: int) -> None:
    walls = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.append(_run(["--out", str(Path(tmp) / "out"), "--cache", str(Path(tmp) / "cache")]))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime  # the command and its pool
            print(f"  cold run: {walls[-1]:.2f} s wall, {cpu:.1f} s CPU (load average before it {load:.2f}, "
                  f"after {os.getloadavg()[0]:.2f})")  # fmt: skip
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux: the largest process
    print(f"reproduce, cold cache (everything):           min {min(walls):.2f} s, max {max(walls):.2f} s; "
          f"peak RSS {rss:.0f} MB (budget 40 s, 400 MB)")  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also time the whole reproduce, warm")
    parser.add_argument("--cold", action="store_true", help="only time the whole reproduce on an empty cache")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.cold:
        _cold(args.repeats)
        return
    with tempfile.TemporaryDirectory() as out:
        det = [_run(["--out", out, "--no-train"]) for _ in range(args.repeats)]
        print(f"reproduce --no-train (deterministic sections): min {min(det):.2f} s, max {max(det):.2f} s")
        if args.full:
            _run(["--out", out])  # warm the cache (trains on a cold one)
            warm = [_run(["--out", out]) for _ in range(args.repeats)]
            print(f"reproduce, warm cache (everything):          min {min(warm):.2f} s, max {max(warm):.2f} s")
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
