"""Theorem 3 (ii) as a reading rule: how far back an ALiBi head must be read for its dropped weight to be ``<= eps``.

A causal ALiBi head with slope ``s`` whose content scores lie in an interval of width ``W`` puts total weight at
most ``e^W e^{-s D'} / (1 - e^{-s})`` on the offsets ``r >= D'``, at every length.  ``W`` is read off the head's
own weights (:func:`content_width`); the cut ``D`` is the smallest offset whose bound at ``D' = D + 1`` is
``<= eps``, and a reader that keeps offsets ``0..D`` (:func:`poskernels.model.engine.stream.stream_logits` with ``eps``)
moves no logit by more than ``2 eps max_v |v W_O|``.
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

__all__ = ["Cut", "certified_cut", "content_width", "has_cut"]


def has_cut(cfg: HeadConfig) -> bool:
    """Whether Theorem 3's certified cut applies: the scheme's bias is exactly ``-s r`` with ``s > 0``.

    >>> has_cut(HeadConfig(scheme="alibi")), has_cut(HeadConfig(scheme="nope")), has_cut(HeadConfig(scheme="t5"))
    (True, False, False)
    """
    s = SCHEMES[cfg.scheme].linear_slope(cfg)
    return s is not None and s > 0


@dataclass(frozen=True)
class Cut:
    """Theorem 3 (ii) applied to one ALiBi head: keep offsets ``0..D``, drop the rest.

    Attributes
    ----------
    W : float
        Content width: the range of ``q_u k_v^T / tau`` over every key token ``v`` (worst query token ``u``).
    s : float
        The slope.
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
    if not has_cut(cfg):
        cut = ", ".join(n for n, s in SCHEMES.items() if s.linear_slope(HeadConfig(scheme=n)))
        raise PosKernelsError(
            f"a certified cut exists for heads whose bias is exactly -s r with s > 0 ({cut}); got {cfg.scheme!r}"
        )
    eps = check_positive_real("eps", eps)
    if eps >= 1:
        raise PosKernelsError(f"eps must lie in (0, 1); got {eps!r}")
    W, s = content_width(params, cfg, query_tokens), SCHEMES[cfg.scheme].linear_slope(cfg)
    # e^W e^{-s (D+1)} / (1 - e^{-s}) <= eps  <=>  D + 1 >= (W - ln(eps (1 - e^{-s}))) / s
    D = max(0, math.ceil((W - math.log(eps * -math.expm1(-s))) / s) - 1)
    while alibi_tail_bound(W, s, D + 1) > eps:  # guard the rounding of the closed form
        D += 1
    tail = alibi_tail_bound(W, s, D + 1)
    G = token_table(params, cfg) @ params["W_V"] @ params["W_O"]  # (V, C)
    return Cut(W, s, D, tail, 2.0 * tail * float(np.abs(G).max()))
