"""Kerple's two relative biases (Chi et al. 2022): the logarithmic ``-r1 log(1 + r2 r)`` and the power ``-r1 r^r2``.

Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation": the logarithmic bias
``-r1 log(1 + r2 r)`` and the power bias ``-r1 r^r2`` (``0 < r2 <= 2``), ``r1, r2 > 0``, each a function of the
causal offset ``r = t - j`` added to the logit of query ``t`` and key ``j``.  An offset ``r < 0`` (a key after its
query, which a causal head never scores) is read as ``0``, like every relative bias of the registry.  The forward
formulas come first, then Kerple's certified tail, then the two schemes whose hooks evaluate them every training
step (:class:`KerpleLog`, :class:`KerplePower`, each with its hand-written backward), so the formulas take arrays
as they come and check nothing; the checked forms, with the properties the paper states, are in
:mod:`poskernels.theory.kerple_fire`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_array, check_positive_real
from .scheme import Scheme
from .torch_terms import tensor, torch_module

#: A parameter given as one number or as one per head (an array broadcast against the offsets).
Scalars = np.ndarray | float

__all__ = ["KerpleLog", "KerplePower", "kerple_log_bias", "kerple_power_bias", "kerple_tail_bound"]


def kerple_log_bias(r: ArrayLike, r1: Scalars, r2: Scalars) -> np.ndarray:
    """Kerple's logarithmic bias ``-r1 log(1 + r2 max(r, 0))`` (broadcast over ``r``, ``r1``, ``r2``; Chi et al. 2022).

    Parameters
    ----------
    r : array_like
        Offsets ``r = t - j``; negative ones (keys after the query) are read as 0.
    r1, r2 : float or ndarray
        The head's two positive parameters, broadcast against `r`.

    Returns
    -------
    ndarray
        The bias, of the broadcast shape.  The arguments are not checked (the head's hot path calls it;
        :mod:`poskernels.theory.kerple_fire` checks them).

    Examples
    --------
    >>> kerple_log_bias([0, 1, 3], 2.0, 1.0).round(4).tolist()
    [-0.0, -1.3863, -2.7726]
    """
    rho = np.maximum(np.asarray(r, dtype=float), 0.0)
    return -r1 * np.log1p(r2 * rho)


def kerple_power_bias(r: ArrayLike, r1: Scalars, r2: Scalars) -> np.ndarray:
    """Kerple's power bias ``-r1 max(r, 0)^r2`` (broadcast over ``r``, ``r1``, ``r2``; Chi et al. 2022).

    Parameters
    ----------
    r : array_like
        Offsets ``r = t - j``; negative ones are read as 0.
    r1, r2 : float or ndarray
        The scale and the power (CPD for ``0 < r2 <= 2``), broadcast against `r`.

    Returns
    -------
    ndarray
        The bias, of the broadcast shape.  The arguments are not checked (the head's hot path calls it;
        :mod:`poskernels.theory.kerple_fire` checks them).

    Examples
    --------
    >>> kerple_power_bias([0, 1, 4], 0.5, 1.5).tolist()
    [-0.0, -0.5, -4.0]
    """
    rho = np.maximum(np.asarray(r, dtype=float), 0.0)
    return -r1 * rho**r2


def kerple_tail_bound(kind: str, W: float, r1: float, r2: float, D: float) -> float:
    """At every length, the weight a Kerple head puts on offsets ``r >= D``, at most (the tail of Theorem 3 (ii)).

    With content scores in an interval of width ``W`` and a bias with ``b(0) = 0`` that decreases in ``r``, the
    weight on ``r >= D`` is at most ``e^W sum_{r >= D} e^{b(r)} <= e^W (e^{b(D)} + int_D^inf e^{b(x)} dx)``
    (:mod:`poskernels.theory.kerple_fire` states it for both kernels); the scheme's ``tail_bound`` hook.

    Parameters
    ----------
    kind : {"kerple_log", "kerple_power"}
        The bias.
    W : float
        Width of the interval holding the content scores, ``>= 0``.
    r1, r2 : float
        The head's parameters, positive.
    D : float
        Offset, ``>= 0``.

    Returns
    -------
    float
        ``e^W (e^{b(D)} + int_D^inf e^{b(x)} dx)``; ``inf`` where the integral diverges (the logarithmic bias with
        ``r1 <= 1``).

    Raises
    ------
    PosKernelsError
        If `kind` is not one of the two, `W` or `D` is negative, or `r1`, `r2` is not positive.

    Examples
    --------
    >>> f"{kerple_tail_bound('kerple_log', 2.0, 3.0, 1.0, 1000):.3g}"  # r1 = 3: tails like r^-3
    '3.7e-06'
    >>> kerple_tail_bound("kerple_log", 2.0, 0.8, 1.0, 1000)  # r1 <= 1: the tail sum diverges
    inf
    >>> f"{kerple_tail_bound('kerple_power', 0.0, 0.5, 1.0, 60):.3g}"  # ALiBi's e^{-sD} (1 + 1/s) at s = 1/2
    '2.81e-13'
    """
    if kind not in ("kerple_log", "kerple_power"):
        raise PosKernelsError(f"kind must be one of kerple_log, kerple_power; got {kind!r}")
    W = float(check_array("the content width W", W))
    if W < 0:
        raise PosKernelsError(f"the content width W must be >= 0; got {W!r}")
    r1, r2 = check_positive_real("r1", r1), check_positive_real("r2", r2)
    D = float(check_array("the offset D", D))
    if D < 0:
        raise PosKernelsError(f"the offset D must be >= 0 (causal: r = t - j); got {D!r}")
    if kind == "kerple_log":
        if r1 <= 1.0:
            return math.inf
        log_head = -r1 * math.log1p(r2 * D)  # log e^{b(D)}
        log_tail = log_head + math.log1p((1.0 + r2 * D) / (r2 * (r1 - 1.0)))
    else:
        log_head = -r1 * D**r2
        # int_D^inf e^{-r1 x^r2} dx = Gamma(1/r2, r1 D^r2) / (r2 r1^{1/r2}), in logs (Gamma(1/r2) overflows early)
        from scipy.special import gammaincc  # here: scipy.special costs ~0.15 s at the start of every command

        a = 1.0 / r2
        Q = float(gammaincc(a, r1 * D**r2))  # the regularized upper incomplete gamma
        log_int = math.lgamma(a) + math.log(Q) - math.log(r2) - a * math.log(r1) if Q > 0 else -math.inf
        top = max(log_head, log_int)
        log_tail = top + math.log(math.exp(log_head - top) + math.exp(log_int - top))
    if W + log_tail > 700:  # past float64: vacuous (a weight is at most 1)
        return math.inf
    return math.exp(W + log_tail)


class KerpleLog(Scheme):
    """Kerple's logarithmic bias ``-r1 log(1 + r2 r)`` (Chi et al. 2022), ``r1, r2 > 0`` learned.

    Kept positive by the parametrisation ``r1 = e^{a1}``, ``r2 = e^{a2}`` (the paper clips at ``10^-2``
    instead).  The paper draws each of its many heads' ``r1 ~ U(0, 2)``, ``r2 ~ U(0, 1)``; our one head starts
    at the middle of those ranges, ``r1 = 1``, ``r2 = 1/2``, the same for every seed.  The bias is a
    conditionally positive definite kernel of the offset
    (:func:`poskernels.theory.kerple_fire.kerple_log_kernel`).
    """

    name, title = "kerple_log", "Kerple, logarithmic"
    article = "Chi et al. 2022, KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"
    paper, year, colour = "Chi et al.", 2022, "#882255"
    where, relative, defined_everywhere, in_article = "score", True, True, False
    bias_reads_query = False  # of the offset and r1, r2 alone

    def init(self, cfg, rng):
        return {"kerple_a1": np.zeros(1), "kerple_a2": np.full(1, np.log(0.5))}  # (1,) each: log r1, log r2

    def bias(self, params, cfg, q, r):
        return kerple_log_bias(r, np.exp(params["kerple_a1"]), np.exp(params["kerple_a2"]))  # (M, n) or (n, n)

    def bias_backward(self, dz, params, cfg, q, r):
        r1, r2 = np.exp(params["kerple_a1"]), np.exp(params["kerple_a2"])  # (M, 1) each
        rho = np.maximum(r, 0.0)  # (n,)
        b = -r1 * np.log1p(r2 * rho)  # (M, n): db/da1 = r1 db/dr1 = b
        dbda2 = -r1 * r2 * rho / (1.0 + r2 * rho)  # (M, n): r2 db/dr2
        g = dz.sum(axis=1)  # (M, n) summed over query tokens (the bias does not read the query)
        return None, {"kerple_a1": (g * b).sum(-1)[:, None], "kerple_a2": (g * dbda2).sum(-1)[:, None]}

    def tail_parameters(self, params):  # one head's r1 = e^{a1}, r2 = e^{a2}
        return {"r1": float(np.exp(params["kerple_a1"][0])), "r2": float(np.exp(params["kerple_a2"][0]))}

    def tail_bound(self, params, cfg):  # finite only when r1 > 1 (tails like r^-r1)
        r = self.tail_parameters(params)
        return lambda W, D: kerple_tail_bound("kerple_log", W, r["r1"], r["r2"], D)

    def reference_bias(self, tp, cfg, q, r, dtype):  # in torch: -r1 log(1 + r2 r), r1 = e^{a1}, r2 = e^{a2}
        torch = torch_module()
        r1, r2 = torch.exp(tp["kerple_a1"])[:, :, None], torch.exp(tp["kerple_a2"])[:, :, None]  # (M, 1, 1) each
        return -r1 * torch.log(1 + r2 * tensor(r, dtype))  # (M, 1, n)


class KerplePower(Scheme):
    """Kerple's power bias ``-r1 r^r2`` (Chi et al. 2022), ``r1 > 0`` and ``0 < r2 <= 2`` learned.

    Kept in range by the parametrisation ``r1 = e^{a1}``, ``r2 = 2 sigma(a2)`` (the paper clips instead).  The
    paper draws each of its heads' ``r1 ~ U(0, 1)``, ``r2 ~ U(0, 2)``; our one head starts at the middle of
    those ranges, ``r1 = 1/2``, ``r2 = 1`` (ALiBi's bias ``-r/2`` at the article's slope).
    Conditionally positive definite for ``r2 <= 2``
    (:func:`poskernels.theory.kerple_fire.kerple_power_kernel`).
    """

    name, title = "kerple_power", "Kerple, power"
    article = "Chi et al. 2022, KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"
    paper, year, colour = "Chi et al.", 2022, "#44aa99"
    where, relative, defined_everywhere, in_article = "score", True, True, False
    bias_reads_query = False  # of the offset and r1, r2 alone

    def init(self, cfg, rng):
        return {"kerple_a1": np.full(1, np.log(0.5)), "kerple_a2": np.zeros(1)}  # (1,) each: log r1, logit(r2/2)

    @staticmethod
    def _exponent(params):
        return 2.0 / (1.0 + np.exp(-params["kerple_a2"]))  # r2 = 2 sigma(a2), in (0, 2)

    def bias(self, params, cfg, q, r):
        return kerple_power_bias(r, np.exp(params["kerple_a1"]), self._exponent(params))  # (M, n) or (n, n)

    def bias_backward(self, dz, params, cfg, q, r):
        r1, r2 = np.exp(params["kerple_a1"]), self._exponent(params)  # (M, 1) each
        rho = np.maximum(r, 0.0)  # (n,)
        b = -r1 * rho**r2  # (M, n): db/da1 = b
        log_rho = np.log(np.where(rho > 0, rho, 1.0))  # (n,) r^r2 log r -> 0 at r = 0
        dbda2 = b * log_rho * r2 * (1.0 - r2 / 2.0)  # (M, n): db/dr2 dr2/da2
        g = dz.sum(axis=1)  # (M, n)
        return None, {"kerple_a1": (g * b).sum(-1)[:, None], "kerple_a2": (g * dbda2).sum(-1)[:, None]}

    def tail_parameters(self, params):  # one head's r1 = e^{a1}, r2 = 2 sigma(a2)
        return {"r1": float(np.exp(params["kerple_a1"][0])), "r2": float(self._exponent(params)[0])}

    def tail_bound(self, params, cfg):  # finite for every r1, r2 > 0
        r = self.tail_parameters(params)
        return lambda W, D: kerple_tail_bound("kerple_power", W, r["r1"], r["r2"], D)

    def reference_bias(self, tp, cfg, q, r, dtype):  # in torch: -r1 r^r2, r1 = e^{a1}, r2 = 2 sigma(a2)
        torch = torch_module()
        r1, r2 = torch.exp(tp["kerple_a1"])[:, :, None], 2 * torch.sigmoid(tp["kerple_a2"])[:, :, None]  # (M, 1, 1)
        rt = tensor(r, dtype)  # (n,) offsets >= 0; at r = 0 the term is 0 and so is its gradient
        safe = torch.where(rt > 0, rt, torch.ones_like(rt))
        return torch.where(rt > 0, -r1 * torch.exp(r2 * torch.log(safe)), torch.zeros_like(rt))  # (M, 1, n)
