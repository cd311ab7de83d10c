"""Theorem 3 (ii) as a reading rule: how far back an ALiBi head must be read for its dropped weight to be ``<= eps``.

A causal ALiBi head with slope ``s`` whose content scores lie in an interval of width ``W`` puts total weight at
most ``e^W e^{-s D'} / (1 - e^{-s})`` on the offsets ``r >= D'``, at every length.  ``W`` is read off the head's
own weights (:func:`content_width`); the cut ``D`` is the smallest offset whose bound at ``D' = D + 1`` is
``<= eps``, and a reader that keeps offsets ``0..D`` (:func:`poskernels.model.engine.stream.stream_logits` with ``eps``)
moves no logit by more than ``2 eps max_v |v W_O|``.

A learned bias that decreases from ``b(0) = 0`` has the same rule with its own tail bound in place of ALiBi's: the
scheme's ``tail_bound`` hook (Kerple's, :func:`poskernels.encodings.beyond.kerple_tail_bound`).  A head whose
tail sum diverges (a logarithmic Kerple head with ``r1 <= 1``) has no cut valid at every length and is read in
full (:func:`has_cut`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...encodings import SCHEMES
from ...errors import PosKernelsError, check_positive_real
from ...theory.alibi import alibi_tail_bound
from ..config import HeadConfig
from ..embedding import token_table
from ..reading import PLAIN

__all__ = ["MAX_CUT", "Cut", "certified_cut", "content_width", "has_cut"]


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
        The slope (NaN for a head cut by its scheme's ``tail_bound``).
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
    scheme = SCHEMES[cfg.scheme]
    if scheme.rotary or scheme.code(params, cfg, np.zeros(1)) is not None:
        raise PosKernelsError(f"the content width is defined for heads without a code or rotation; got {cfg.scheme!r}")
    uq = np.unique(np.asarray(query_tokens, dtype=np.int64).ravel())
    if uq.size == 0 or uq.min() < 0 or uq.max() >= cfg.vocab:
        raise PosKernelsError(f"query_tokens must be token ids in [0, {cfg.vocab - 1}]; got {uq.tolist()}")
    tok = token_table(params, cfg)  # (V, d)
    c = (tok[uq] @ params["W_Q"]) @ (tok @ params["W_K"]).T / cfg.tau  # (U, V)
    lam = scheme.logit_scale(cfg, PLAIN)  # the scheme's logit scale lambda, as trained
    c = c if lam == 1.0 else c * lam
    return float((c.max(axis=1) - c.min(axis=1)).max())


def has_cut(params: dict, cfg: HeadConfig) -> bool:
    """Whether the head has a certified cut: its scheme's bias is exactly ``-s r`` with ``s > 0`` (its
    ``linear_slope``: ALiBi), or its scheme's ``tail_bound`` is finite for this head (Kerple with a light tail).

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="kerple_log")
    >>> p = init_params(cfg, np.random.default_rng(0))  # r1 = 1 at its start: tails like 1 / r, no cut
    >>> has_cut(p, cfg), has_cut({**p, "kerple_a1": np.log([2.0])}, cfg), has_cut({}, HeadConfig(scheme="alibi"))
    (False, True, True)
    >>> has_cut({}, HeadConfig(scheme="nope")), has_cut({}, HeadConfig(scheme="t5"))
    (False, False)
    """
    scheme = SCHEMES[cfg.scheme]
    s = scheme.linear_slope(cfg)
    if s is not None:
        return s > 0
    bound = scheme.tail_bound(params, cfg)
    return bound is not None and math.isfinite(bound(0.0, MAX_CUT))


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
    scheme = SCHEMES[cfg.scheme]
    s = scheme.linear_slope(cfg)
    if not (s is not None and s > 0) and (s is not None or scheme.tail_bound(params, cfg) is None):
        raise PosKernelsError(
            f"a certified cut exists for a head whose bias is exactly -s r with s > 0 (ALiBi) or whose tail bound is "
            f"finite (Kerple); got {cfg.scheme!r}"
        )
    eps = check_positive_real("eps", eps)
    if eps >= 1:
        raise PosKernelsError(f"eps must lie in (0, 1); got {eps!r}")
    W = content_width(params, cfg, query_tokens)
    if s is None:  # a tail bound (a heavy tail is refused there, saying so)
        return _tail_cut(params, cfg, W, eps)
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
    bound = SCHEMES[cfg.scheme].tail_bound(params, cfg)
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
