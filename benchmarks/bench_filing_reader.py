"""Time the one-pass filing reader against the per-position loop of plain forward passes, per reader.

Usage: ``python benchmarks/bench_filing_reader.py [--n 400] [--repeats 30] [--threads 1]``

Both answer "which company was named last?" at every position of one ``n``-token filing (drawn from the
synthetic corpus's generator, cut to ``n`` tokens).  The loop runs the head's forward pass on
``prefix + [QUERY]`` once per position (``n`` passes); the reader computes every key once and all ``n`` questions
in one ``(n, n + 1)`` score matrix.  Their answers are checked equal before timing.  Each figure is the minimum
over repeats (on a shared machine the minimum is the better estimate of the cost) and the median.

``--threads`` caps BLAS threads (default 1): on a small shared machine OpenBLAS's threads make these small
products several times slower, for both paths.
"""

from __future__ import annotations

import argparse
import os
import sys


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="filing length in tokens (default 400)")
    parser.add_argument("--repeats", type=int, default=30, help="timings of the one-pass reader (the loop: a fifth)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1; 0 leaves them alone)")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = _parse(argv)
    if args.threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)  # before NumPy loads its BLAS
    import time

    import numpy as np

    from poskernels.experiments.filing_maps import FILING_READERS, reader_reading
    from poskernels.experiments.filings_reader import read_filing, read_filing_loop
    from poskernels.model.config import HeadConfig
    from poskernels.model.head import init_params
    from poskernels.tasks.filings import FilingPlan, encode_filing, generate_filing

    plan = FilingPlan(length_mean=args.n + 20, length_sd=0.0, length_min=args.n + 20, length_max=args.n + 40)
    ids = encode_filing(generate_filing(np.random.default_rng(0), "bench", plan=plan)).ids[: args.n]  # (n,)
    if ids.size < args.n:
        sys.exit(f"the generated filing has only {ids.size} tokens")

    def timings(fn, repeats):
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return np.array(out) * 1e3  # ms

    print(f"one filing of {ids.size} tokens, {ids.size} questions; BLAS threads: {args.threads or 'default'}")
    print(f"{'reader':<11} {'one pass ms (min / median)':>27} {'loop ms (min / median)':>24} {'speed-up (min)':>15}")
    ratios = []
    for reader, (scheme, _) in FILING_READERS.items():
        cfg = HeadConfig(scheme=scheme)
        params = init_params(cfg, np.random.default_rng(1))
        reading = reader_reading(reader, cfg, ids.size)
        fast = read_filing(params, cfg, ids, reading)
        slow = read_filing_loop(params, cfg, ids, reading)
        assert np.allclose(fast, slow, atol=1e-10), reader
        one = timings(lambda: read_filing(params, cfg, ids, reading), args.repeats)  # noqa: B023
        loop = timings(lambda: read_filing_loop(params, cfg, ids, reading), max(3, args.repeats // 5))  # noqa: B023
        ratios.append(loop.min() / one.min())
        print(
            f"{reader:<11} {one.min():>12.2f} / {np.median(one):>8.2f}   {loop.min():>10.1f} / {np.median(loop):>8.1f}"
            f"   {ratios[-1]:>12.0f}x"
        )
    print(f"smallest speed-up: {min(ratios):.0f}x (target: at least 20x on a 400-token filing)")


if __name__ == "__main__":
    main()
