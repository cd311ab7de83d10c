"""A scheme's checks far from the window: its hooks' backwards at long offsets, and the promises the engine trusts.

The head's checks (:mod:`poskernels.model.scheme_check`) train a small head at ``n = 10``; what a scheme does at
offset 2,000 or at ``10^6`` is read here, on the hooks themselves, for a stack of two heads at random parameters:

* :func:`hook_gradients`: each backward (``bias_backward``, ``code_backward``, ``logit_scale_backward``) against
  central differences of its own forward, as a vector-Jacobian product ``sum dz * hook(params)`` with a random
  ``dz``, at offsets ``0..2047`` (and key counts to ``2^16``); a gradient of another shape than its parameter, or
  one that mixes the heads of the stack (sums over the model axis), fails here, naming the parameter;
* :func:`engine_promises`: ``far_past``, ``linear_slope`` and ``tail_bound`` against the plain bias out to offset
  ``2^16`` (and sampled to ``2^22``), and the streaming reader, which relies on them, against the plain score at
  ``n = 1,200``.

Examples
--------
>>> from poskernels.model.config import HeadConfig
>>> cfg = HeadConfig(scheme="alibi", d=6, vocab=9, n_classes=4, n_train=10)
>>> engine_promises(cfg, seed=0).ok, hook_gradients(cfg, seed=0).ok
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..encodings import SCHEMES
from ..encodings.scheme import default_positions
from .config import HeadConfig
from .engine.one_head import query_logits
from .head import init_params
from .reading import PLAIN

__all__ = ["FAR", "Finding", "engine_promises", "hook_gradients", "random_params"]

#: Offsets read contiguously (the streaming reader's chunks reach far beyond the window of 10).
FAR = 1 << 16
#: Offsets sampled beyond :data:`FAR`, up to ``2^22`` (four million keys back).
_FARTHER = np.unique(np.geomspace(FAR, 1 << 22, 64).astype(np.int64)).astype(float)
#: Entries of one parameter whose central difference is taken (sampled at random past this).
_SAMPLED = 48
_H = 1e-6
#: Keys the streaming reader reads against the plain score (past offset 400, where the hostile promises broke).
_STREAM = 1200


@dataclass(frozen=True)
class Finding:
    """What one far check found: passed, and what was measured (or every problem, joined)."""

    ok: bool
    detail: str


def random_params(cfg: HeadConfig, rng: np.random.Generator) -> dict:
    """A head away from its initialisation: each parameter ``v`` as ``v u + e`` (``u ~ U(0.5, 1.5)``, ``e ~ N(0,
    0.1^2)``, entry by entry), so a backward that holds only where ``init`` puts the head shows.

    Parameters
    ----------
    cfg : HeadConfig
        The head.
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    dict of ndarray
        The head's parameters, moved off their initialisation.

    Examples
    --------
    >>> p = random_params(HeadConfig(scheme="t5"), np.random.default_rng(0))
    >>> bool(np.all(p["beta"] != 0))  # T5's betas start at 0; here they do not
    True
    """
    base = init_params(cfg, rng)
    return {k: v * rng.uniform(0.5, 1.5, np.shape(v)) + rng.normal(0.0, 0.1, np.shape(v)) for k, v in base.items()}


def _own(cfg: HeadConfig, heads: list) -> dict:
    """The scheme's own parameters of ``heads``, stacked ``(M, ...)``."""
    names = list(SCHEMES[cfg.scheme].init(cfg, np.random.default_rng(0)))
    return {k: np.stack([h[k] for h in heads]) for k in names}


