"""Is a scheme right?  Its backward against central differences (at the start and at random parameters) and PyTorch
autograd, its hooks' backwards far from the window, its head alone and in a stack (forward and backward), the engine
against the readable head, its hooks against what its metadata claims, and its promises to the engine far out
(:mod:`poskernels.model.scheme_far`).  :func:`checked_scheme_file` is the gate every entry to a user's file runs.

:func:`check_scheme` runs every check on a small head (``d = 6``, ``n = 10``, weights larger than at
initialisation, so a wrong term would show) and returns one :class:`Check` per line; ``poskernels check-scheme
FILE`` prints them.  A check that cannot run (PyTorch absent, or a scheme with parameters that writes no
``reference_bias`` / ``reference_code`` for the autograd oracle) is *skipped*, and says why.

Examples
--------
>>> checks = check_scheme("alibi")
>>> [c.name for c in checks][:2], [c.ok for c in checks][:6]  # the last: autograd, or skipped without PyTorch
(['hooks agree with metadata', 'backward against central differences'], [True, True, True, True, True, True])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..encodings import SCHEMES, Scheme, register_scheme
from ..errors import PosKernelsError, check_int
from ..tasks.cue import cue_batch
from .config import HeadConfig
from .engine.one_head import cross_entropy, query_backward, query_forward
from .engine.reductions import stack_params
from .engine.stack import stack_backward, stack_forward
from .head import backward, forward, init_params
from .optim import central_difference
from .reading import PLAIN, frequencies
from .scheme_far import engine_promises, hook_gradients, random_params

__all__ = ["Check", "check_scheme", "checked_scheme_file"]

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

    Raises
    ------
    PosKernelsError
        If ``scheme`` is neither a registered name nor a :class:`Scheme`, or ``seed`` is not a Generator seed.

    Examples
    --------
    >>> checks = check_scheme("alibi")
    >>> [c.name for c in checks][:2], all(c.ok for c in checks)
    (['hooks agree with metadata', 'backward against central differences'], True)
    >>> check_scheme("alibl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'alibl'; accepted: alibi, fire, ...
    """
    seed = check_int("seed", seed, 0, 2**63 - 1, "a numpy.random.Generator seed")
    if isinstance(scheme, str):
        name = scheme
    elif isinstance(scheme, Scheme) or (isinstance(scheme, type) and issubclass(scheme, Scheme)):
        name = register_scheme(scheme).name
    else:
        raise PosKernelsError(f"check_scheme takes a scheme's name, or a Scheme subclass or instance; got {scheme!r}")
    if name not in SCHEMES:
        raise PosKernelsError(f"unknown scheme {name!r}; accepted: {', '.join(sorted(SCHEMES))}")
    try:
        cfg = HeadConfig(scheme=name, **SMALL)
        rng = np.random.default_rng(seed)
        params = {k: 2.0 * np.asarray(v, dtype=float) for k, v in init_params(cfg, rng).items()}  # every term shows
    except (Exception, SystemExit) as err:  # noqa: BLE001 - a scheme whose head cannot be built fails, saying why
        return [Check("a head of the scheme builds", False, f"raised {type(err).__name__}: {err}")]
    tokens, targets = cue_batch(rng, 5, cfg.n_train, n_symbols=4, mark_prob=0.3)
    tokens[1, -1] = 2  # a second query token
    checks = []
    for check in (_metadata, _central_differences, _far_gradients, _engine, _stack, _promises, _torch):
        try:
            checks.append(check(params, cfg, tokens, targets))
        except (Exception, SystemExit) as err:  # noqa: BLE001 - a hook that raises (or exits) fails its check
            checks.append(Check(check.__doc__.split(":")[0], False, f"raised {type(err).__name__}: {err}"))
    return checks


_PASSED: dict[str, str] = {}  # scheme name -> the digest of the version that passed every check (this process)


