"""The schemes the article defines: no position, the sinusoidal code, a learned table, RoPE, ALiBi, T5 and Shaw.

The article's tournament trains the first five (Definitions 1, 2 and 4, and ALiBi of Definition 3); T5's buckets
and Shaw's clipped offsets are Definition 3's other two relative schemes.  Each is one subclass of
:class:`~poskernels.encodings.scheme.Scheme`, its hooks each followed by its hand-written backward; the registry
(:data:`poskernels.encodings.SCHEMES`) lists them first, in the article's order.

>>> T5.where, T5.title, Rope().rotary
('score', 'T5 buckets', True)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import PosKernelsError
from .codes import code_kernel, omega, sinusoidal_code
from .relative import shaw_clip, t5_bucket
from .scheme import Scheme, default_positions
from .setting import Setting
from .torch_terms import rope_turn, tensor, torch_module

__all__ = ["Alibi", "Learned", "NoPosition", "Rope", "Shaw", "Sinusoidal", "T5"]


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
    paper, year, colour = "Haviv et al.", 2022, "#7f7f7f"
    where, relative, defined_everywhere, in_article = "none", True, True, True

    def far_past(self, cfg):
        return 0  # every key scores by its token alone

    def linear_slope(self, cfg):
        return 0.0  # the bias is -0 r: a recursive reader's running sum (no certified cut: s = 0)


class Sinusoidal(Scheme):
    """The sinusoidal code added to the embedding (Definition 2); no parameters."""

    name, title, article = "sinusoidal", "sinusoidal, added", "Definition 2"
    paper, year, colour = "Vaswani et al.", 2017, "#e69f00"
    where, relative, defined_everywhere, in_article = "input", False, True, True

    @staticmethod
    def offset_kernel(r):  # Theorem 1 (i): <p(m), p(m + r)> = kappa_16(r) at d = 16
        return code_kernel(np.asarray(r, dtype=float), omega(16))

    def code(self, params, cfg, positions):
        if positions is default_positions(positions.size):  # the common case, cached
            return _sinusoidal_rows(positions.size, cfg.d, float(cfg.base))
        return sinusoidal_code(positions, cfg.d, cfg.base)  # (n, d), any real positions

    def code_backward(self, dcode, params, cfg, positions):
        return {}  # a fixed code: no parameter to move

    def reference_code(self, tp, cfg, n, dtype):  # in torch: at 0..n-1, or at the positions n given (randomized)
        positions = np.arange(n) if np.ndim(n) == 0 else np.asarray(n, dtype=float)
        return tensor(sinusoidal_code(positions, cfg.d, cfg.base), dtype)  # (n, d)


class Learned(Scheme):
    """A learned table ``P`` of ``L = n_train`` rows added to the embedding (Definition 1).

    The table is undefined past its length: reading a position outside ``0..L-1`` raises
    :class:`PosKernelsError`, never a silent wrap or clip.
    """

    name, title, article = "learned", "learned table, added", "Definition 1"
    paper, year, colour = "Gehring et al.", 2017, "#cc79a7"
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

    def reference_code(self, tp, cfg, n, dtype):  # in torch: rows 0..n-1 of the table
        return tp["P"][:, None, :n]  # (M, 1, n, d)


class Rope(Scheme):
    """RoPE (Definition 4): queries and keys turned by ``omega(d, b)``, or by a reading's frequencies (Definition 5)."""

    name, title, article = "rope", "RoPE", "Definition 4"
    paper, year, colour = "Su et al.", 2021, "#0072b2"
    where, relative, defined_everywhere, in_article = "rotation", True, True, True

    def transform(self, cfg, reading):
        return omega(cfg.d, cfg.base) if reading.inv_freq is None else reading.inv_freq  # (d/2,)

    def reference_turn(self, v, cfg, positions, dtype, query=False, reading=None):  # in torch, cosine first
        return rope_turn(v, cfg, positions, dtype, reading)

    @staticmethod
    def offset_kernel(r):  # Proposition 3 (iii) with q = k = all ones: sum_j 2 cos(r theta_j) at d = 16
        return 2 * code_kernel(np.asarray(r, dtype=float), omega(16))


