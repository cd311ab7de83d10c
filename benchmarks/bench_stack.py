"""Amortized cost of one head's training step when M heads train as one stack, per scheme, drawing included.

Usage: ``python benchmarks/bench_stack.py [--batch 128] [--n 32] [--steps 256] [--models 1 10] [--schemes S ...]``
(and ``--torch``).

Times are CPU seconds of this process (``time.process_time``, one BLAS thread): on a shared,
oversubscribed machine they estimate what a step costs on an idle core, where wall time counts the
waits for the other processes.  Each figure runs the trainer itself
(:func:`poskernels.model.train_loop._fit`: drawing the batches from each seed's stream, the stacked
forward, the hand-written backward, Adam) for ``--steps`` steps on a stack of ``M`` heads, and
divides its time by ``steps * M``: the cost of one head-step.  The
drawing share is timed apart (the same draws, nothing else).  The *floor* is what the step's
multiply-adds would cost at this machine's BLAS rate with every NumPy call free (:func:`floor_us`).
With ``--torch`` the same
stack trains in PyTorch autograd on the same batches (stacked parameters, ``torch.optim.Adam``,
float64, the thread count of ``--threads``), beside the NumPy stack.

The machine is shared: compare the ratios of one run, not figures across runs.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from poskernels.encodings import SCHEMES
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.train_loop import DRAW_SEQUENCES, _draw, _fit, _streams
from poskernels.tasks.registry import get_task


def head_step(scheme: str, M: int, batch: int, n: int, steps: int, repeats: int) -> tuple[float, float]:
    """Microseconds per head-step of the trainer (min over ``repeats``) and the drawing's share of it."""
    config = TrainConfig(head=HeadConfig(scheme=scheme, n_train=n), steps=steps, batch=batch)
    sampler, seeds = get_task("cue"), list(range(M))
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        _fit(config, seeds, sampler, None, 0)
        best = min(best, time.process_time() - t0)
    per_draw = max(1, DRAW_SEQUENCES // batch)
    rngs = [_streams(s)[1] for s in seeds]
    draw = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        for start in range(0, steps, per_draw):
            _draw(config, [config.head], sampler, rngs, min(per_draw, steps - start))
        draw = min(draw, time.process_time() - t0)
    return best / (steps * M) * 1e6, draw / (steps * M) * 1e6


def floor_per_madd() -> float:
    """Seconds per multiply-add of this machine's BLAS on the step's typical shape, ``(4096, 16) @ (16, 16)``."""
    rng = np.random.default_rng(0)
    a, w = rng.random((4096, 16)), rng.random((16, 16))
    best = np.inf
    for _ in range(200):
        t0 = time.process_time()
        for _ in range(10):
            a @ w
        best = min(best, (time.process_time() - t0) / 10)
    return best / (4096 * 16 * 16)


def floor_us(scheme: str, batch: int, n: int, d: int, rate: float, V: int = 17, C: int = 8) -> float:
    """The arithmetic floor of one head-step in microseconds: its multiply-adds at the BLAS rate, calls free.

    Forward: the key and value tables ``2 V d^2``, the query ``d^2``, the content scores ``V d`` (``n V d``
    for RoPE, whose table depends on the offset), the output ``B V d`` and readout ``B d C``, one count per
    token ``B n``; an additive code adds ``2 n d^2 + B n d``.  The backward costs about twice the forward.
    """
    forward = 2 * V * d * d + d * d + V * d + batch * V * d + batch * d * C + batch * n
    if SCHEMES[scheme].rotary:
        forward += n * V * d
    if scheme in ("sinusoidal", "learned"):
        forward += 2 * n * d * d + batch * n * d
    return 3 * forward * rate * 1e6


def torch_step(scheme: str, M: int, batch: int, n: int, steps: int) -> float:
    """Microseconds per head-step of the same stack in PyTorch autograd (batches drawn beforehand, not timed)."""
    import torch

    from poskernels.model.engine.reductions import stack_params
    from poskernels.model.head import init_params
    from poskernels.model.reference import torch_params, torch_stack_logits

    cfg = HeadConfig(scheme=scheme, n_train=n)
    config = TrainConfig(head=cfg, steps=steps, batch=batch)
    streams = [_streams(s) for s in range(M)]
    tp = torch_params(stack_params(init_params(cfg, init) for init, _ in streams))
    tokens, targets = _draw(config, [config.head], get_task("cue"), [data for _, data in streams], steps)
    opt = torch.optim.Adam(tp.values(), lr=config.lr, betas=(config.beta1, config.beta2), eps=config.eps)
    xs = [torch.as_tensor(x) for x in tokens]
    ys = [torch.as_tensor(y).reshape(-1) for y in targets]
    t0 = time.process_time()
    for x, y in zip(xs, ys):
        opt.zero_grad(set_to_none=True)
        logits = torch_stack_logits(tp, cfg, x)  # (M, B, C)
        loss = torch.nn.functional.cross_entropy(logits.reshape(M * batch, -1), y, reduction="none")
        loss.reshape(M, batch).mean(dim=1).sum().backward()  # each head's mean loss; no parameter is shared
        opt.step()
    return (time.process_time() - t0) / (steps * M) * 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--n", type=int, default=32)
    parser.add_argument("--steps", type=int, default=256)
    parser.add_argument("--models", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--schemes", nargs="+", choices=sorted(SCHEMES), help="only these schemes (default: every one)")
    parser.add_argument("--torch", action="store_true", help="also the same stack in PyTorch autograd")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (NumPy's step is serial)")
    args = parser.parse_args(argv)
    rate = floor_per_madd()
    print(
        f"CPU microseconds per head-step (trainer time / (steps x M), min of {args.repeats}), batch {args.batch}, "
        f"length {args.n}, {args.steps} steps; drawing included, its share in brackets; "
        f"OMP/OPENBLAS threads {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; load average {_load()}"
    )
    head = f"{'scheme':11s} {'floor':>6s}" + "".join(f" {f'M={m}':>16s}" for m in args.models)
    if args.torch:
        import torch

        torch.set_num_threads(args.threads)
        head += f" {f'torch M={args.models[-1]}':>13s} {'torch/numpy':>11s}"
    print(head)
    for scheme in args.schemes or SCHEMES:
        row = f"{scheme:11s} {floor_us(scheme, args.batch, args.n, 16, rate):6.2f}"
        last = None
        for m in args.models:
            total, draw = head_step(scheme, m, args.batch, args.n, args.steps, args.repeats)
            row += f" {total:8.1f} ({draw:4.1f})"
            last = total
        if args.torch:
            t = torch_step(scheme, args.models[-1], args.batch, args.n, min(args.steps, 64))
            row += f" {t:13.1f} {t / last:10.1f}x"
        print(row, flush=True)
    print(f"load average at the end {_load()} (a shared machine: compare the rows of one run)")


def _load() -> str:
    """The 1, 5 and 15 minute load averages, or a dash where the platform has none."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "-"


if __name__ == "__main__":
    main()