def checked_scheme_file(path) -> list[str]:
    """The gate every entry to a user's scheme runs (``check-scheme``, the tournament, a sweep's ``scheme_file``):
    load the file (:func:`~poskernels.model.scheme_file.load_scheme_file`) and check each of its schemes; the first
    check that fails is one :class:`PosKernelsError` naming the file, the class and the check.

    Parameters
    ----------
    path : str or PathLike
        The scheme file.

    Returns
    -------
    list of str
        The names of the file's schemes, every one of which passed.

    Raises
    ------
    PosKernelsError
        If the file is refused (:func:`~poskernels.model.scheme_file.load_scheme_file`), or a scheme in it fails a
        check.

    Examples
    --------
    >>> checked_scheme_file("no-such-scheme-file.py")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme file no-such-scheme-file.py: cannot be read (FileNotFoundError: ...)
    """
    from .scheme_file import load_scheme_file
    from .scheme_identity import scheme_digest

    names = load_scheme_file(path)
    for name in names:
        digest = scheme_digest(name)
        if digest is not None and _PASSED.get(name) == digest:
            continue
        for c in check_scheme(name):
            if c.ok is False:
                cls = type(SCHEMES[name]).__name__
                raise PosKernelsError(f"scheme file {path}: class {cls}: {c.name} fails: {c.detail}")
        if digest is not None:
            _PASSED[name] = digest
    return names


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max(initial=0.0) / max(np.abs(b).max(initial=0.0), 1e-12))


def _metadata(params, cfg, tokens, targets) -> Check:
    """hooks agree with metadata: the transform, the far past, the linear slope, a bias of no query, the tail bound,
    the gradients."""
    name = "hooks agree with metadata"
    scheme = SCHEMES[cfg.scheme]
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
    free = True if b is not None and not scheme.bias_reads_query else None  # a promise to check
    if free:
        problems += _query_free(scheme, params, cfg)
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
        for w, v in (("far past", R0), ("linear slope", s), ("bias of no query", free), ("tail bound", tail),
                     ("transform", theta))  # fmt: skip
        if v is not None
    ]
    return Check(name, True, f"where = {scheme.where!r}" + (f"; checked its {', '.join(told)}" if told else ""))


def _query_free(scheme: Scheme, params: dict, cfg: HeadConfig) -> list[str]:
    """What is wrong with a bias's promise to read no query vector (``bias_reads_query = False``): the filing reader
    calls it with ``q = None`` on a grid of ``(t, j)``, and reads every query off it."""
    t = np.arange(8.0)[:, None]  # (8, 1) the queries' positions
    r = t - np.arange(8.0)[None, :]  # (8, 8) offsets, as the grid asks them
    try:
        free = scheme.bias_at(params, cfg, None, r, t)
    except Exception as err:  # noqa: BLE001 - the promise is broken, and the problem says how
        return [f"bias_reads_query is False, but the bias fails without a query ({type(err).__name__}: {err})"]
    q = np.random.default_rng(2).normal(size=(8, cfg.d))  # (8, d) queries
    if not np.array_equal(free, scheme.bias_at(params, cfg, q, r, t)):
        return ["bias_reads_query is False, but the bias moves with the query"]
    return []


def _central_differences(params, cfg, tokens, targets) -> Check:
    """backward against central differences: every parameter of the readable head's backward, at the initial
    parameters, at twice them, and at two random draws."""
    name = "backward against central differences"
    seed = int(np.abs(params["W_Q"]).sum() * 1e6) % 2**31  # the check's own draws, fixed by the head it reads
    rng = np.random.default_rng([seed, 3])
    points = {
        "the initial parameters": init_params(cfg, np.random.default_rng([seed, 5])),
        "twice the initial parameters": params,
        "random parameters (draw 1)": random_params(cfg, rng),
        "random parameters (draw 2)": random_params(cfg, rng),
    }
    own = set(SCHEMES[cfg.scheme].init(cfg, np.random.default_rng(0)))
    worst = {"head": (0.0, ""), "scheme": (0.0, "")}
    bad = []
    for where, point in points.items():
        point = {k: np.array(v, dtype=float) for k, v in point.items()}
        logits, cache = forward(point, cfg, tokens)
        grads = backward(point, cfg, cache, cross_entropy(logits, targets)[1])

        def total(point=point):
            return cross_entropy(forward(point, cfg, tokens)[0], targets)[0]

        for k, value in point.items():
            g = np.asarray(grads.get(k), dtype=float)
            if g.shape != value.shape:
                bad.append(f"the gradient of {k!r} has shape {g.shape}, the parameter {value.shape} (at {where})")
                continue
            numeric = central_difference(total, value)
            err = _rel(g, numeric)
            side = "scheme" if k in own else "head"
            if err > worst[side][0]:
                worst[side] = (err, k)
            if not np.allclose(g, numeric, rtol=1e-5, atol=1e-8):
                bad.append(f"{k!r} is off by {err:.1e} (relative) at {where}")
    detail = f"max relative error {worst['head'][0]:.1e}" + (f" at {worst['head'][1]!r}" if worst["head"][1] else "")
    if own:
        err, k = worst["scheme"]
        detail += f"; the scheme's own parameters: {err:.1e}" + (f" at {k!r}" if k else "")
    detail += f"; at {len(points)} points (initial, twice, two random)"
    if bad:
        return Check(name, False, "; ".join(dict.fromkeys(bad)))
    return Check(name, True, detail)


