"""Time `poskernels reproduce`: its deterministic part, the whole of it warm, and the whole of it cold.

Usage: ``python benchmarks/bench_reproduce.py [--repeats 3] [--full [--cache DIR]]`` or
``python benchmarks/bench_reproduce.py --cold [--repeats 1] [--scheme-more | --scheme-less NAME]``

Each run is a fresh interpreter (``poskernels.cli.main(["reproduce", ...])``, one BLAS thread as ``make reproduce``
sets), so imports count, as they do for a user.  The deterministic part (``--no-train``) has a budget of 15 s
on 2 cores; with ``--full`` the whole reproduce is timed too, once to warm the cache and then warm (budget 1 s),
wall and CPU seconds of each run (``--cache DIR``: a cache already warm, such as ``.cache/poskernels`` after a
``make reproduce``; default reproduce's own, which the first run fills).
``--cold`` times the whole reproduce on an empty cache directory (every head trained, every section computed;
budget 40 s on 2 cores), its CPU time (the command and its pool's processes: less sensitive than the wall to other
load on a shared machine) and its peak resident memory (the largest of the command and its pool's processes, each
alone; budget 400 MB), ``--repeats`` times, each on a fresh cache.  Figures are wall-clock seconds; the minimum
over repeats is the least disturbed by other load on a shared machine; the load average is printed beside them.

The cost of one registered scheme (budget 3 s of cold CPU): ``--scheme-more NAME`` runs the cold reproduce with one
scheme more, a copy of the registered scheme ``NAME`` under the name ``NAME_copy`` (registered before anything
reads the registry, as a scheme from a user's file is: every section trains and reads it); ``--scheme-less NAME``
with the scheme ``NAME`` taken out of the registry.  Half the CPU between the two runs is one scheme's cost.  Take
the same ``NAME`` for both (``kerple_log``): a scheme a section names cannot be taken out (the tournament's settings
line prints Shaw's clip), nor a scheme copied whose setting another declares with another default (``xpos_rescaled``).
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


#: The command line run with one scheme more (``{0}``: the copied scheme) or less, before the CLI imports anything else.
_MORE = (
    "from poskernels.encodings import SCHEMES, register_scheme\n"
    "base = type(SCHEMES[{0!r}])\n"
    "register_scheme(type(base.__name__ + 'Copy', (base,), {{'name': {0!r} + '_copy'}}))\n"
)
_LESS = "from poskernels.encodings import SCHEMES\nSCHEMES.pop({0!r})\n"
_CLI = "import sys\nfrom poskernels.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def _run(args: list[str], registry: str = "") -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", registry + _CLI, "reproduce", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_ENV,
    )
    return time.perf_counter() - t0


def _cpu_run(args: list[str]) -> tuple[float, float]:
    """One run's wall and CPU seconds (the command and its pool's processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = _run(args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _cold(repeats: int, registry: str = "") -> None:
    walls = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.append(_run(["--out", str(Path(tmp) / "out"), "--cache", str(Path(tmp) / "cache")], registry))
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
    parser.add_argument("--cache", metavar="DIR", help="with --full: the cache of trained heads (default reproduce's)")
    parser.add_argument("--cold", action="store_true", help="only time the whole reproduce on an empty cache")
    one = parser.add_mutually_exclusive_group()
    one.add_argument("--scheme-more", metavar="NAME", help="with --cold: one scheme more, a copy of NAME")
    one.add_argument("--scheme-less", metavar="NAME", help="with --cold: one scheme less, NAME unregistered")
    args = parser.parse_args(argv)
    if (args.scheme_more or args.scheme_less) and not args.cold:
        parser.error("--scheme-more and --scheme-less time the cold reproduce: add --cold")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.cold:
        registry = _MORE.format(args.scheme_more) if args.scheme_more else ""
        registry = _LESS.format(args.scheme_less) if args.scheme_less else registry
        if registry:
            print(f"registry: {'one scheme more, a copy of' if args.scheme_more else 'one scheme less,'} "
                  f"{args.scheme_more or args.scheme_less}")  # fmt: skip
        _cold(args.repeats, registry)
        return
    with tempfile.TemporaryDirectory() as out:
        det = [_run(["--out", out, "--no-train"]) for _ in range(args.repeats)]
        print(f"reproduce --no-train (deterministic sections): min {min(det):.2f} s, max {max(det):.2f} s")
        if args.full:
            cache = ["--cache", args.cache] if args.cache else []
            _run(["--out", out, *cache])  # warm the cache (trains on a cold one) and the figures of OUT
            warm = [_cpu_run(["--out", out, *cache]) for _ in range(args.repeats)]
            walls, cpus = [w for w, _ in warm], [c for _, c in warm]
            print(f"reproduce, warm cache (everything):          min {min(walls):.2f} s, max {max(walls):.2f} s; "
                  f"CPU min {min(cpus):.2f} s, max {max(cpus):.2f} s (budget 1 s)")  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
