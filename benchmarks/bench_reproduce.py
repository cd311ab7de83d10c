"""Time `poskernels reproduce`: its deterministic part, and the whole of it warm.

Usage: ``python benchmarks/bench_reproduce.py [--repeats 3] [--full]``

Each run is a fresh interpreter (``python -m poskernels.cli reproduce``), so imports count, as they
do for a user.  The deterministic part (``--no-train``) has a budget of 15 s on 2 cores; with
``--full`` the whole reproduce is timed too, once to warm the cache and then warm (budget 2 s for
the trained sections' share).  Figures are wall-clock seconds; the minimum over repeats is the
least disturbed by other load on a shared machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time


def _run(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "poskernels.cli", "reproduce", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also time the whole reproduce, warm")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as out:
        det = [_run(["--out", out, "--no-train"]) for _ in range(args.repeats)]
        print(f"reproduce --no-train (deterministic sections): min {min(det):.2f} s, max {max(det):.2f} s")
        if args.full:
            _run(["--out", out])  # warm the cache (trains on a cold one)
            warm = [_run(["--out", out]) for _ in range(args.repeats)]
            print(f"reproduce, warm cache (everything):          min {min(warm):.2f} s, max {max(warm):.2f} s")


if __name__ == "__main__":
    main()