def _vjp_errors(f, grads: dict, params: dict, rng, what: str) -> list[str]:
    """``grads`` (the hook's backward) against the central differences of ``f(params)``, on sampled entries."""
    problems = []
    for k, value in params.items():
        g = grads.get(k)
        g = np.zeros_like(value) if g is None else np.asarray(g, dtype=float)  # none: the hook must not read it
        if g.shape != value.shape:
            problems.append(f"{what} returns the gradient of {k!r} with shape {g.shape}; the parameter is "
                            f"{value.shape} (a gradient broadcast into it is wrong)")  # fmt: skip
            continue
        flat = value.reshape(-1)
        picks = np.arange(flat.size) if flat.size <= _SAMPLED else rng.choice(flat.size, _SAMPLED, replace=False)
        numeric, analytic = [], []
        for i in picks:
            old = flat[i]
            flat[i] = old + _H
            fp = f()
            flat[i] = old - _H
            fm = f()
            flat[i] = old
            numeric.append((fp - fm) / (2 * _H))
            analytic.append(g.reshape(-1)[i])
        numeric, analytic = np.array(numeric), np.array(analytic)
        scale = max(np.abs(numeric).max(initial=0.0), 1e-8)
        err = float(np.abs(numeric - analytic).max(initial=0.0) / scale)
        if not err <= 1e-5:
            model = np.unravel_index(picks[int(np.argmax(np.abs(numeric - analytic)))], value.shape)[0]
            problems.append(f"{what}: the gradient of {k!r} is off by {err:.1e} (relative) at random parameters "
                            f"(worst in head {model} of a stack of {value.shape[0]})")  # fmt: skip
    return problems


def hook_gradients(cfg: HeadConfig, seed: int = 0) -> Finding:
    """Each backward hook of ``cfg``'s scheme against its forward's central differences, far from the window.

    Parameters
    ----------
    cfg : HeadConfig
        The (small) head whose scheme is checked.
    seed : int
        Seed of the random parameters and cotangents.

    Returns
    -------
    Finding
        Passed, and which hooks were read where (or every problem, joined).

    Examples
    --------
    >>> cfg = HeadConfig(scheme="t5", d=6, vocab=9, n_classes=4, n_train=10)
    >>> hook_gradients(cfg)
    Finding(ok=True, detail='bias_backward at offsets 0..2047 (two heads, random parameters)')
    """
    scheme = SCHEMES[cfg.scheme]
    rng = np.random.default_rng([seed, 7])
    heads = [random_params(cfg, rng) for _ in range(2)]
    own = _own(cfg, heads)
    M, U = 2, 2
    problems: list[str] = []
    checked = []
    n = 2048
    pos = default_positions(n)
    r, t = pos[-1] - pos, pos[-1]
    if scheme.where == "score":
        q = rng.normal(size=(M, U, cfg.d))
        dz = rng.normal(size=(M, U, n))

        def f_bias():
            return float((dz * _as_stack(scheme.bias_at(own, cfg, q, r, t), M, U, n)).sum())

        dq, grads = scheme.bias_backward_at(dz, own, cfg, q, r, t)
        problems += _vjp_errors(f_bias, grads or {}, own, rng, f"bias_backward at offsets 0..{n - 1}")
        if dq is not None:
            problems += _vjp_errors(f_bias, {"q": dq}, {"q": q}, rng, f"bias_backward's dL/dq at offsets 0..{n - 1}")
        checked.append(f"bias_backward at offsets 0..{n - 1}")
    if scheme.where == "input":
        m = n if scheme.defined_everywhere else cfg.n_train
        p = default_positions(m)
        code = scheme.code(own, cfg, p)
        dcode = rng.normal(size=(M, m, cfg.d))

        def f_code():
            return float((dcode * np.broadcast_to(scheme.code(own, cfg, p), (M, m, cfg.d))).sum())

        if code is not None:
            problems += _vjp_errors(f_code, scheme.code_backward(dcode, own, cfg, p) or {}, own, rng,
                                    f"code_backward at positions 0..{m - 1}")  # fmt: skip
            checked.append(f"code_backward at positions 0..{m - 1}")
    if scheme.scale_grows:
        for keys in (10, 4096, FAR):
            dlam = rng.normal(size=M)

            def f_scale(keys=keys, dlam=dlam):
                lam = scheme.logit_scale_at(own, cfg, PLAIN, keys)
                return float((dlam * np.broadcast_to(np.asarray(lam, dtype=float).reshape(-1), (M,))).sum())

            grads = scheme.logit_scale_backward(dlam, own, cfg, PLAIN, keys) or {}
            problems += _vjp_errors(f_scale, grads, own, rng, f"logit_scale_backward at {keys} keys")
        checked.append(f"logit_scale_backward to {FAR} keys")
    if problems:
        return Finding(False, "; ".join(problems))
    return Finding(True, ", ".join(checked) + " (two heads, random parameters)" if checked else "no backward hook")


