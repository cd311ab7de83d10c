"""Time one training step of the single head in NumPy, per scheme (forward, hand-written backward, Adam).

Usage: ``python benchmarks/bench_step.py [--batch 64] [--n 32] [--repeats 3000]``

A step is what the trainer does once per batch: the forward pass at the query, the cross-entropy,
the hand-written backward pass, and Adam on the flat parameter vector.  Drawing the batch is timed
separately (the trainer draws 8k sequences per call of the sampler; the per-step share is shown).
Each figure is the median and the minimum over single-step wall timings, and the thread's CPU time
per step; on a shared machine the minimum and the CPU time estimate the cost, the median what a run sees.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from poskernels.encodings import SCHEMES
from poskernels.model.config import HeadConfig
from poskernels.model.engine.one_head import cross_entropy, query_backward, query_forward
from poskernels.model.head import init_params
from poskernels.model.optim import adam_init, adam_step, flatten
from poskernels.model.train_loop import DRAW_SEQUENCES
from poskernels.tasks.cue import cue_batch


def _timings(fn, repeats: int) -> np.ndarray:
    out = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        fn()
        out[i] = time.perf_counter() - t0
    return out * 1e6  # microseconds


def bench_scheme(scheme: str, batch: int, n: int, repeats: int) -> dict:
    cfg = HeadConfig(scheme=scheme)
    rng = np.random.default_rng(0)
    flat, views = flatten(init_params(cfg, rng))
    state = adam_init(flat.size)
    tokens, targets = cue_batch(rng, batch, n)

    def step():
        logits, cache = query_forward(views, cfg, tokens, validate=False)
        _, dlogits = cross_entropy(logits, targets)
        grads = query_backward(views, cfg, cache, dlogits)
        adam_step(flat, np.concatenate([grads[k].ravel() for k in views]), state, lr=1e-5)

    for _ in range(50):  # warm-up
        step()
    cpu0 = time.thread_time()
    t = _timings(step, repeats)
    cpu = (time.thread_time() - cpu0) / repeats * 1e6  # CPU time per step: what the step costs on an idle core
    draw = _timings(lambda: cue_batch(rng, DRAW_SEQUENCES, n), max(5, repeats // 100)) / (DRAW_SEQUENCES / batch)
    return {"median": float(np.median(t)), "min": float(t.min()), "cpu": cpu, "draw": float(np.median(draw))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--n", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3000)
    args = parser.parse_args(argv)
    print(f"one training step, batch {args.batch}, length {args.n}, float64 (microseconds)")
    print(f"{'scheme':12s} {'median':>8s} {'min':>8s} {'CPU':>8s} {'draw/step':>10s}")
    for scheme in SCHEMES:
        r = bench_scheme(scheme, args.batch, args.n, args.repeats)
        print(f"{scheme:12s} {r['median']:8.1f} {r['min']:8.1f} {r['cpu']:8.1f} {r['draw']:10.1f}")


if __name__ == "__main__":
    main()
