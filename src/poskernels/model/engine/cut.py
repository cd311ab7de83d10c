"""Theorem 3 (ii) as a reading rule: how far back an ALiBi head must be read for its dropped weight to be ``<= eps``.

A causal ALiBi head with slope ``s`` whose content scores lie in an interval of width ``W`` puts total weight at
most ``e^W e^{-s D'} / (1 - e^{-s})`` on the offsets ``r >= D'``, at every length.  ``W`` is read off the head's
own weights (:func:`content_width`); the cut ``D`` is the smallest offset whose bound at ``D' = D + 1`` is
``<= eps``, and a reader that keeps offsets ``0..D`` (:func:`poskernels.model.engine.stream.stream_logits` with ``eps``)
moves no logit by more than ``2 eps max_v |v W_O|``.

A learned bias that decreases from ``b(0) = 0`` has the same rule with its own tail bound in place of ALiBi's: the
scheme's ``tail_bound`` hook (Kerple's, :func:`poskernels.encodings.kerple.kerple_tail_bound`).  A head whose
tail sum diverges (a logarithmic Kerple head with ``r1 <= 1``) has no cut valid at every length and is read in
full (:func:`has_cut`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...encodings import SCHEMES
from ...errors import PosKernelsError, check_array, check_open_unit, check_positive_real, check_real
from ..config import HeadConfig
from ..embedding import token_table
from ..reading import PLAIN
from ..validate import check_params

__all__ = ["MAX_CUT", "Cut", "HeavyTail", "certified_cut", "check_eps", "content_width", "cut_offset", "has_cut"]


#: Farthest cut searched for a tail bound: a head that needs more is read in full.
MAX_CUT = 2**53


class HeavyTail(PosKernelsError):
    """A head with a finite tail bound (:func:`has_cut`) whose bound stays above ``eps`` out to :data:`MAX_CUT`:
    no cut at that ``eps``, so the head is read in full (a logarithmic Kerple head with ``r1 <= 1``)."""


@dataclass(frozen=True)
class Cut:
    """Theorem 3 (ii) applied to one ALiBi head: keep offsets ``0..D``, drop the rest.

    Attributes
    ----------
    W : float
        Content width: the range of ``q_u k_v^T / tau`` over every key token ``v`` (worst query token ``u``).
    s : float or None
        The slope (None for a head cut by its scheme's ``tail_bound``, which has none).
    D : int
        Largest offset kept: the smallest ``D >= 0`` with ``e^W e^{-s (D + 1)} / (1 - e^{-s}) <= eps``.
    tail_bound : float
        That bound: the total weight the exact reader puts on the dropped keys, at any length.
    logit_bound : float
        ``2 tail_bound max_v |v W_O|``: how far any logit of the cut reading is from the exact one.
    """

    W: float
    s: float | None
    D: int
    tail_bound: float
    logit_bound: float


def content_width(params: dict, cfg: HeadConfig, query_tokens) -> float:
    """The content width ``W`` of a head without code or rotation, read off its weights (Theorem 3).

    The query token ``u`` fixes ``q_u = token_table[u] W_Q``; a key's content score ``q_u k_v^T / tau`` then depends
    only on its token ``v``.  ``W`` is the largest range over ``v`` among the given query tokens, so every content
    score of every sequence ending in one of them lies in an interval of width ``W``.

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters.
    cfg : HeadConfig
        A head without a code or a rotation.
    query_tokens : array_like of int
        The query tokens the width holds for.

    Returns
    -------
    float
        ``W``.

    Raises
    ------
    PosKernelsError
        If the head has a code, a rotation or a logit scale that grows with the key count, or a query token is not
        a token id.

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
    if not isinstance(cfg, HeadConfig):
        raise PosKernelsError(f"cfg must be a HeadConfig; got {type(cfg).__name__}")
    check_params(params, cfg)
    scheme = SCHEMES[cfg.scheme]
    if scheme.rotary or scheme.code(params, cfg, np.zeros(1)) is not None:
        raise PosKernelsError(f"the content width is defined for heads without a code or rotation; got {cfg.scheme!r}")
    uq = np.unique(check_array("query_tokens", query_tokens, integer=True).ravel())  # 16.5, NaN, "a": refused
    if uq.size == 0 or uq.min() < 0 or uq.max() >= cfg.vocab:
        raise PosKernelsError(f"query_tokens must be token ids in [0, {cfg.vocab - 1}]; got {uq.tolist()[:20]}")
    if scheme.scale_grows:
        raise PosKernelsError(
            f"scheme {cfg.scheme!r} scales its logits with the key count (s log n): its content width grows with n, "
            "so no width (and no certified cut) holds at every length"
        )
    lam = scheme.logit_scale(cfg, PLAIN)  # the scheme's logit scale lambda, as trained
    with np.errstate(over="ignore", invalid="ignore"):  # weights past float64 make W inf or NaN: refused below
        tok = token_table(params, cfg)  # (V, d)
        c = (tok[uq] @ params["W_Q"]) @ (tok @ params["W_K"]).T / cfg.tau  # (U, V)
        c = c if lam == 1.0 else c * lam
        W = float((c.max(axis=1) - c.min(axis=1)).max())
    if not math.isfinite(W):
        raise PosKernelsError(
            f"the head's content width W is {W!r}: its embedding, query and key weights overflow float64 (or hold "
            "NaN, as a diverged head's do); W, the horizon and the certified cut need finite scores"
        )
    return W


def check_eps(eps) -> float:
    """The dropped weight a cut allows: a number in ``(0, 1)``, else :class:`PosKernelsError` quoting it.

    Parameters
    ----------
    eps : float
        The weight.

    Returns
    -------
    float
        ``eps``.

    Raises
    ------
    PosKernelsError
        If ``eps`` is not a finite number in ``(0, 1)``.

    Examples
    --------
    >>> check_eps(1e-12)
    1e-12
    >>> check_eps(1)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: eps must be a finite number in (0, 1) (the weight the cut may drop); got 1
    """
    return check_open_unit("eps", eps, "the weight the cut may drop")


def has_cut(params: dict, cfg: HeadConfig) -> bool:
    """Whether the head has a certified cut: its scheme's bias is exactly ``-s r`` with ``s > 0`` (its
    ``linear_slope``: ALiBi), or its scheme's ``tail_bound`` is finite for this head (Kerple with a light tail).

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters (a tail bound reads them).
    cfg : HeadConfig
        The head.

    Returns
    -------
    bool
        Whether :func:`certified_cut` accepts the head.

    Raises
    ------
    PosKernelsError
        If ``cfg`` is not a :class:`HeadConfig`.

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
    if not isinstance(cfg, HeadConfig):
        raise PosKernelsError(f"cfg must be a HeadConfig; got {type(cfg).__name__}")
    scheme = SCHEMES[cfg.scheme]
    if scheme.scale_grows:  # a logit scale s log n widens the content with n: no cut certified at a fixed width
        return False
    s = scheme.linear_slope(cfg)
    if s is not None:
        return s > 0
    bound = scheme.tail_bound(params, cfg)
    return bound is not None and math.isfinite(bound(0.0, MAX_CUT))


def certified_cut(params: dict, cfg: HeadConfig, query_tokens, eps: float) -> Cut:
    """Theorem 3 (ii) as a reading rule: the offsets an ALiBi head must read for dropped weight ``<= eps``.

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters.
    cfg : HeadConfig
        A head with a cut (:func:`has_cut`).
    query_tokens : array_like of int
        The query tokens the cut holds for (its content width's, :func:`content_width`).
    eps : float
        The attention weight the cut may drop, in ``(0, 1)``.

    Returns
    -------
    Cut
        The width ``W``, slope ``s``, last offset read ``D``, the bound on the dropped weight, and on a logit's error.

    Raises
    ------
    PosKernelsError
        If the head has no certified cut, or ``eps`` or the query tokens are refused.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> cut = certified_cut(init_params(cfg, np.random.default_rng(0)), cfg, [16], 1e-12)
    >>> cut.tail_bound <= 1e-12, cut.D == math.ceil((cut.W - math.log(1e-12 * -math.expm1(-0.5))) / 0.5) - 1
    (True, True)
    """
    if not isinstance(cfg, HeadConfig):
        raise PosKernelsError(f"cfg must be a HeadConfig; got {type(cfg).__name__}")
    check_params(params, cfg)  # before a tail bound reads them
    scheme = SCHEMES[cfg.scheme]
    s = scheme.linear_slope(cfg)
    if not (s is not None and s > 0) and (s is not None or scheme.tail_bound(params, cfg) is None):
        raise PosKernelsError(
            f"a certified cut exists for a head whose bias is exactly -s r with s > 0 (ALiBi) or whose tail bound is "
            f"finite (Kerple); got {cfg.scheme!r}"
        )
    eps = check_eps(eps)
    W = content_width(params, cfg, query_tokens)
    if s is None:  # a tail bound (a heavy tail is refused there, saying so)
        return _tail_cut(params, cfg, W, eps)
    D, tail = cut_offset(W, s, eps)
    return Cut(W, s, D, tail, _logit_bound(params, cfg, tail))


def _logit_bound(params: dict, cfg: HeadConfig, tail: float) -> float:
    """``2 tail max_v |v W_O|``: how far a logit of the cut reading is from the exact one (0 for no tail)."""
    with np.errstate(over="ignore", invalid="ignore"):  # refused below when past float64
        G = token_table(params, cfg) @ params["W_V"] @ params["W_O"]  # (V, C)
    g = float(np.abs(G).max())
    if not math.isfinite(g):
        raise PosKernelsError(f"the head's values E W_V W_O are {g!r}: its weights overflow float64 (or hold NaN)")
    return 2.0 * tail * g if tail else 0.0


def cut_offset(W: float, s: float, eps: float) -> tuple[int, float]:
    """The cut of Theorem 3 (ii) in closed form: the smallest ``D >= 0`` whose tail bound at ``D + 1`` is ``<= eps``.

    With ``m = 1 - e^{-s}`` and ``L = -ln(eps m)``, the bound ``e^W e^{-s (D + 1)} / m <= eps`` holds exactly when
    ``s (D + 1) >= W + L``: ``D = ceil((W + L) / s) - 1`` (at least 0).  No search, so no loop to hang: the quotient
    and the exponent ``W - s (D + 1)`` are computed in exact rational arithmetic (``W / s`` may be ``10^300``, where
    ``D + 1`` and ``D`` are the same float), and ``W + L`` is raised by ``2^-48 (L + 1)``, many times the rounding of
    ``L``, of the exponent and of ``exp`` (about ``4 (L + 1) 2^-52``), so the float bound returned is ``<= eps``
    whatever the inputs, and ``D`` is the smallest such offset but within ``2^-48`` of a whole step.

    Parameters
    ----------
    W : float
        Content width, finite and ``>= 0``.
    s : float
        Slope, finite and ``> 0``.
    eps : float
        Dropped weight allowed, in ``(0, 1)``.

    Returns
    -------
    D : int
        The largest offset kept (a Python int: ``10^300`` is returned exactly).
    tail : float
        ``e^W e^{-s (D + 1)} / (1 - e^{-s})``, the weight beyond ``D``, at most ``eps``.

    Examples
    --------
    >>> D, tail = cut_offset(20.0, 0.5, 1e-12)
    >>> D, tail <= 1e-12, cut_offset(20.0, 0.5, tail * 1.000001)[0]  # a looser eps gives the same cut
    (97, True, 97)
    >>> D, tail = cut_offset(1e20, 0.5, 1e-12)  # W - s (D + 1) cancels in floats; here it is exact
    >>> D, tail <= 1e-12
    (200000000000000000057, True)
    """
    W = check_real("the content width W", W, 0)
    s, eps = check_positive_real("the slope s", s), check_eps(eps)
    m = -math.expm1(-s)  # 1 - e^{-s} in (0, 1]
    L = -(math.log(eps) + math.log(m))  # > 0; the sum of logs, since eps m may underflow to 0
    need = Fraction(W) + Fraction(L) + Fraction(L + 1.0) / 2**48  # s (D + 1) must reach it
    D = max(0, math.ceil(need / Fraction(s)) - 1)
    exponent = float(Fraction(W) - Fraction(s) * (D + 1))  # exact, then rounded once
    return D, math.exp(exponent - math.log(m))  # e^x / m without the underflow of e^x when m is tiny


def _tail_cut(params: dict, cfg: HeadConfig, W: float, eps: float) -> Cut:
    """The smallest ``D`` whose tail bound at ``D + 1`` is ``<= eps`` (the bound decreases in ``D``): doubling, then
    bisection."""
    bound = SCHEMES[cfg.scheme].tail_bound(params, cfg)
    if not bound(W, MAX_CUT) <= eps:
        raise HeavyTail(
            f"scheme {cfg.scheme!r}: this head's tail bound stays above eps = {eps!r} out to offset {MAX_CUT} "
            "(a heavy tail: a logarithmic Kerple head with r1 <= 1 has none); read it in full"
        )
    hi = 1
    while hi < MAX_CUT and bound(W, hi) > eps:  # at most 53 doublings: MAX_CUT = 2^53 passed the check above
        hi *= 2
    lo = hi // 2 if hi > 1 else 0  # bound(lo) > eps or lo == 0
    while hi - lo > 1:  # at most 53 halvings
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if bound(W, mid) > eps else (lo, mid)
    D = hi - 1  # the kept offsets 0..D: D + 1 = hi is the first offset whose bound is <= eps
    tail = bound(W, D + 1)
    return Cut(W, None, D, tail, _logit_bound(params, cfg, tail))
