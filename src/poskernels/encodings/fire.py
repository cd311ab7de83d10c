"""FIRE's relative bias (Li et al. 2023): an MLP of the offset, interpolated by the query's position.

Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context Transformers":
``f(psi(r) / psi(max(L, t)))`` with ``psi(x) = log(c x + 1)`` and ``f`` a small MLP, added to the logit of query
``t`` and key ``j`` at the causal offset ``r = t - j``.  An offset ``r < 0`` (a key after its query, which a causal
head never scores) is read as ``0``, like every relative bias of the registry.  The forward formulas come first,
then the schemes whose hooks evaluate them every training step (:class:`Fire`, :class:`FireC1`, with the
hand-written backward), so the formulas take arrays as they come and check nothing; the checked forms, with the
properties the paper states, are in :mod:`poskernels.theory.kerple_fire`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError
from .scheme import Scheme
from .torch_terms import tensor, torch_module

#: A parameter given as one number or as one per head (an array broadcast against the offsets).
Scalars = np.ndarray | float

__all__ = ["Fire", "FireC1", "fire_bias", "fire_features"]


def fire_features(r: ArrayLike, t: Scalars, c: Scalars, L: Scalars) -> np.ndarray:
    """FIRE's input to its MLP: ``u = psi(max(r, 0)) / psi(max(L, t))``, ``psi(x) = log(c x + 1)`` (Li et al. 2023).

    ``u`` lies in ``[0, 1]`` for every causal offset ``0 <= r <= t`` once ``t >= L`` (the progressive
    interpolation: the farthest key of a query maps to 1 whatever its length).

    Parameters
    ----------
    r : array_like
        Offsets ``r = t - j``; negative ones are read as 0.
    t : float or ndarray
        The query's position, broadcast against `r`.
    c : float or ndarray
        ``psi``'s positive scale.
    L : float or ndarray
        The threshold below which the normalizer is ``psi(L)``.

    Returns
    -------
    ndarray
        ``u``, of the broadcast shape.  The arguments are not checked (the head's hot path calls it;
        :mod:`poskernels.theory.kerple_fire` checks them).

    Examples
    --------
    >>> fire_features([0, 9, 99], 99, 0.1, 20.0).round(4).tolist()
    [0.0, 0.2687, 1.0]
    """
    rho = np.maximum(np.asarray(r, dtype=float), 0.0)
    return np.log1p(c * rho) / np.log1p(c * np.maximum(L, t))


def fire_bias(u: ArrayLike, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """FIRE's MLP ``f(u) = sum_h w2_h relu(w1_h u + b1_h)`` at inputs ``u``, shape ``u.shape``.

    The weights are ``(..., H)``, with the leading axes of ``u``'s leading axes (one MLP per head); the output
    layer has no constant: a constant added to every logit of a query leaves its softmax unchanged.

    Parameters
    ----------
    u : array_like, shape (..., n)
        Inputs, as :func:`fire_features` gives them.
    w1, b1, w2 : ndarray, shape (..., H)
        The hidden layer's weights and constants and the output weights.

    Returns
    -------
    ndarray, shape (..., n)
        ``f(u)``.  The arguments are not checked (the head's hot path calls it;
        :mod:`poskernels.theory.kerple_fire` checks them).

    Examples
    --------
    >>> fire_bias(np.array([0.0, 0.5, 1.0]), np.array([1.0, -1.0]), np.array([0.0, 0.5]), np.array([2.0, 1.0]))
    array([0.5, 1. , 2. ])
    """
    u = np.asarray(u, dtype=float)
    if np.ndim(w1) == 1:  # one MLP at many inputs (a filing's (n, n) scores): _one_mlp, the same bits
        return _one_mlp(u, w1, b1, w2)
    h = np.maximum(u[..., None] * w1[..., None, :] + b1[..., None, :], 0.0)  # (..., n, H)
    return (h * w2[..., None, :]).sum(-1)  # (..., n)


#: Inputs a block of :func:`_one_mlp`: its ``(block, H)`` hidden layer stays in cache.
_BLOCK = 2048


def _one_mlp(u: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """:func:`fire_bias` of one MLP (weights ``(H,)``), a block of inputs at a time, in place: each number is the
    same product, sum, ReLU and product, and each output the same sum over a contiguous row of ``H`` (so the same
    bits), at half the time on a filing's ``(n, n)`` scores, whose ``(n, n, H)`` hidden layer leaves the cache."""
    flat = u.ravel()  # (N,)
    out = np.empty(flat.size)  # (N,)
    h = np.empty((min(_BLOCK, flat.size), w1.size))  # (block, H), reused
    for s in range(0, flat.size, _BLOCK):
        x = flat[s : s + _BLOCK]  # (b,)
        hb = h[: x.size]  # (b, H)
        np.multiply(x[:, None], w1, out=hb)  # w1_h u
        hb += b1  # + b1_h
        np.maximum(hb, 0.0, out=hb)  # relu
        hb *= w2  # w2_h relu(...)
        hb.sum(-1, out=out[s : s + x.size])  # (b,)
    return out.reshape(u.shape)