def engine_promises(cfg: HeadConfig, seed: int = 0) -> Finding:
    """``far_past``, ``linear_slope`` and ``tail_bound`` against the plain bias far out, and the streaming reader
    against the plain score past offset 400.

    Parameters
    ----------
    cfg : HeadConfig
        The (small) head whose scheme is checked.
    seed : int
        Seed of the random parameters and queries.

    Returns
    -------
    Finding
        Passed, and which promises were read how far (or every problem, joined).

    Examples
    --------
    >>> cfg = HeadConfig(scheme="t5", d=6, vocab=9, n_classes=4, n_train=10)
    >>> engine_promises(cfg)
    Finding(ok=True, detail='its far past to offset 4194304; the streaming reader equals the plain score')
    """
    scheme = SCHEMES[cfg.scheme]
    R0, s = scheme.far_past(cfg), scheme.linear_slope(cfg)
    rng = np.random.default_rng([seed, 11])
    heads = [random_params(cfg, rng) for _ in range(2)]
    problems: list[str] = []
    told = []
    if R0 is not None or s is not None or scheme.tail_bound(heads[0], cfg) is not None:
        own = _own(cfg, heads)
        q = rng.normal(size=(2, 2, cfg.d))
        near = np.arange(0.0, FAR)  # (FAR,)
        b_near = _bias(scheme, own, cfg, q, near, float(FAR - 1))
        b_far = _bias(scheme, own, cfg, q, _FARTHER, float(_FARTHER[-1]))
        if R0 is not None:
            problems += _far_past(R0, b_near, b_far)
            told.append("far past")
        if s is not None:
            problems += _linear(s, near, b_near, b_far)
            told.append("linear slope")
        for m, head in enumerate(heads):
            bound = scheme.tail_bound(head, cfg)
            if bound is not None:
                problems += _tail(bound, b_near[m], m)
                if "tail bound" not in told:
                    told.append("tail bound")
    if not problems:
        problems += _stream(cfg, heads, rng)
    if problems:
        return Finding(False, "; ".join(problems))
    promised = f"its {', '.join(told)} to offset {int(_FARTHER[-1])}; " if told else ""
    return Finding(True, promised + "the streaming reader equals the plain score")


def _as_stack(b, M: int, U: int, n: int) -> np.ndarray:
    """A stack's bias, ``(M, U, n)``, ``(M, n)`` or ``(n,)`` (the shapes the engine reads), as ``(M, U, n)``."""
    b = np.zeros(n) if b is None else np.asarray(b, dtype=float)
    if b.ndim == 2:
        b = b[:, None, :]  # (M, n): one row per head, every query alike
    return np.broadcast_to(b, (M, U, n))


def _bias(scheme, own, cfg, q, r, t) -> np.ndarray:
    return _as_stack(scheme.bias_at(own, cfg, q, r, t), 2, 2, r.size)


def _far_past(R0, b_near, b_far) -> list[str]:
    if isinstance(R0, bool) or not isinstance(R0, (int, np.integer)) or R0 < 0:
        return [f"far_past must be an offset (an integer >= 0) or None; got {R0!r}"]
    if R0 >= FAR:  # past the contiguous offsets: the sampled ones from R0 on
        far = b_far[..., _FARTHER >= R0]
        if far.shape[-1] and not np.all(far == far[..., :1]):
            return [f"far_past says the score no longer depends on the offset from {R0}, but the bias still changes "
                    f"past it (between offsets {R0} and {int(_FARTHER[-1])})"]  # fmt: skip
        return []
    tail = b_near[..., R0:]
    moved = np.abs(tail - tail[..., :1])
    if not np.all(moved == 0) or not np.all(b_far == tail[..., :1]):
        at = R0 + int(np.argmax(moved.max(axis=(0, 1)))) if not np.all(moved == 0) else "beyond " + str(FAR)
        return [f"far_past says the score no longer depends on the offset from {R0}, but the bias still changes "
                f"(at offset {at})"]  # fmt: skip
    return []