def _far_gradients(params, cfg, tokens, targets) -> Check:
    """backward hooks far from the window: each hook's backward against its forward at offsets 0..2047."""
    found = hook_gradients(cfg, seed=int(np.abs(params["W_K"]).sum() * 1e6) % 2**31)
    return Check("backward hooks far from the window", found.ok, found.detail)


def _promises(params, cfg, tokens, targets) -> Check:
    """promises to the engine hold far out: far_past, linear_slope, tail_bound, and the streaming reader."""
    found = engine_promises(cfg, seed=int(np.abs(params["W_V"]).sum() * 1e6) % 2**31)
    return Check("promises to the engine hold far out", found.ok, found.detail)


def _engine(params, cfg, tokens, targets) -> Check:
    """engine equals the readable head: the trainer's forward and backward."""
    logits, cache = forward(params, cfg, tokens)
    fast, fast_cache = query_forward(params, cfg, tokens)
    dl = cross_entropy(logits, targets)[1]
    slow, quick = backward(params, cfg, cache, dl), query_backward(params, cfg, fast_cache, dl)
    worst = max([_rel(fast, logits)] + [_rel(quick[k], slow[k]) for k in params])
    return Check("engine equals the readable head", worst <= 1e-8, f"max relative difference {worst:.1e}")


def _stack(params, cfg, tokens, targets) -> Check:
    """a head in a stack equals the head alone: three heads trained as one stack, forward and backward."""
    name = "a head in a stack equals the head alone"
    rng = np.random.default_rng(17)
    heads = [params, random_params(cfg, rng), {k: -v for k, v in params.items()}]
    xs = np.stack([tokens, tokens[::-1], tokens])  # (3, B, n)
    together, cache = stack_forward(stack_params(heads), cfg, xs)
    dlogits = rng.normal(size=together.shape)  # (3, B, C)
    grads = stack_backward(stack_params(heads), cfg, cache, dlogits)
    worst, same = 0.0, True
    for i, h in enumerate(heads):
        one, one_cache = stack_forward(stack_params([h]), cfg, xs[i : i + 1])
        alone = stack_backward(stack_params([h]), cfg, one_cache, dlogits[i : i + 1])
        same &= bool(np.array_equal(together[i], one[0]))
        worst = max(worst, _rel(together[i], one[0]))
        for k in h:
            g, a = np.asarray(grads[k]), np.asarray(alone[k])
            if g.shape != (3, *np.shape(h[k])) or a.shape != (1, *np.shape(h[k])):
                return Check(name, False, f"the stack's gradient of {k!r} has shape {g.shape} for 3 heads of "
                                          f"{np.shape(h[k])} (alone: {a.shape})")  # fmt: skip
            err = _rel(g[i], a[0])
            if err > 1e-10:
                return Check(
                    name,
                    False,
                    f"head {i}'s gradient of {k!r} in a stack of 3 differs from the same head "
                    f"alone by {err:.1e} (relative): the backward mixes the heads of a stack",
                )
            same &= bool(np.array_equal(g[i], a[0]))
    return Check(name, worst <= 1e-12, "bit for bit, forward and backward" if same else f"max relative difference "
                 f"{worst:.1e}")  # fmt: skip


def _torch(params, cfg, tokens, targets) -> Check:
    """PyTorch autograd: the reference head's gradient, the scheme's terms written in torch."""
    name = "PyTorch autograd"
    try:
        import torch
    except ImportError:
        return Check(name, None, "PyTorch is not installed (pip install 'poskernels[bench]')")
    except Exception as err:  # noqa: BLE001 - a half-installed torch: the oracle is missing, not the scheme wrong
        return Check(name, None, f"PyTorch does not import ({type(err).__name__}: {err}); reinstall it to run this")
    try:
        x = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
        (x * x).sum().backward()
        if float(x.grad[0]) != 3.0:
            raise RuntimeError(f"d(x^2)/dx at 1.5 came out {float(x.grad[0])!r}")
    except Exception as err:  # noqa: BLE001 - torch imports but its autograd does not run: skipped, saying why
        return Check(name, None, f"PyTorch imports but its autograd does not run ({type(err).__name__}: {err}); "
                                 "reinstall it to run this")  # fmt: skip
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
