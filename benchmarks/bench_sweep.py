"""Sweep throughput: grid points per second on the local pool against a serial loop, and the overhead per
point through Dask.

    .venv/bin/python benchmarks/bench_sweep.py [--points 16] [--steps 200] [--workers 1 2] [--json out.json]

1. Serial: :func:`poskernels.sweep.point.run_job` over the grid's jobs in this process (no store, no pool).
2. Local pool: ``run_sweep`` with ``local_backend(W)`` into a fresh store, for each ``W`` of ``--workers``:
   points/s, speed-up over the serial loop, and efficiency (speed-up / W).  The pool's start is included.
3. Overhead per point: the same driver on points that do almost nothing (1 Adam step on 1 sequence, one
   test sequence), through the local pool and through a Dask ``LocalCluster`` (127.0.0.1, no dashboard,
   ``W`` single-threaded worker processes): wall seconds per point of the driver, executor and store.
   Dask's overhead per point is the difference, and also reported as the full grid's points/s on Dask.

Every point is a different seed (one training per point), so no job shares a head.  Each figure is the
best of ``--repeat`` runs (as :mod:`timeit` reports), the runs of the configurations interleaved, since a
shared machine's other load only ever slows a run down.
"""

from __future__ import annotations

import os

# One BLAS thread in this process too, as in the pool's workers (and Dask's): the serial loop and each
# worker then do the same work per point, and the speed-up measures the pool, not BLAS threading.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from poskernels.sweep.backends import dask_backend, local_backend  # noqa: E402
from poskernels.sweep.grid import parse_grid  # noqa: E402
from poskernels.sweep.point import group_jobs, point_key, run_job  # noqa: E402
from poskernels.sweep.runner import run_sweep  # noqa: E402
from poskernels.sweep.store import Store  # noqa: E402


def grid_text(points: int, steps: int, batch: int, lengths, size: int) -> str:
    schemes = ["nope", "rope", "alibi", "sinusoidal"]
    per_scheme = -(-points // len(schemes))
    return (
        f"[fixed]\nsteps = {steps}\nbatch = {batch}\ntest_lengths = {list(lengths)}\ntest_size = {size}\n"
        f"[grid]\nscheme = {json.dumps(schemes)}\nseed = {list(range(per_scheme))}\n"
    )


def serial(grid) -> float:
    start = time.perf_counter()
    for job in group_jobs([(point_key(p), p) for p in grid.points]):
        run_job({"points": job, "cache_dir": None})
    return time.perf_counter() - start


def swept(grid, backend) -> float:
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.sqlite") as store:
        start = time.perf_counter()
        s = run_sweep(grid, store, backend, stream=io.StringIO())
        seconds = time.perf_counter() - start
        assert s.done == len(grid.points) and s.failed == 0, s
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=24, help="grid points of the timed grid (default 24)")
    ap.add_argument("--steps", type=int, default=500, help="Adam steps per point (default 500)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--test-size", type=int, default=500)
    ap.add_argument("--workers", type=int, nargs="+", default=None, help="pool sizes (default: 1 and every CPU)")
    ap.add_argument("--tiny-points", type=int, default=64, help="points of the overhead grid (default 64)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each configuration; the best is kept")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = ap.parse_args(argv)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = args.workers or sorted({1, cpus})
    grid = parse_grid(grid_text(args.points, args.steps, args.batch, [32, 64, 128, 256], args.test_size))
    tiny = parse_grid(grid_text(args.tiny_points, 1, 1, [2], 1))
    n = len(grid.points)
    out = {"cpus": cpus, "load_average": os.getloadavg(), "points": n, "steps": args.steps, "batch": args.batch}
    print(f"CPUs {cpus}, load average {os.getloadavg()[0]:.1f}; grid of {n} points, {args.steps} steps x {args.batch}")

    serial(parse_grid(grid_text(4, 1, 1, [2], 1)))  # warm imports and caches
    for w in workers:
        swept(tiny, local_backend(w))  # start the forkserver once, as a long sweep would have it warm
    w = max(workers)
    m = len(tiny.points)
    best: dict[str, float] = {}

    def timed(name, fn):
        best[name] = min(best.get(name, float("inf")), fn())

    for _ in range(args.repeat):  # no Dask in this process yet: its scheduler's threads would compete
        timed("serial", lambda: serial(grid))
        for k in workers:
            timed(f"pool{k}", lambda k=k: swept(grid, local_backend(k)))
        timed("tiny_pool", lambda: swept(tiny, local_backend(w)))
    backend = None
    if not args.no_dask:
        from distributed import LocalCluster

        with LocalCluster(
            n_workers=w, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster:  # fmt: skip
            backend = dask_backend(cluster.scheduler_address)
            swept(parse_grid(grid_text(4, 1, 1, [2], 1)), backend)  # workers import the code once
            for _ in range(args.repeat):
                timed("tiny_dask", lambda: swept(tiny, backend))
                timed("dask", lambda: swept(grid, backend))
            backend.close()

    t = best["serial"]
    out["serial"] = {"seconds": t, "points_per_s": n / t}
    print(f"serial loop          {n / t:7.2f} points/s  ({t:.1f} s)")
    out["pool"] = {}
    for k in workers:
        tw = best[f"pool{k}"]
        speedup = t / tw
        out["pool"][str(k)] = {"seconds": tw, "points_per_s": n / tw, "speedup": speedup, "efficiency": speedup / k}
        print(f"local pool, {k:2d} proc  {n / tw:7.2f} points/s  ({tw:.1f} s)  speed-up {speedup:.2f}x, "
              f"efficiency {speedup / k:.0%}")  # fmt: skip
    tp = best["tiny_pool"]
    out["overhead"] = {"points": m, "local_s_per_point": tp / m}
    print(f"overhead, local pool ({w} proc): {1e3 * tp / m:6.1f} ms per point ({m} near-empty points)")
    if backend is not None:
        td, tg = best["tiny_dask"], best["dask"]
        out["overhead"].update(dask_s_per_point=td / m, dask_extra_s_per_point=(td - tp) / m)
        out["dask"] = {"seconds": tg, "points_per_s": n / tg, "speedup": t / tg}
        print(f"overhead, Dask ({w} workers):   {1e3 * td / m:6.1f} ms per point, "
              f"{1e3 * (td - tp) / m:+.1f} ms over the local pool")  # fmt: skip
        print(f"Dask, {w} workers        {n / tg:7.2f} points/s  ({tg:.1f} s)  speed-up {t / tg:.2f}x")
    out["load_average_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