def _linear(s, near, b_near, b_far) -> list[str]:
    try:
        s = float(s)
    except (TypeError, ValueError):
        return [f"linear_slope must be a number or None; got {s!r}"]
    if not math.isfinite(s):
        return [f"linear_slope must be finite; got {s!r}"]
    for r, b in ((near, b_near), (_FARTHER, b_far)):
        if not np.allclose(b, -s * r, rtol=1e-12, atol=1e-12):
            worst = int(r[int(np.argmax(np.abs(b - -s * r).max(axis=(0, 1))))])
            return [f"linear_slope says the bias is exactly -{s!r} r, but it is not (at offset {worst}: "
                    f"{float(b.reshape(-1, r.size)[0, r.tolist().index(worst)])!r}, not {-s * worst!r})"]  # fmt: skip
    return []


def _tail(bound, b, m: int) -> list[str]:
    """The bound against ``e^W sum_{r >= D} e^{b(r)}`` summed to offset :data:`FAR` (a lower bound of the tail)."""
    if not np.allclose(b[..., 0], 0.0, atol=1e-12):
        return [f"tail_bound is given but the bias at offset 0 is {float(b[..., 0].max())!r}, not 0"]
    e = np.exp(b.max(axis=0))  # (FAR,) the larger query's weights
    tails = np.cumsum(e[::-1])[::-1]  # sum over r >= D, to FAR
    last = math.inf
    for D in (0, 1, 5, 50, 400, 1000, 4096, FAR // 2, FAR - 1, 1 << 30, 1 << 53):
        for W in (0.0, 2.5):
            try:
                value = float(bound(W, D))
            except Exception as err:  # noqa: BLE001 - the bound's own failure, named
                return [f"tail_bound({W}, {D}) raised {type(err).__name__}: {err}"]
            if math.isnan(value) or value < 0:
                return [f"tail_bound({W}, {D}) is {value!r} for head {m} at random parameters; a bound is a number "
                        ">= 0 (inf for none)"]  # fmt: skip
            if D < FAR and value < math.exp(W) * tails[D] * (1 - 1e-9):
                own = math.exp(W) * tails[D]
                return [f"tail_bound({W}, {D}) = {value:.3g} is below the bias's own tail, {own:.3g} summed to offset "
                        f"{FAR} (head {m} at random parameters)"]  # fmt: skip
        if value > last * (1 + 1e-12):
            return [f"tail_bound grows with the offset (at D = {D}); a bound on the weight past D cannot"]
        last = value
    return []


def _stream(cfg: HeadConfig, heads: list, rng) -> list[str]:
    """The streaming reader (far past, certified cut) against the plain score at ``n = 1200``."""
    from ..errors import PosKernelsError
    from ..tasks.cue import cue_batch
    from .engine.cut import certified_cut, has_cut
    from .engine.stream import stream_logits

    n = _STREAM if SCHEMES[cfg.scheme].defined_everywhere else cfg.n_train  # a learned table: read where defined
    tokens, _ = cue_batch(rng, 2, n, n_symbols=(cfg.vocab - 1) // 2, mark_prob=0.3)
    for m, head in enumerate(heads):
        plain = query_logits(head, cfg, tokens)
        fast = stream_logits(head, cfg, tokens, chunk=256)
        err = float(np.abs(fast - plain).max() / max(np.abs(plain).max(), 1e-12))
        if not err <= 1e-8:
            return [f"the streaming reader differs from the plain score at n = {n} by {err:.1e} (relative; head {m} "
                    "at random parameters): a promise to the engine (far_past) is false"]  # fmt: skip
        if has_cut(head, cfg):
            try:
                allowed = certified_cut(head, cfg, tokens[:, -1], 1e-6).logit_bound
            except PosKernelsError:  # a heavy tail at this head's content width: the engine reads it in full
                continue
            cut = stream_logits(head, cfg, tokens, chunk=256, eps=1e-6)
            gap = float(np.abs(cut - plain).max())
            if not gap <= allowed * (1 + 1e-9) + 1e-12:
                return [
                    f"the certified cut moves a logit by {gap:.3g} at n = {n}, past its bound {allowed:.3g} (head "
                    f"{m} at random parameters): a promise to the engine (linear_slope or tail_bound) is false"
                ]
    return []
