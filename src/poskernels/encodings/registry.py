"""The registry of the ways of adding position: one entry per scheme, metadata and behaviour in a head.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the head, the readers, the
experiments, the page and the laboratory loop over one registry (:data:`poskernels.model.schemes.HEAD_SCHEMES`
is the same dict).  An entry is a subclass of :class:`~poskernels.encodings.scheme.Scheme`: what the article
says of the scheme, and its hooks in a head, each forward followed by its hand-written backward.

>>> [name for name, s in SCHEMES.items() if s.in_article]
['nope', 'sinusoidal', 'learned', 'rope', 'alibi']
>>> SCHEMES["t5"].where, SCHEMES["t5"].title, SCHEMES["rope"].rotary
('score', 'T5 buckets', True)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import PosKernelsError, check_name
from .beyond import fire_bias, fire_features, kerple_log_bias, kerple_power_bias
from .codes import omega, sinusoidal_code
from .relative import shaw_clip, t5_bucket
from .scheme import Scheme, default_positions

__all__ = ["SCHEMES", "Scheme", "get_scheme"]


@lru_cache(maxsize=64)
def _sinusoidal_rows(n: int, d: int, base: float) -> np.ndarray:
    code = sinusoidal_code(np.arange(n), d, base)  # (n, d)
    code.setflags(write=False)
    return code


def _t5_buckets(r: np.ndarray, buckets: int, max_distance: int) -> np.ndarray:
    return t5_bucket(-np.asarray(np.rint(r), dtype=np.int64), buckets, max_distance)


def _shaw_clips(r: np.ndarray, clip: int) -> np.ndarray:
    return shaw_clip(np.maximum(np.asarray(np.rint(r), dtype=np.int64), 0), clip)


@lru_cache(maxsize=256)
def _by_value_cached(fn, raw: bytes, dtype: str, shape: tuple, args: tuple) -> np.ndarray:
    out = fn(np.frombuffer(raw, dtype=dtype).reshape(shape), *args)
    out.setflags(write=False)
    return out


def _by_value(fn, r, *args) -> np.ndarray:
    """``fn(r, *args)``, remembered by the value of ``r`` when it is small (a training step's offsets, every step).

    T5's bucket map costs ~30 us a call, and a step asks for the same offsets twice; the result is read-only.
    """
    r = np.asarray(r, dtype=float)
    if r.size > 65536:
        return fn(r, *args)
    return _by_value_cached(fn, r.tobytes(), r.dtype.str, r.shape, args)


class NoPosition(Scheme):
    """No position at all: the head sees a bag of tokens (Proposition 1); no hook."""

    name, title, article = "nope", "no position", "Proposition 1"
    where, relative, defined_everywhere, in_article = "none", True, True, True


class Sinusoidal(Scheme):
    """The sinusoidal code added to the embedding (Definition 2); no parameters."""

    name, title, article = "sinusoidal", "sinusoidal, added", "Definition 2"
    where, relative, defined_everywhere, in_article = "input", False, True, True

    @staticmethod
    def offset_kernel(r):  # Theorem 1 (i): <p(m), p(m + r)> = kappa_16(r) at d = 16
        return np.cos(np.asarray(r, dtype=float)[..., None] * omega(16)).sum(-1)

    def code(self, params, cfg, positions):
        if positions is default_positions(positions.size):  # the common case, cached
            return _sinusoidal_rows(positions.size, cfg.d, float(cfg.base))
        return sinusoidal_code(positions, cfg.d, cfg.base)  # (n, d), any real positions

    def code_backward(self, dcode, params, cfg, positions):
        return {}  # a fixed code: no parameter to move


class Learned(Scheme):
    """A learned table ``P`` of ``L = n_train`` rows added to the embedding (Definition 1).

    The table is undefined past its length: reading a position outside ``0..L-1`` raises
    :class:`PosKernelsError`, never a silent wrap or clip.
    """

    name, title, article = "learned", "learned table, added", "Definition 1"
    where, relative, defined_everywhere, in_article = "input", False, False, True

    def init(self, cfg, rng):
        return {"P": rng.normal(0.0, cfg.embed_scale, size=(cfg.n_train, cfg.d))}  # (L, d)

    @staticmethod
    def _rows(params, positions):
        L = params["P"].shape[-2]
        if positions is default_positions(positions.size) and positions.size <= L:
            return slice(0, positions.size)  # training reads rows 0..n-1 once each
        idx = np.asarray(positions)
        if idx.size and (np.any(idx != np.round(idx)) or idx.min() < 0 or idx.max() > L - 1):
            raise PosKernelsError(
                f"a learned table is defined only at integer positions 0..{L - 1} (its training length "
                f"{L}); got positions from {idx.min()!r} to {idx.max()!r}"
            )
        return idx.astype(np.int64)

    def code(self, params, cfg, positions):
        return params["P"][..., self._rows(params, positions), :]  # (..., n, d)

    def code_backward(self, dcode, params, cfg, positions):
        dP = np.zeros_like(params["P"])  # (M, L, d)
        rows = self._rows(params, positions)
        if isinstance(rows, slice):
            dP[:, rows] = dcode
        else:
            np.add.at(dP, (slice(None), rows), dcode)
        return {"P": dP}


class Rope(Scheme):
    """RoPE (Definition 4): the head rotates queries and keys; the scheme writes no hook."""

    name, title, article = "rope", "RoPE", "Definition 4"
    where, relative, defined_everywhere, in_article = "rotation", True, True, True

    @staticmethod
    def offset_kernel(r):  # Proposition 3 (iii) with q = k = all ones: sum_j 2 cos(r theta_j) at d = 16
        return 2 * np.cos(np.asarray(r, dtype=float)[..., None] * omega(16)).sum(-1)


class Alibi(Scheme):
    """ALiBi (Definition 3): the fixed bias ``-s r`` with slope ``s = cfg.alibi_slope``."""

    name, title, article = "alibi", "ALiBi", "Definition 3, Theorem 3"
    where, relative, defined_everywhere, in_article = "score", True, True, True

    @staticmethod
    def offset_kernel(r):  # slope 1/2, ALiBi's first slope at H = 8
        return -0.5 * np.asarray(r, dtype=float)

    def bias(self, params, cfg, q, r):
        return -cfg.alibi_slope * r  # (n,) or (n, n); Theorem 3 (i): the exponential kernel in time

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {}  # a fixed bias: no parameter, and the query does not enter it


class T5(Scheme):
    """T5's bucketed bias (Definition 3): one learned scalar ``beta`` per bucket of the offset.

    Buckets follow T5's own definition (:func:`poskernels.encodings.t5_bucket`, causal, 32 buckets,
    max distance 128).  ``beta`` starts at zero, so a bucket training never reaches keeps exactly zero.
    With the 32-token window the largest trained offset, 31, shares bucket 21 with offsets 32..34, so
    those read a trained ``beta``; the buckets training never reaches are 22..31, offsets 35 and on
    (:func:`poskernels.theory.alibi.t5_bucket_ranges`).
    """

    name, title, article = "t5", "T5 buckets", "Definition 3"
    where, relative, defined_everywhere, in_article = "score", True, True, False

    def init(self, cfg, rng):
        return {"beta": np.zeros(cfg.t5_buckets)}  # (buckets,)

    @staticmethod
    def _buckets(cfg, r):
        return _by_value(_t5_buckets, r, cfg.t5_buckets, cfg.t5_max_distance)

    def bias(self, params, cfg, q, r):
        return np.take(params["beta"], self._buckets(cfg, np.maximum(r, 0)), axis=-1)  # (M, n) or (n, n)

    def bias_backward(self, dz, params, cfg, q, r):
        M, nb = dz.shape[0], cfg.t5_buckets
        flat = self._buckets(cfg, np.maximum(r, 0)) + nb * np.arange(M)[:, None]  # (M, n) bucket of model m
        dbeta = np.bincount(flat.ravel(), weights=dz.sum(axis=1).ravel(), minlength=M * nb)  # sum over queries
        return None, {"beta": dbeta.reshape(M, nb)}


class Shaw(Scheme):
    """Shaw et al.'s relative keys (Definition 3): ``s_tj += q_t a_min(r, K) / tau``.

    One learned vector per clipped offset, ``A`` of shape ``(K + 1, d)``, from ``N(0, embed_scale**2)``.
    """

    name, title, article = "shaw", "Shaw relative keys", "Definition 3"
    where, relative, defined_everywhere, in_article = "score", True, True, False

    def init(self, cfg, rng):
        return {"A": rng.normal(0.0, cfg.embed_scale, size=(cfg.shaw_clip + 1, cfg.d))}  # (K+1, d)

    @staticmethod
    def _clip(cfg, r):
        return _by_value(_shaw_clips, r, cfg.shaw_clip)

    def bias(self, params, cfg, q, r):
        G = q @ np.swapaxes(params["A"], -1, -2) / cfg.tau  # (..., K+1): the query against every offset vector
        idx = self._clip(cfg, r)  # (n,) or (n, n)
        return np.take_along_axis(G, np.broadcast_to(idx, G.shape[:-1] + idx.shape[-1:]), axis=-1)

    def bias_backward(self, dz, params, cfg, q, r):
        K1 = cfg.shaw_clip + 1
        idx = self._clip(cfg, r)  # (n,)
        M, U, _ = dz.shape
        flat = (np.arange(M * U)[:, None] * K1 + idx[None, :]).ravel()  # (M U n,)
        dG = np.bincount(flat, weights=dz.ravel(), minlength=M * U * K1).reshape(M, U, K1) / cfg.tau  # (M, U, K+1)
        return dG @ params["A"], {"A": np.swapaxes(dG, -1, -2) @ q}  # (M, U, d), (M, K+1, d)


class KerpleLog(Scheme):
    """Kerple's logarithmic bias ``-r1 log(1 + r2 r)`` (Chi et al. 2022), ``r1, r2 > 0`` learned.

    Kept positive by the parametrisation ``r1 = e^{a1}``, ``r2 = e^{a2}`` (the paper clips at ``10^-2``
    instead).  The paper draws each of its many heads' ``r1 ~ U(0, 2)``, ``r2 ~ U(0, 1)``; our one head starts
    at the middle of those ranges, ``r1 = 1``, ``r2 = 1/2``, the same for every seed.  The bias is a
    conditionally positive definite kernel of the offset
    (:func:`poskernels.theory.beyond.kerple_log_kernel`).
    """

    name, title = "kerple_log", "Kerple, logarithmic"
    article = "Chi et al. 2022, KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"
    where, relative, defined_everywhere, in_article = "score", True, True, False

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


class KerplePower(Scheme):
    """Kerple's power bias ``-r1 r^r2`` (Chi et al. 2022), ``r1 > 0`` and ``0 < r2 <= 2`` learned.

    Kept in range by the parametrisation ``r1 = e^{a1}``, ``r2 = 2 sigma(a2)`` (the paper clips instead).  The
    paper draws each of its heads' ``r1 ~ U(0, 1)``, ``r2 ~ U(0, 2)``; our one head starts at the middle of
    those ranges, ``r1 = 1/2``, ``r2 = 1`` (ALiBi's bias ``-r/2`` at the article's slope).
    Conditionally positive definite for ``r2 <= 2``
    (:func:`poskernels.theory.beyond.kerple_power_kernel`).
    """

    name, title = "kerple_power", "Kerple, power"
    article = "Chi et al. 2022, KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"
    where, relative, defined_everywhere, in_article = "score", True, True, False

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


class Fire(Scheme):
    """FIRE (Li et al. 2023): the bias ``f(psi(r) / psi(max(L, t)))``, ``psi(x) = log(c x + 1)``, all learned.

    ``f(u) = sum_h w2_h relu(w1_h u + b1_h)``, a one-hidden-layer MLP of width :attr:`H` (32, the reference
    implementation's), drawn as PyTorch draws ``Linear(1, H)`` and ``Linear(H, 1)`` (uniform on
    ``+-1/sqrt(fan_in)``), with no output constant (it would move every logit of a query alike, which the softmax
    ignores, so it would never learn).  ``c = 0.1 e^{a_c} > 0`` starts at the reference's 0.1; the threshold
    ``L = n_train e^{a_L} > 0`` starts at the training length, so that the query at the end of the window
    (``t = L - 1``) is normalised by ``psi(L)`` and ``L`` learns (the reference starts it at a quarter of its
    2,048-token window, where queries below ``L`` exist in every sequence; here the query is always the last
    token).  Past ``L`` the normaliser follows the query, so every causal offset of a query at any length maps
    into ``[0, 1]`` (:func:`poskernels.theory.beyond.fire_kernel`).  Not a kernel of the offset alone: it reads
    the query's position, so ``relative`` is False.
    """

    name, title = "fire", "FIRE"
    article = "Li et al. 2023, Functional Interpolation for Relative Positions Improves Long Context Transformers"
    where, relative, defined_everywhere, in_article = "score", False, True, False
    H = 32

    def init(self, cfg, rng):
        w1 = rng.uniform(-1.0, 1.0, size=self.H)  # (H,) Linear(1, H): fan_in 1
        b1 = rng.uniform(-1.0, 1.0, size=self.H)  # (H,)
        w2 = rng.uniform(-1.0, 1.0, size=self.H) / np.sqrt(self.H)  # (H,) Linear(H, 1): fan_in H
        return {"fire_ac": np.zeros(1), "fire_aL": np.zeros(1), "fire_w1": w1, "fire_b1": b1, "fire_w2": w2}

    @staticmethod
    def _c_L(params, cfg):
        return 0.1 * np.exp(params["fire_ac"]), cfg.n_train * np.exp(params["fire_aL"])  # (M, 1) or (1,) each

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


#: The one registry of position schemes, by name, in the article's order (its tournament's rows, then beyond).
SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        *(NoPosition(), Sinusoidal(), Learned(), Rope(), Alibi()),  # the article's
        *(T5(), Shaw(), KerpleLog(), KerplePower(), Fire()),  # beyond it
    )
}


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name.

    >>> get_scheme("alibi").relative
    True
    >>> get_scheme("xpos")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'xpos'; accepted: alibi, fire, kerple_log, ..., sinusoidal, t5
    """
    return SCHEMES[check_name("scheme", name, SCHEMES)]
