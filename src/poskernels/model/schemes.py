"""How each position scheme enters the head: a registry of small implementations, one signature.

A scheme touches the head in at most three places, and each place has its forward and, right
beside it, its backward:

* ``code``: an absolute code ``p(m)`` added to the token embedding (Definition 1): the
  sinusoidal code (Definition 2) or a learned table.
* ``rotary``: queries and keys rotated by their positions (Definition 4); the rotation itself is
  done by the head (:mod:`poskernels.model.head`), which can read it with any per-plane
  frequencies and logit scale (Definition 5's maps).
* ``bias``: a term added to the logits that depends on the offset ``r = t - j`` (and, for Shaw,
  on the query): ALiBi's ``-s r``, T5's learned ``beta_bucket(r)``, Shaw's ``q a_min(r,K) / tau``
  (Definition 3).

Shapes: ``positions`` is ``(n,)``.  The query-only path trains a *stack* of ``M`` heads: every
parameter has a leading model axis, it passes the queries of its ``U`` distinct query tokens, ``q``
of shape ``(M, U, d)``, and offsets ``r`` of shape ``(n,)``, and a bias returns ``(M, U, n)``,
``(M, n)`` or ``(n,)``; a code is ``(n, d)`` or ``(M, n, d)``.  The all-positions path reads one
head (no model axis): it passes ``(B, n, d)`` and ``(n, n)``, and a bias returns ``(B, n, n)`` or
``(n, n)``.  Every hook indexes from the right, so one implementation serves both.  A scheme is
either additive (``code``) or rotary, not both.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encodings import shaw_clip, sinusoidal_code, t5_bucket
from ..errors import PosKernelsError

__all__ = ["HEAD_SCHEMES", "HeadScheme", "default_positions"]


class HeadScheme:
    """No position at all (the base class: every hook is empty).

    Attributes
    ----------
    name : str
        Registry key.
    rotary : bool
        Whether queries and keys are rotated by their positions (RoPE).
    """

    name = "nope"
    rotary = False

    def init(self, cfg, rng: np.random.Generator) -> dict:
        """Extra parameters of the scheme, drawn from ``rng`` (none here)."""
        return {}

    def code(self, params: dict, cfg, positions: np.ndarray):
        """Additive code ``p(m)``, shape ``(n, d)``, or None when the scheme adds nothing."""
        return None

    def code_backward(self, dcode: np.ndarray, params: dict, cfg, positions: np.ndarray) -> dict:
        """Gradients of the scheme's parameters (stacked) from ``dL/dp``, shape ``(M, n, d)``."""
        return {}

    def bias(self, params: dict, cfg, q: np.ndarray, r: np.ndarray):
        """Additive logit term for offsets ``r`` (None when there is none)."""
        return None

    def bias_backward(self, dz: np.ndarray, params: dict, cfg, q: np.ndarray, r: np.ndarray):
        """``(dL/dq or None, grads)`` from ``dL/dbias`` of the query-only path, ``dz`` shape ``(M, U, n)``."""
        return None, {}


@lru_cache(maxsize=64)
def default_positions(n: int) -> np.ndarray:
    """Positions ``0..n-1`` as floats (one read-only array per ``n``, so a scheme can recognise it)."""
    pos = np.arange(n, dtype=float)  # (n,)
    pos.setflags(write=False)
    return pos


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


class Sinusoidal(HeadScheme):
    """The sinusoidal code added to the embedding (Definition 2); no parameters."""

    name = "sinusoidal"

    def code(self, params, cfg, positions):
        if positions is default_positions(positions.size):  # the common case, cached
            return _sinusoidal_rows(positions.size, cfg.d, float(cfg.base))
        return sinusoidal_code(positions, cfg.d, cfg.base)  # (n, d), any real positions


class Learned(HeadScheme):
    """A learned table ``P`` of ``L = n_train`` rows added to the embedding (Definition 1).

    The table is undefined past its length: reading a position outside ``0..L-1`` raises
    :class:`PosKernelsError`, never a silent wrap or clip.
    """

    name = "learned"

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


class Rope(HeadScheme):
    """RoPE (Definition 4): the head rotates queries and keys; the scheme adds nothing else."""

    name = "rope"
    rotary = True


class Alibi(HeadScheme):
    """ALiBi (Definition 3): the fixed bias ``-s r`` with slope ``s = cfg.alibi_slope``."""

    name = "alibi"

    def bias(self, params, cfg, q, r):
        return -cfg.alibi_slope * r  # (n,) or (n, n); Theorem 3 (i): the exponential kernel in time


class T5(HeadScheme):
    """T5's bucketed bias (Definition 3): one learned scalar ``beta`` per bucket of the offset.

    Buckets follow T5's own definition (:func:`poskernels.encodings.t5_bucket`, causal, 32 buckets,
    max distance 128).  ``beta`` starts at zero, so a bucket training never reaches keeps exactly zero.
    With the 32-token window the largest trained offset, 31, shares bucket 21 with offsets 32..34, so
    those read a trained ``beta``; the buckets training never reaches are 22..31, offsets 35 and on
    (:func:`poskernels.theory.alibi.t5_bucket_ranges`).
    """

    name = "t5"

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


class Shaw(HeadScheme):
    """Shaw et al.'s relative keys (Definition 3): ``s_tj += q_t a_min(r, K) / tau``.

    One learned vector per clipped offset, ``A`` of shape ``(K + 1, d)``, from ``N(0, embed_scale**2)``.
    """

    name = "shaw"

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


#: Registry of position schemes, by name (the names of :data:`poskernels.encodings.SCHEMES`).
HEAD_SCHEMES: dict[str, HeadScheme] = {
    s.name: s for s in (HeadScheme(), Sinusoidal(), Learned(), Rope(), Alibi(), T5(), Shaw())
}
