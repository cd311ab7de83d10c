"""Is a scheme right?  Its backward against central differences and PyTorch autograd, its head alone and in a stack,
the engine against the readable head, and its hooks against what its metadata claims.

:func:`check_scheme` runs every check on a small head (``d = 6``, ``n = 10``, weights larger than at
initialisation, so a wrong term would show) and returns one :class:`Check` per line; ``poskernels check-scheme
FILE`` prints them.  A check that cannot run (PyTorch absent, or a scheme with parameters that writes no
``reference_bias`` / ``reference_code`` for the autograd oracle) is *skipped*, and says why.

Examples
--------
>>> checks = check_scheme("alibi")
>>> [c.name for c in checks][:2], [c.ok for c in checks][:4]  # the fifth: autograd, or skipped without PyTorch
(['hooks agree with metadata', 'backward against central differences'], [True, True, True, True])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..encodings import SCHEMES, Scheme, register_scheme
from ..errors import PosKernelsError
from ..tasks.cue import cue_batch
from .config import HeadConfig
from .engine.reductions import stack_params
from .engine.stack import stack_forward
from .head import backward, cross_entropy, forward, init_params, query_backward, query_forward
from .optim import central_difference
from .reading import PLAIN, frequencies

__all__ = ["Check", "check_scheme"]

#: The small head every check reads (every scheme setting at its default).
SMALL = dict(d=6, vocab=9, n_classes=4, n_train=10)


@dataclass(frozen=True)
class Check:
    """One check of a scheme: its name, whether it passed (None: skipped), and what was measured or why not."""

    name: str
    ok: bool | None
    detail: str

    def line(self) -> str:
        """``ok   name (detail)``, ``FAIL name: detail`` or ``skip name: detail``."""
        if self.ok is None:
            return f"skip  {self.name}: {self.detail}"
        return f"ok    {self.name} ({self.detail})" if self.ok else f"FAIL  {self.name}: {self.detail}"


def check_scheme(scheme, seed: int = 0) -> list[Check]:
    """Every check of ``scheme`` (a registered name, or a :class:`Scheme` subclass or instance, then registered).

    Parameters
    ----------
    scheme : str, Scheme subclass or Scheme
    seed : int
        Seed of the head's weights and of its sequences.

    Returns
    -------
    list of Check
        Metadata, central differences, engine against head, stack against alone, PyTorch autograd.
    """
    name = scheme if isinstance(scheme, str) else register_scheme(scheme).name
    if name not in SCHEMES:
        raise PosKernelsError(f"unknown scheme {name!r}; accepted: {', '.join(sorted(SCHEMES))}")
    cfg = HeadConfig(scheme=name, **SMALL)
    rng = np.random.default_rng(seed)
    params = {k: 2.0 * v for k, v in init_params(cfg, rng).items()}  # larger than at init: every term shows
    tokens, targets = cue_batch(rng, 5, cfg.n_train, n_symbols=4, mark_prob=0.3)
    tokens[1, -1] = 2  # a second query token
    checks = [_metadata(SCHEMES[name], cfg, params)]
    for check in (_central_differences, _engine, _stack, _torch):
        try:
            checks.append(check(params, cfg, tokens, targets))
        except PosKernelsError:
            raise
        except Exception as err:  # noqa: BLE001 - a hook that raises fails its check, with what it raised
            checks.append(Check(check.__doc__.split(":")[0], False, f"raised {type(err).__name__}: {err}"))
    return checks


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max(initial=0.0) / max(np.abs(b).max(initial=0.0), 1e-12))


def _metadata(scheme: Scheme, cfg: HeadConfig, params: dict) -> Check:
    """hooks agree with metadata: the transform, the far past, the linear slope, the tail bound, the gradients."""
    name = "hooks agree with metadata"
    problems = []
    stacked = {k: v[None] for k, v in params.items()}
    q = np.random.default_rng(1).normal(size=(1, 2, cfg.d))  # (M, U, d)
    theta = frequencies(cfg, PLAIN)
    if scheme.rotary and (theta is None or not np.all(np.isfinite(theta))):
        problems.append("a rotary scheme's transform must give finite frequencies of shape (d/2,)")
    r = np.arange(0.0, 400.0)  # (n,) causal offsets
    bias = scheme.bias_at(stacked, cfg, q, r, float(r[-1]))  # a query far enough to see every offset
    if scheme.where == "score" and bias is None:
        problems.append("where = 'score' but bias returned None")
    b = None if bias is None else np.broadcast_to(bias, (1, 2, r.size))
    R0 = scheme.far_past(cfg)
    if R0 is not None and b is not None and R0 < r.size and not np.all(b[..., R0:] == b[..., R0 : R0 + 1]):
        problems.append(f"far_past says the bias is constant from offset {R0}, but it changes after it")
    s = scheme.linear_slope(cfg)
    if s is not None and not np.allclose(0.0 if b is None else b, -s * r, rtol=1e-12, atol=1e-12):
        problems.append(f"linear_slope says the bias is exactly -{s} r, but it is not")
    tail = scheme.tail_bound(params, cfg)
    if tail is not None and b is not None:  # at W = 0 the bound holds the weight sum over r >= D of e^{b(r)}
        for D in (0, 5, 50):
            if np.exp(b[..., D:]).sum(axis=-1).max() > tail(0.0, D) * (1 + 1e-9):
                problems.append(f"tail_bound at offset {D} is below the bias's own tail sum")
                break
    if scheme.offset_kernel is not None:
        k = np.asarray(scheme.offset_kernel(np.arange(8.0)))
        if k.shape != (8,) or not np.all(np.isfinite(k)):
            problems.append("offset_kernel must map offsets (n,) to finite values (n,)")
    logits, cache = forward(params, cfg, np.zeros((1, cfg.n_train), dtype=np.int64))
    grads = backward(params, cfg, cache, np.ones_like(logits))
    if sorted(grads) != sorted(params):
        problems.append(f"the backward's gradients {sorted(grads)} are not the parameters {sorted(params)}")
    if problems:
        return Check(name, False, "; ".join(problems))
    told = [
        w
        for w, v in (("far past", R0), ("linear slope", s), ("tail bound", tail), ("transform", theta))
        if v is not None
    ]
    return Check(name, True, f"where = {scheme.where!r}" + (f"; checked its {', '.join(told)}" if told else ""))


def _central_differences(params, cfg, tokens, targets) -> Check:
    """backward against central differences: every parameter of the readable head's backward."""
    logits, cache = forward(params, cfg, tokens)
    grads = backward(params, cfg, cache, cross_entropy(logits, targets)[1])

    def total():
        return cross_entropy(forward(params, cfg, tokens)[0], targets)[0]

    worst, where, bad = 0.0, "", []
    for k, value in params.items():
        numeric = central_difference(total, value)
        err = _rel(grads[k], numeric)
        if err > worst:
            worst, where = err, k
        if not np.allclose(grads[k], numeric, rtol=1e-5, atol=1e-8):
            bad.append(k)
    detail = f"max relative error {worst:.1e}" + (f" at parameter {where!r}" if where else "")
    if bad:
        return Check("backward against central differences", False, f"{detail}; wrong for {', '.join(bad)}")
    return Check("backward against central differences", True, detail)


