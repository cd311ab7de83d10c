"""How far the NumPy trainer is from a compiled one: the ALiBi head's whole step written as one numba kernel.

Usage: ``python benchmarks/bench_compiled_step.py [--models 10] [--steps 1500] [--repeats 2]`` (needs numba:
``pip install 'poskernels[bench]'``, which ``make bench`` installs).

The head-step target (``bench_stack.py``: 2.5x the floor of its multiply-adds at the BLAS rate) asks whether the
trainer's NumPy calls cost much beyond its arithmetic.  This benchmark answers with the other route: the article's
ALiBi head (factored embedding, ``d = 16``, the cue task's single query token) trained one head at a time by one
compiled kernel (the forward as weighted counts, the softmax, the read-out, the cross-entropy and the hand-written
backward, as :mod:`poskernels.model.engine.content_path` computes them) and one compiled Adam.  Its gradients are
checked against the engine's before anything is timed.  Then, on the same pre-drawn batches (the draw is the same for
both and left out), CPU seconds of this process with one BLAS thread:

* the engine: ``M`` heads as one stack, the trainer's own step (:class:`poskernels.model.train_loop._Stack`);
* the kernel: the same ``M`` heads one after the other.

Both figures are per head-step; the floor is :func:`bench_stack.floor_us`'s.  The kernel is a plain loop nest (its
small products through numba's BLAS calls), what a first compiled engine would be, not a hand-tuned one.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.engine.reductions import cross_entropy_core, stack_params
from poskernels.model.engine.stack import stack_backward, stack_forward
from poskernels.model.optim import flatten
from poskernels.model.train_loop import _draw, _Stack, _streams
from poskernels.tasks.registry import get_task

sys.path.insert(0, os.path.dirname(__file__))
from bench_stack import floor_per_madd, floor_us  # noqa: E402

NAMES = ("E", "m", "W_Q", "W_K", "W_V", "W_O")  # the ALiBi head's parameters, in the trainer's order


def kernels():
    """The compiled step and Adam (numba imported here: the rest of the module needs none)."""
    import numba as nb

    @nb.njit(cache=True)
    def step(E, mk, WQ, WK, WV, WO, ep, tokens, targets, tau, S, grads):  # pragma: no cover - compiled
        B, n = tokens.shape
        d, C, V = E.shape[1], WO.shape[1], 2 * S + 1
        T = np.empty((V, d))  # the factored table: symbols, marked symbols, the query
        for s in range(S):
            for k in range(d):
                T[s, k] = E[s, k]
                T[S + s, k] = E[s, k] + mk[k]
        for k in range(d):
            T[2 * S, k] = E[S, k]
        EK, EV = T @ WK, T @ WV
        qtok = tokens[0, n - 1]  # the cue task: every sequence ends with the query token
        q = T[qtok] @ WQ
        c = (EK @ q) / tau  # (V,) the content table
        ec = np.exp(c - c.max())
        Cw = np.zeros((B, V))  # weighted counts: C[b, v] = e^{c_v} sum_{j: x_j = v} e^{b_j}, then over Z
        for b in range(B):
            for j in range(n):
                Cw[b, tokens[b, j]] += ep[j]
        for b in range(B):
            z = 0.0
            for v in range(V):
                Cw[b, v] *= ec[v]
                z += Cw[b, v]
            for v in range(V):
                Cw[b, v] /= z
        EO = EV @ WO  # (V, C)
        logits = Cw @ EO  # (B, C)
        loss = 0.0
        dl = np.empty((B, C))
        for b in range(B):
            mx = logits[b].max()
            z = 0.0
            for k in range(C):
                dl[b, k] = np.exp(logits[b, k] - mx)
                z += dl[b, k]
            loss += np.log(z) - (logits[b, targets[b]] - mx)
            for k in range(C):
                dl[b, k] /= z * B
            dl[b, targets[b]] -= 1.0 / B
        dEO = Cw.T @ dl  # (V, C)
        s = np.empty(B)  # the softmax's mean, dlogits . logits
        for b in range(B):
            acc = 0.0
            for k in range(C):
                acc += dl[b, k] * logits[b, k]
            s[b] = acc
        dc = np.empty(V)  # the content table's gradient: sum EO dEO - C^T s, over tau
        for v in range(V):
            acc = 0.0
            for k in range(C):
                acc += EO[v, k] * dEO[v, k]
            for b in range(B):
                acc -= Cw[b, v] * s[b]
            dc[v] = acc / tau
        dq = EK.T @ dc
        dEK, dEV = np.outer(dc, q), dEO @ WO.T
        dT = dEK @ WK.T + dEV @ WV.T
        dT[qtok] += WQ @ dq
        gE, gm, gQ, gK, gV, gO = grads
        gQ[:] = np.outer(T[qtok], dq)
        gK[:] = T.T @ dEK
        gV[:] = T.T @ dEV
        gO[:] = EV.T @ dEO
        gm[:] = 0.0
        for s_ in range(S):
            for k in range(d):
                gE[s_, k] = dT[s_, k] + dT[S + s_, k]
                gm[k] += dT[S + s_, k]
        for k in range(d):
            gE[S, k] = dT[2 * S, k]
        return loss / B

    @nb.njit(cache=True)
    def adam(x, g, m, v, t, lr, b1, b2, eps):  # pragma: no cover - compiled
        step_size, c2 = lr / (1.0 - b1**t), 1.0 - b2**t
        for i in range(x.size):
            m[i] = b1 * m[i] + (1.0 - b1) * g[i]
            v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i]
            x[i] -= step_size * m[i] / (np.sqrt(v[i] / c2) + eps)

    return step, adam


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=10, help="heads (M): one stack for the engine")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=2, help="each way timed this many times, alternating (min kept)")
    args = ap.parse_args(argv)
    try:
        import numba
    except ImportError:
        print("bench_compiled_step: needs numba (pip install 'poskernels[bench]'; `make bench` installs it)")
        return 1
    cfg = HeadConfig(scheme="alibi")
    config = TrainConfig(head=cfg, steps=args.steps, batch=128)
    M, S, tau, draws = args.models, (cfg.vocab - 1) // 2, cfg.tau, 64
    rngs = [_streams(seed)[1] for seed in range(M)]
    tokens, targets = _draw(config, [cfg], get_task("cue"), rngs, draws)  # (draws, M, B, n), (draws, M, B)
    drawn, tokens = tokens, tokens.astype(np.int64)  # the engine reads the sampler's integers, the kernel int64
    n = tokens.shape[-1]
    ep = np.exp(-cfg.alibi_slope * (n - 1 - np.arange(n)))  # ALiBi's key weights e^{-s r}, largest 1

    t0 = time.perf_counter()
    step, adam = kernels()
    stack = _Stack(config, range(M), None, 0)
    flat, views = flatten({k: v[0] for k, v in stack.views.items()})
    grads = tuple(np.empty_like(views[k]) for k in NAMES)
    step(*(views[k] for k in NAMES), ep, tokens[0, 0], targets[0, 0], tau, S, grads)
    adam(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), 1, config.lr, config.beta1, config.beta2, config.eps)
    compile_s = time.perf_counter() - t0

    # the kernel's gradients against the engine's, head 0 on its first batch
    one = stack_params([dict(views)])
    logits, cache = stack_forward(one, cfg, tokens[0, :1])
    loss, dlogits = cross_entropy_core(logits, targets[0, :1])
    engine = stack_backward(one, cfg, cache, dlogits)
    got = step(*(views[k] for k in NAMES), ep, tokens[0, 0], targets[0, 0], tau, S, grads)
    worst = max(np.abs(g - engine[k][0]).max() / np.abs(engine[k][0]).max() for k, g in zip(NAMES, grads))
    if not (abs(got - loss[0]) <= 1e-12 and worst <= 1e-9):
        print(f"the kernel disagrees with the engine: loss {got} against {loss[0]}, gradient {worst:.2e}")
        return 1

    def engine_run() -> float:
        st = _Stack(config, range(M), None, 0)
        begin = time.process_time()
        for k in range(args.steps):
            st.step(k, drawn[k % draws], targets[k % draws])
        return time.process_time() - begin

    def kernel_run() -> float:
        st, heads = _Stack(config, range(M), None, 0), []
        for i in range(M):  # each head's flat parameters, Adam's moments, its gradient and views into it
            x, vs = flatten({k: st.views[k][i] for k in NAMES})
            g = np.empty(x.size)
            gv = tuple(g[a : a + vs[name].size].reshape(vs[name].shape) for name, a in _offsets(vs))
            heads.append((x, tuple(vs[name] for name in NAMES), np.zeros(x.size), np.zeros(x.size), g, gv))
        begin = time.process_time()
        for k in range(args.steps):
            for i, (x, params, m1, m2, g, gv) in enumerate(heads):
                step(*params, ep, tokens[k % draws, i], targets[k % draws, i], tau, S, gv)
                adam(x, g, m1, m2, k + 1, config.lr, config.beta1, config.beta2, config.eps)
        return time.process_time() - begin

    e_best = k_best = np.inf
    for _ in range(args.repeats):
        e_best = min(e_best, engine_run())
        k_best = min(k_best, kernel_run())
    per = args.steps * M
    floor = floor_us("alibi", 128, n, cfg.d, floor_per_madd())
    print(f"ALiBi head-step, batch 128, length {n}, {args.steps} steps x {M} heads, drawing left out; one BLAS thread; "
          f"numba {numba.__version__}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    print(f"  the kernel's gradients against the engine's: largest relative difference {worst:.1e}")
    print(f"  compiling the kernel (or loading it from numba's cache): {compile_s:.2f} s")
    for label, best in ((f"engine, one stack of {M}:", e_best), ("compiled, head by head: ", k_best)):
        us = best / per * 1e6
        print(f"  {label} {us:6.1f} us a head-step ({us / floor:.1f}x the floor)")
    print(f"  floor (multiply-adds at the BLAS rate): {floor:.1f} us; engine / compiled = {e_best / k_best:.2f}")
    return 0


def _offsets(views: dict):
    """``(name, start)`` of each parameter in the flat vector, in :data:`NAMES`' order (the trainer's)."""
    start = 0
    for name in NAMES:
        yield name, start
        start += views[name].size


if __name__ == "__main__":
    sys.exit(main())