class Alibi(Scheme):
    """ALiBi (Definition 3): the fixed bias ``-s r`` with slope ``s = cfg.alibi_slope``."""

    name, title, article = "alibi", "ALiBi", "Definition 3, Theorem 3"
    paper, year, colour = "Press, Smith, and Lewis", 2022, "#009e73"
    where, relative, defined_everywhere, in_article = "score", True, True, True
    bias_reads_query = False  # -s r: the offset alone
    settings = {"alibi_slope": Setting(0.5, 0.0, None, "the slope s; 1/2 is ALiBi's first slope at H = 8")}

    @staticmethod
    def offset_kernel(r):  # slope 1/2, ALiBi's first slope at H = 8
        return -0.5 * np.asarray(r, dtype=float)

    def bias(self, params, cfg, q, r):
        return -cfg.alibi_slope * r  # (n,) or (n, n); Theorem 3 (i): the exponential kernel in time

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {}  # a fixed bias: no parameter, and the query does not enter it

    def linear_slope(self, cfg):
        return cfg.alibi_slope  # Theorem 3: the bias is exactly -s r

    def reference_bias(self, tp, cfg, q, r, dtype):  # in torch: -s r
        return -cfg.alibi_slope * tensor(r, dtype)  # (n,)


class T5(Scheme):
    """T5's bucketed bias (Definition 3): one learned scalar ``beta`` per bucket of the offset.

    Buckets follow T5's own definition (:func:`poskernels.encodings.t5_bucket`, causal, 32 buckets,
    max distance 128).  ``beta`` starts at zero, so a bucket training never reaches keeps exactly zero.
    With the 32-token window the largest trained offset, 31, shares bucket 21 with offsets 32..34, so
    those read a trained ``beta``; the buckets training never reaches are 22..31, offsets 35 and on
    (:func:`poskernels.theory.relative_bias.t5_bucket_ranges`).
    """

    name, title, article = "t5", "T5 buckets", "Definition 3"
    paper, year, colour = "Raffel et al.", 2020, "#999933"
    where, relative, defined_everywhere, in_article = "score", True, True, False
    bias_reads_query = False  # beta of the offset's bucket
    settings = {
        "t5_buckets": Setting(32, 2, 2**20, "one learned scalar per bucket"),
        "t5_max_distance": Setting(128, 1, 2**20, "where the logarithmic map reaches the last bucket"),
    }

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

    def far_past(self, cfg):  # the first offset of the open last bucket: every later one shares its beta
        r = np.arange(cfg.t5_max_distance + 1)  # (max_distance + 1,) causal offsets
        return int(np.flatnonzero(_t5_buckets(r, cfg.t5_buckets, cfg.t5_max_distance) == cfg.t5_buckets - 1)[0])

    def reference_bias(self, tp, cfg, q, r, dtype):  # in torch: beta at T5's own bucket of the relative position -r
        buckets = torch_module().as_tensor(t5_bucket(-r, cfg.t5_buckets, cfg.t5_max_distance))  # (n,)
        return tp["beta"][:, None, buckets]  # (M, 1, n)


class Shaw(Scheme):
    """Shaw et al.'s relative keys (Definition 3): ``s_tj += q_t a_min(r, K) / tau``.

    One learned vector per clipped offset, ``A`` of shape ``(K + 1, d)``, from ``N(0, embed_scale**2)``.
    """

    name, title, article = "shaw", "Shaw relative keys", "Definition 3"
    paper, year, colour = "Shaw, Uszkoreit, and Vaswani", 2018, "#444444"
    where, relative, defined_everywhere, in_article = "score", True, True, False
    settings = {"shaw_clip": Setting(31, 1, 2**20, "offsets >= K share one vector")}

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

    def far_past(self, cfg):
        return cfg.shaw_clip  # a_min(r, K): one vector from K on

    def reference_bias(self, tp, cfg, q, r, dtype):  # in torch: q a_min(r, K) / tau
        a_r = tp["A"][:, torch_module().as_tensor(shaw_clip(r, cfg.shaw_clip))]  # (M, n, d)
        return q @ a_r.transpose(1, 2) / cfg.tau  # (M, B, n)