def _engine(params, cfg, tokens, targets) -> Check:
    """engine equals the readable head: the trainer's forward and backward."""
    logits, cache = forward(params, cfg, tokens)
    fast, fast_cache = query_forward(params, cfg, tokens)
    dl = cross_entropy(logits, targets)[1]
    slow, quick = backward(params, cfg, cache, dl), query_backward(params, cfg, fast_cache, dl)
    worst = max([_rel(fast, logits)] + [_rel(quick[k], slow[k]) for k in params])
    return Check("engine equals the readable head", worst <= 1e-8, f"max relative difference {worst:.1e}")


def _stack(params, cfg, tokens, targets) -> Check:
    """a head in a stack equals the head alone: three heads trained as one stack."""
    heads = [params, {k: 0.5 * v for k, v in params.items()}, {k: -v for k, v in params.items()}]
    xs = np.stack([tokens, tokens[::-1], tokens])  # (3, B, n)
    together, _ = stack_forward(stack_params(heads), cfg, xs)
    alone = [stack_forward(stack_params([h]), cfg, xs[i : i + 1])[0][0] for i, h in enumerate(heads)]
    same = all(np.array_equal(together[i], alone[i]) for i in range(3))
    worst = max(_rel(together[i], alone[i]) for i in range(3))
    return Check(
        "a head in a stack equals the head alone",
        worst <= 1e-12,
        "bit for bit" if same else f"max relative difference {worst:.1e}",
    )


def _torch(params, cfg, tokens, targets) -> Check:
    """PyTorch autograd: the reference head's gradient, the scheme's terms written in torch."""
    name = "PyTorch autograd"
    try:
        import torch  # noqa: F401
    except ImportError:
        return Check(name, None, "PyTorch is not installed (pip install 'poskernels[bench]')")
    from . import reference

    try:
        ref_loss, ref = reference.torch_loss_and_grad(params, cfg, tokens, targets)
    except reference.NoTerms as why:
        return Check(name, None, str(why))
    logits, cache = forward(params, cfg, tokens)
    loss, dl = cross_entropy(logits, targets)
    grads = backward(params, cfg, cache, dl)
    worst = max([_rel(loss, ref_loss)] + [_rel(grads[k], ref[k]) for k in params])
    return Check(name, worst <= 1e-9, f"max relative difference {worst:.1e}")
