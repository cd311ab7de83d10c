"""Theorem 3 (ii) as a reading rule: how far back an ALiBi head must be read for its dropped weight to be ``<= eps``.

A causal ALiBi head with slope ``s`` whose content scores lie in an interval of width ``W`` puts total weight at
most ``e^W e^{-s D'} / (1 - e^{-s})`` on the offsets ``r >= D'``, at every length.  ``W`` is read off the head's
own weights (:func:`content_width`); the cut ``D`` is the smallest offset whose bound at ``D' = D + 1`` is
``<= eps``, and a reader that keeps offsets ``0..D`` (:func:`poskernels.model.stream.stream_logits` with ``eps``)
moves no logit by more than ``2 eps max_v |v W_O|``.

A learned bias that decreases from ``b(0) = 0`` has the same rule with its own tail bound in place of ALiBi's:
:data:`CUT_TAILS` (Kerple, :func:`poskernels.theory.beyond.kerple_tail_bound`).  A head whose tail sum diverges (a
logarithmic Kerple head with ``r1 <= 1``) has no cut valid at every length and is read in full
(:func:`has_cut`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import PosKernelsError, check_positive_real
from ..theory.alibi import alibi_tail_bound
from ..theory.beyond import kerple_tail_bound
from .config import HeadConfig
from .head import token_table
from .schemes import HEAD_SCHEMES

__all__ = ["CUT_SLOPES", "CUT_TAILS", "Cut", "certified_cut", "content_width", "has_cut"]

#: Schemes with a certified cut (Theorem 3): name -> the slope ``s`` of the bias ``-s r``.
CUT_SLOPES: dict[str, Callable[[HeadConfig], float]] = {"alibi": lambda cfg: cfg.alibi_slope}


def _kerple_tail(kind: str, r2_of: Callable) -> Callable:
    def tail(params: dict, cfg: HeadConfig) -> Callable[[float, float], float]:
        r1, r2 = float(np.exp(params["kerple_a1"][0])), float(r2_of(params["kerple_a2"][0]))
        return lambda W, D: kerple_tail_bound(kind, W, r1, r2, D)

    return tail


#: Schemes cut by the tail bound of their learned bias: name -> ``(params, cfg) -> ((W, D) -> bound)``, the weight
#: on offsets ``r >= D`` at every length, at most (``inf`` where the tail sum diverges).
CUT_TAILS: dict[str, Callable] = {
    "kerple_log": _kerple_tail("kerple_log", np.exp),
    "kerple_power": _kerple_tail("kerple_power", lambda a: 2.0 / (1.0 + np.exp(-a))),
}
#: Farthest cut searched for a tail bound: a head that needs more is read in full.
MAX_CUT = 2**53


@dataclass(frozen=True)
class Cut:
    """Theorem 3 (ii) applied to one ALiBi head: keep offsets ``0..D``, drop the rest.

    Attributes
    ----------
    W : float
        Content width: the range of ``q_u k_v^T / tau`` over every key token ``v`` (worst query token ``u``).
    s : float
        The slope (NaN for a head of :data:`CUT_TAILS`).
    D : int
        Largest offset kept: the smallest ``D >= 0`` with ``e^W e^{-s (D + 1)} / (1 - e^{-s}) <= eps``.
    tail_bound : float
        That bound: the total weight the exact reader puts on the dropped keys, at any length.
    logit_bound : float
        ``2 tail_bound max_v |v W_O|``: how far any logit of the cut reading is from the exact one.
    """

    W: float
    s: float
    D: int
    tail_bound: float
    logit_bound: float


def content_width(params: dict, cfg: HeadConfig, query_tokens) -> float:
    """The content width ``W`` of a head without code or rotation, read off its weights (Theorem 3).

    The query token ``u`` fixes ``q_u = token_table[u] W_Q``; a key's content score ``q_u k_v^T / tau`` then depends
    only on its token ``v``.  ``W`` is the largest range over ``v`` among the given query tokens, so every content
    score of every sequence ending in one of them lies in an interval of width ``W``.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> E = token_table(p, cfg)  # (V, d) every token's embedding
    >>> c = (E[16] @ p["W_Q"]) @ (E @ p["W_K"]).T / cfg.tau
    >>> bool(np.isclose(content_width(p, cfg, [16]), c.max() - c.min()))
    True
    """
    scheme = HEAD_SCHEMES[cfg.scheme]
    if scheme.rotary or scheme.code(params, cfg, np.zeros(1)) is not None:
        raise PosKernelsError(f"the content width is defined for heads without a code or rotation; got {cfg.scheme!r}")
    uq = np.unique(np.asarray(query_tokens, dtype=np.int64).ravel())
    if uq.size == 0 or uq.min() < 0 or uq.max() >= cfg.vocab:
        raise PosKernelsError(f"query_tokens must be token ids in [0, {cfg.vocab - 1}]; got {uq.tolist()}")
    tok = token_table(params, cfg)  # (V, d)
    c = (tok[uq] @ params["W_Q"]) @ (tok @ params["W_K"]).T / cfg.tau  # (U, V)
    return float((c.max(axis=1) - c.min(axis=1)).max())


def has_cut(params: dict, cfg: HeadConfig) -> bool:
    """Whether the head has a certified cut: an ALiBi head, or a head of :data:`CUT_TAILS` whose tail sum converges.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="kerple_log")
    >>> p = init_params(cfg, np.random.default_rng(0))  # r1 = 1 at its start: tails like 1 / r, no cut
    >>> has_cut(p, cfg), has_cut({**p, "kerple_a1": np.log([2.0])}, cfg)
    (False, True)
    """
    if cfg.scheme in CUT_SLOPES:
        return True
    return cfg.scheme in CUT_TAILS and math.isfinite(CUT_TAILS[cfg.scheme](params, cfg)(0.0, MAX_CUT))


def certified_cut(params: dict, cfg: HeadConfig, query_tokens, eps: float) -> Cut:
    """Theorem 3 (ii) as a reading rule: the offsets an ALiBi head must read for dropped weight ``<= eps``.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> cut = certified_cut(init_params(cfg, np.random.default_rng(0)), cfg, [16], 1e-12)
    >>> cut.tail_bound <= 1e-12, cut.D == math.ceil((cut.W - math.log(1e-12 * -math.expm1(-0.5))) / 0.5) - 1
    (True, True)
    """
    if cfg.scheme not in CUT_SLOPES and cfg.scheme not in CUT_TAILS:
        raise PosKernelsError(
            f"a certified cut exists for {', '.join([*CUT_SLOPES, *CUT_TAILS])} heads only; got {cfg.scheme!r}"
        )
    eps = check_positive_real("eps", eps)
    if eps >= 1:
        raise PosKernelsError(f"eps must lie in (0, 1); got {eps!r}")
    if cfg.scheme in CUT_TAILS:
        return _tail_cut(params, cfg, content_width(params, cfg, query_tokens), eps)
    W, s = content_width(params, cfg, query_tokens), CUT_SLOPES[cfg.scheme](cfg)
    # e^W e^{-s (D+1)} / (1 - e^{-s}) <= eps  <=>  D + 1 >= (W - ln(eps (1 - e^{-s}))) / s
    D = max(0, math.ceil((W - math.log(eps * -math.expm1(-s))) / s) - 1)
    while alibi_tail_bound(W, s, D + 1) > eps:  # guard the rounding of the closed form
        D += 1
    tail = alibi_tail_bound(W, s, D + 1)
    G = token_table(params, cfg) @ params["W_V"] @ params["W_O"]  # (V, C)
    return Cut(W, s, D, tail, 2.0 * tail * float(np.abs(G).max()))


def _tail_cut(params: dict, cfg: HeadConfig, W: float, eps: float) -> Cut:
    """The smallest ``D`` whose tail bound at ``D + 1`` is ``<= eps`` (the bound decreases in ``D``): doubling, then
    bisection."""
    bound = CUT_TAILS[cfg.scheme](params, cfg)
    if not bound(W, MAX_CUT) <= eps:
        raise PosKernelsError(
            f"scheme {cfg.scheme!r}: this head's tail bound stays above eps = {eps!r} out to offset {MAX_CUT} "
            "(a heavy tail: a logarithmic Kerple head with r1 <= 1 has none); read it in full"
        )
    hi = 1
    while bound(W, hi) > eps:
        hi *= 2
    lo = hi // 2 if hi > 1 else 0  # bound(lo) > eps or lo == 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if bound(W, mid) > eps else (lo, mid)
    D = hi - 1  # the kept offsets 0..D: D + 1 = hi is the first offset whose bound is <= eps
    tail = bound(W, D + 1)
    G = token_table(params, cfg) @ params["W_V"] @ params["W_O"]  # (V, C)
    return Cut(W, math.nan, D, tail, 2.0 * tail * float(np.abs(G).max()))
