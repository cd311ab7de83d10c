"""One query over a million keys: the streaming reader's time and memory, and ALiBi's certified cut.

Usage: ``python benchmarks/bench_long.py [--n 1000000] [--repeats 20] [--threads 1] [--budget-mb 1024] [--grid]``

On trained tournament heads (seed 0, trained once and cached under ``.cache/poskernels``):

1. time of one query over ``n`` keys: ALiBi read to its certified cut (``eps = 1e-12``; target <= 5 ms) and RoPE
   read in full by the streaming reader (target <= 1 s, and <= 40 ns a key);
2. peak memory (``tracemalloc``) of reading one query at ``n = 10^4`` and at ``n``, beyond the token array, which
   exists before tracing starts (target: within 1.5x);
3. the streaming reader against the one-pass reader that materializes every key at once
   (:func:`poskernels.model.engine.one_head.query_forward`), side by side at lengths up to the largest whose
   predicted peak fits ``--budget-mb``; their logits are checked equal.

Each time is the minimum over repeats (the better estimate on a shared machine) and the median.

``--grid`` times the long-context section's reading instead (:mod:`poskernels.experiments.long_context`: the 70
tournament heads, cached, read at its 30 points, 500 sequences a point): each point's CPU time in this process, their
sum, and the wall time of the 30 points on a pool of 2 processes, with the load average.
"""

from __future__ import annotations

import argparse
import os


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="keys of the one query (default 10^6)")
    parser.add_argument("--repeats", type=int, default=20, help="timings of the cut reader (RoPE: a quarter)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1; 0 leaves them alone)")
    parser.add_argument("--budget-mb", type=float, default=1024.0, help="memory the materializing reader may use")
    parser.add_argument("--grid", action="store_true", help="time the long-context section's 30 points instead")
    return parser.parse_args(argv)


def _grid() -> None:
    import time
    from pathlib import Path

    from poskernels.experiments import long_context as lc
    from poskernels.experiments.tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES
    from poskernels.model.config import preset
    from poskernels.model.train import train_many
    from poskernels.pool import run_jobs
    from poskernels.seeds import first_seed, seed_block

    config = preset("tournament")
    seeds = seed_block(first=first_seed())  # the environment's block, read here at the edge
    jobs = [(config.with_scheme(s), seed) for s in ARTICLE_SCHEMES + EXTRA_SCHEMES for seed in seeds]
    heads = train_many(jobs, Path(".cache") / "poskernels")
    by_scheme: dict = {}
    for h in heads:
        by_scheme.setdefault(h.head.scheme, []).append(h)
    points = [("length", n) for n in lc.LENGTHS] + [("distance", r) for r in lc.OFFSETS]
    print(f"{len(heads)} heads at {len(points)} points, {lc.COUNT} sequences a point; load average {_load()}")
    total = 0.0
    for task, x in points:
        t0 = time.process_time()
        lc.read_point(by_scheme, task, x)
        total += time.process_time() - t0
        if x >= 16384:
            print(f"  {task} {x:>7,}: {time.process_time() - t0:.2f} s CPU")
    print(f"every point in this process: {total:.1f} s CPU")
    points.sort(key=lambda p: -(p[1] if p[0] == "length" else max(32, p[1] + 1)))  # as the section orders them
    t0 = time.perf_counter()
    list(run_jobs(lc._point_job, [(by_scheme, task, x, lc.COUNT) for task, x in points], workers=2))
    print(f"on a pool of 2 processes: {time.perf_counter() - t0:.1f} s wall; load average {_load()}")


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main(argv=None) -> None:
    args = _parse(argv)
    if args.threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)  # before NumPy loads its BLAS
    if args.grid:
        _grid()
        return
    import time
    import tracemalloc
    from pathlib import Path

    import numpy as np

    from poskernels.model.config import preset
    from poskernels.model.engine.cut import certified_cut
    from poskernels.model.engine.one_head import query_logits
    from poskernels.model.engine.stream import stream_logits
    from poskernels.model.train import train_many
    from poskernels.tasks.cue import cue_batch

    cache = Path(".cache") / "poskernels"
    alibi, rope = train_many([(preset("tournament", "alibi"), 0), (preset("tournament", "rope"), 0)], cache)

    def tokens(n):
        return cue_batch(np.random.default_rng(n), 1, n)[0].astype(np.uint8)  # (1, n)

    def timings(fn, repeats):
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return np.array(out)

    def peak(fn):
        tracemalloc.start()
        fn()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    n = args.n
    x = tokens(n)
    cut = certified_cut(alibi.params, alibi.head, [16], 1e-12)
    t_cut = timings(lambda: stream_logits(alibi.params, alibi.head, x, eps=1e-12), args.repeats)
    t_rope = timings(lambda: stream_logits(rope.params, rope.head, x), max(2, args.repeats // 4))
    print(f"one query over n = {n:,} keys; BLAS threads: {args.threads or 'default'}")
    print(f"ALiBi, certified cut (W = {cut.W:.2f}, D = {cut.D}, dropped weight <= {cut.tail_bound:.1e}): "
          f"{t_cut.min() * 1e3:.2f} ms min, {np.median(t_cut) * 1e3:.2f} ms median (target <= 5 ms)")  # fmt: skip
    print(f"RoPE, streaming reader: {t_rope.min():.3f} s min, {np.median(t_rope):.3f} s median (target <= 1 s); "
          f"{t_rope.min() / n * 1e9:.1f} ns a key (target <= 40 ns)")  # fmt: skip

    small = tokens(10_000)
    for head, name in ((rope, "RoPE"), (alibi, "ALiBi, full")):
        p_small = peak(lambda h=head: stream_logits(h.params, h.head, small))
        p_big = peak(lambda h=head: stream_logits(h.params, h.head, x))
        mib = f"{p_small / 2**20:.2f} MiB at 10^4, {p_big / 2**20:.2f} MiB at {n:,}"
        print(f"peak memory beyond the tokens, {name}: {mib} (ratio {p_big / p_small:.2f}; target <= 1.5)")

    print("\nstreaming against materializing every key at once (query_forward), RoPE, one query:")
    cols = ("stream s", 10), ("stream MiB", 11), ("materialize s", 14), ("materialize MiB", 16), ("max |diff|", 11)
    print(f"{'n':>10} " + " ".join(f"{c:>{w}}" for c, w in cols))
    per_key = peak(lambda: query_logits(rope.params, rope.head, tokens(10_000).astype(np.int64))) / 10_000
    for m in (10_000, 100_000, 1_000_000, 10_000_000):
        if per_key * m > args.budget_mb * 2**20:
            print(f"{m:>10,} (materializing would need about {per_key * m / 2**20:,.0f} MiB > --budget-mb)")
            break
        xm = tokens(m)
        xi = xm.astype(np.int64)

        def streamed(xm=xm):
            return stream_logits(rope.params, rope.head, xm)

        def materialized(xi=xi):
            return query_logits(rope.params, rope.head, xi, chunk=1 << 30)

        ts, tm = timings(streamed, 2).min(), timings(materialized, 2).min()
        ps, pm = peak(streamed), peak(materialized)
        diff = np.abs(streamed() - materialized()).max()
        print(f"{m:>10,} {ts:>10.3f} {ps / 2**20:>11.2f} {tm:>14.3f} {pm / 2**20:>16.1f} {diff:>11.1e}")


if __name__ == "__main__":
    main()
