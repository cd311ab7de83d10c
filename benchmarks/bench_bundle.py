"""Training stacks one by one against in bundles on one draw: the CPU a bundle saves, with the weights compared.

Usage: ``python benchmarks/bench_bundle.py [--steps 1500] [--repeats 2] [--size 4]``

Every scheme of the tournament's run (the cue task) and every scheme the case study trains on filings
(:func:`poskernels.experiments.filing_heads.filings_config`), seeds 0-9, trains first stack by stack
(:func:`poskernels.model.train.train_stack`, each stack drawing its own batches) and then in bundles of ``--size``
stacks (:func:`poskernels.model.train.train_bundle`, each seed's batches drawn once a bundle), alternating
``--repeats`` times in this process.  Times are CPU seconds (``time.process_time``, one BLAS thread): the machine is
shared, so compare the two columns of one run.  Every trained array of the two ways is compared with
``np.array_equal``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np

from poskernels.experiments.filing_heads import TRAINED_SCHEMES, filings_config
from poskernels.experiments.filings_beyond import beyond_schemes
from poskernels.experiments.tournament import tournament_jobs
from poskernels.model.grouping import BUNDLE_SIZE, bundles
from poskernels.model.train import train_bundle, train_stack
from poskernels.tasks.filings import filings_sampler

SEEDS = list(range(10))


def _streams(steps: int):
    cue = list(dict.fromkeys(replace(c, steps=steps) for c, _ in tournament_jobs(extra=True, seeds=SEEDS)))
    filings = [replace(filings_config(s), steps=steps) for s in TRAINED_SCHEMES + tuple(beyond_schemes())]
    return [("tournament (cue)", cue, None), ("filings", filings, filings_sampler)]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--size", type=int, default=BUNDLE_SIZE)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.steps} steps, seeds 0-9, bundles of {args.size}")
    for name, configs, sampler in _streams(args.steps):
        groups = bundles([(c, SEEDS) for c in configs], size=args.size)
        alone_s, bundled_s, alone, bundled = [], [], [], []
        for _ in range(args.repeats):
            t0 = time.process_time()
            alone = [train_stack(c, SEEDS, sampler=sampler) for c in configs]
            alone_s.append(time.process_time() - t0)
            t0 = time.process_time()
            bundled = [stack for b in groups for stack in train_bundle(b, sampler=sampler)]
            bundled_s.append(time.process_time() - t0)
        same = all(
            np.array_equal(a.params[k], b.params[k]) and np.array_equal(a.losses, b.losses)
            for sa, sb in zip(alone, bundled)
            for a, b in zip(sa, sb)
            for k in a.params
        )
        a, b = min(alone_s), min(bundled_s)
        print(
            f"{name}: {len(configs)} stacks in {len(groups)} bundles: stack by stack {a:.2f} s CPU "
            f"(runs {', '.join(f'{x:.2f}' for x in alone_s)}), bundled {b:.2f} s "
            f"(runs {', '.join(f'{x:.2f}' for x in bundled_s)}): {100 * (a - b) / a:.1f}% less; "
            f"every weight and loss identical: {same}"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