class Fire(Scheme):
    """FIRE (Li et al. 2023): the bias ``f(psi(r) / psi(max(L, t)))``, ``psi(x) = log(c x + 1)``, all learned.

    ``f(u) = sum_h w2_h relu(w1_h u + b1_h)``, a one-hidden-layer MLP of width :attr:`H` (32, the reference
    implementation's), drawn as PyTorch draws ``Linear(1, H)`` and ``Linear(H, 1)`` (uniform on
    ``+-1/sqrt(fan_in)``), with no output constant (it would move every logit of a query alike, which the softmax
    ignores, so it would never learn).  ``c = c_0 e^{a_c} > 0`` starts at :attr:`C0`, the paper's code's 0.1
    (``init_c``; :class:`FireC1`, ``fire_c1``, starts it at 1, as an independent reimplementation does); the threshold
    ``L = n_train e^{a_L} > 0`` starts at the training length, so that the query at the end of the window
    (``t = L - 1``) is normalised by ``psi(L)`` and ``L`` learns (the reference starts it at a quarter of its
    2,048-token window, where queries below ``L`` exist in every sequence; here the query is always the last
    token).  Past ``L`` the normaliser follows the query, so every causal offset of a query at any length maps
    into ``[0, 1]`` (:func:`poskernels.theory.kerple_fire.fire_kernel`).  Not a kernel of the offset alone: it reads
    the query's position, so ``relative`` is False.
    """

    name, title = "fire", "FIRE"
    article = "Li et al. 2023, Functional Interpolation for Relative Positions Improves Long Context Transformers"
    paper, year, colour = "Li et al.", 2023, "#ddcc77"
    where, relative, defined_everywhere, in_article = "score", False, True, False
    bias_reads_query = False  # of the offset, the query's position and the MLP alone
    H = 32
    #: The initial ``c`` (``a_c = 0``).
    C0 = 0.1

    def init(self, cfg, rng):
        w1 = rng.uniform(-1.0, 1.0, size=self.H)  # (H,) Linear(1, H): fan_in 1
        b1 = rng.uniform(-1.0, 1.0, size=self.H)  # (H,)
        w2 = rng.uniform(-1.0, 1.0, size=self.H) / np.sqrt(self.H)  # (H,) Linear(H, 1): fan_in H
        return {"fire_ac": np.zeros(1), "fire_aL": np.zeros(1), "fire_w1": w1, "fire_b1": b1, "fire_w2": w2}

    def _c_L(self, params, cfg):
        return self.C0 * np.exp(params["fire_ac"]), cfg.n_train * np.exp(params["fire_aL"])  # (M, 1) or (1,) each

    def bias(self, params, cfg, q, r, t=None):
        if t is None:
            raise PosKernelsError("FIRE's bias reads the query's position t; call it through bias_at")
        c, L = self._c_L(params, cfg)
        u = fire_features(r, t, c, L)  # (M, n) or (Nq, Nk): psi(r) / psi(max(L, t))
        return fire_bias(u, params["fire_w1"], params["fire_b1"], params["fire_w2"])  # same shape as u

    def bias_backward(self, dz, params, cfg, q, r, t=None):
        c, L = self._c_L(params, cfg)  # (M, 1) each
        rho = np.maximum(r, 0.0)  # (n,)
        T = np.maximum(L, t)  # (M, 1) the normaliser's argument
        den = np.log1p(c * T)  # (M, 1) psi(max(L, t))
        u = np.log1p(c * rho) / den  # (M, n)
        w1, b1, w2 = (params[k][:, None, :] for k in ("fire_w1", "fire_b1", "fire_w2"))  # (M, 1, H) each
        pre = u[..., None] * w1 + b1  # (M, n, H)
        g = dz.sum(axis=1)  # (M, n) summed over query tokens (the bias does not read the query)
        dpre = g[..., None] * w2 * (pre > 0)  # (M, n, H)
        du = (dpre * w1).sum(-1)  # (M, n)
        # u = psi(r) / psi(T): du/dc = (r / (1 + c r) - u T / (1 + c T)) / psi(T);  dc/da_c = c
        dac = (du * c * (rho / (1.0 + c * rho) - u * T / (1.0 + c * T)) / den).sum(-1)  # (M,)
        # du/dL = -u c / ((1 + c L) psi(L)) where L > t (else the normaliser does not read L);  dL/da_L = L
        daL = (du * -u * (c * L / (1.0 + c * L)) / den * (L > t)).sum(-1)  # (M,)
        return None, {
            "fire_ac": dac[:, None],
            "fire_aL": daL[:, None],
            "fire_w1": (dpre * u[..., None]).sum(1),  # (M, H)
            "fire_b1": dpre.sum(1),  # (M, H)
            "fire_w2": (g[..., None] * np.maximum(pre, 0.0)).sum(1),  # (M, H)
        }

    def reference_bias(self, tp, cfg, q, r, dtype):
        """In torch: ``f(log(c r + 1) / log(c max(L, t) + 1))``, ``f`` a ReLU MLP of one hidden layer, ``c = C0
        e^{a_c}``, ``L = n_train e^{a_L}``; the query sits at the last position, ``t = n - 1 = r[0]``."""
        torch = torch_module()
        rt = tensor(r, dtype)  # (n,)
        c, L = self.C0 * torch.exp(tp["fire_ac"]), cfg.n_train * torch.exp(tp["fire_aL"])  # (M, 1) each
        t = torch.full_like(L, float(r[0]))  # (M, 1)
        u = torch.log(c * rt + 1) / torch.log(c * torch.maximum(L, t) + 1)  # (M, n)
        hidden = torch.relu(u[..., None] * tp["fire_w1"][:, None, :] + tp["fire_b1"][:, None, :])  # (M, n, H)
        return (hidden @ tp["fire_w2"][..., None])[..., 0][:, None, :]  # (M, 1, n)


class FireC1(Fire):
    """FIRE with ``c`` started at 1 rather than the paper's code's 0.1: the other initialisation in use (an
    independent reimplementation's), tried to see whether the finding at 10^5 tokens depends on it."""

    name, title = "fire_c1", "FIRE, c started at 1"
    colour = "#aa9944"
    C0 = 1.0
