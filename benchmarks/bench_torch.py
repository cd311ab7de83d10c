"""The NumPy head with hand-written gradients against the same head in PyTorch autograd, on the CPU.

Usage: ``python benchmarks/bench_torch.py [--batch 64] [--n 32] [--steps 300] [--threads 1]``
(needs the ``bench`` extra: ``pip install -e '.[bench]'``, torch 2.13.0).

Both train the same head from the same initial weights on the same batches for ``--steps`` Adam steps
(lr 1e-2, the standard constants): NumPy with :func:`poskernels.model.engine.one_head.query_forward` /
``query_backward`` and :func:`poskernels.model.optim.adam_step`, PyTorch with
:func:`poskernels.model.reference.torch_logits`, ``loss.backward()`` and ``torch.optim.Adam``.  The
batches are drawn beforehand and not timed.  Reported: median time per step and the ratio, per scheme,
with PyTorch in float64 (as NumPy) and in float32; the final losses agree (same arithmetic in float64).
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
from poskernels.tasks.cue import cue_batch


def numpy_run(cfg, params, batches) -> tuple[np.ndarray, float]:
    flat, views = flatten(params)
    state = adam_init(flat.size)
    times = np.empty(len(batches))
    for i, (x, y) in enumerate(batches):
        t0 = time.perf_counter()
        logits, cache = query_forward(views, cfg, x, validate=False)
        loss, dlogits = cross_entropy(logits, y)
        grads = query_backward(views, cfg, cache, dlogits)
        adam_step(flat, np.concatenate([grads[k].ravel() for k in views]), state, 1e-2, 0.9, 0.999, 1e-8)
        times[i] = time.perf_counter() - t0
    return times, loss


def torch_run(cfg, params, batches, dtype) -> tuple[np.ndarray, float]:
    import torch

    from poskernels.model.reference import torch_logits, torch_params

    tp = torch_params(params, dtype=dtype)
    opt = torch.optim.Adam(tp.values(), lr=1e-2, betas=(0.9, 0.999), eps=1e-8)
    tb = [(torch.as_tensor(x), torch.as_tensor(y)) for x, y in batches]
    times = np.empty(len(batches))
    for i, (x, y) in enumerate(tb):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(torch_logits(tp, cfg, x), y)
        loss.backward()
        opt.step()
        times[i] = time.perf_counter() - t0
    return times, float(loss.detach())


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--n", type=int, default=32)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (NumPy's step is serial)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(
        f"per training step, batch {args.batch}, length {args.n}, {args.steps} steps, median microseconds; "
        f"torch {torch.__version__} on {args.threads} thread(s)"
    )
    print(f"{'scheme':11s} {'numpy f64':>10s} {'torch f64':>10s} {'ratio':>6s} {'torch f32':>10s} {'ratio':>6s}  loss")
    for scheme in SCHEMES:
        cfg = HeadConfig(scheme=scheme)
        rng = np.random.default_rng(0)
        params = init_params(cfg, rng)
        batches = [cue_batch(rng, args.batch, args.n) for _ in range(args.steps)]
        t_np, loss_np = numpy_run(cfg, {k: v.copy() for k, v in params.items()}, batches)
        t_64, loss_64 = torch_run(cfg, params, batches, torch.float64)
        t_32, _ = torch_run(cfg, params, batches, torch.float32)
        a, b, c = (np.median(t[10:]) * 1e6 for t in (t_np, t_64, t_32))
        agree = "same" if np.isclose(loss_np, loss_64, rtol=1e-6) else f"{loss_np:.4f} vs {loss_64:.4f}"
        print(f"{scheme:11s} {a:10.1f} {b:10.1f} {b / a:5.1f}x {c:10.1f} {c / a:5.1f}x  {agree}")


if __name__ == "__main__":
    main()
