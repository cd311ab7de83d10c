"""The registry of the ways of adding position: one entry per scheme, metadata and behaviour in a head.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the head, the readers, the
experiments, the page and the laboratory loop over one registry.  An entry is a subclass of
:class:`~poskernels.encodings.scheme.Scheme`: all that is known of the scheme, and its hooks in a head, each forward
followed by its hand-written backward.  :func:`register_scheme` adds one from outside the package.

>>> [name for name, s in SCHEMES.items() if s.in_article]
['nope', 'sinusoidal', 'learned', 'rope', 'alibi']
>>> SCHEMES["t5"].where, SCHEMES["t5"].title, SCHEMES["rope"].rotary
('score', 'T5 buckets', True)
"""

from __future__ import annotations

import inspect
from functools import lru_cache

import numpy as np

from ..errors import PosKernelsError, check_name
from .beyond import Fire, FireC1, KerpleLog, KerplePower
from .codes import code_kernel, omega, sinusoidal_code
from .relative import shaw_clip, t5_bucket
from .rotary_family import PartialRotary, PRope, XPos, XPosRescaled
from .scheme import Scheme, Setting, default_positions
from .torch_terms import rope_turn, tensor, torch_module
from .variants import randomized, ssmax

__all__ = ["BUILT_IN", "SCHEMES", "get_scheme", "register_scheme", "scheme_settings"]


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


#: The one registry of position schemes, by name, in the article's order (its tournament's rows, then beyond, then
#: any registered from outside the package by :func:`register_scheme`).
SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        *(NoPosition(), Sinusoidal(), Learned(), Rope(), Alibi()),  # the article's
        *(T5(), Shaw(), KerpleLog(), KerplePower(), Fire()),  # beyond it
        *(XPos(), PRope(), PartialRotary()),  # the rotary family (encodings/rotary_family.py)
        *(ssmax(NoPosition, colour="#aaaaaa")(), ssmax(Rope, colour="#88ccee")()),  # the scaled softmax
        *(randomized(Sinusoidal, colour="#d55e00")(), randomized(Rope, colour="#aa4499")()),  # randomized positions
        *(XPosRescaled(), FireC1()),  # named variants of a paper's constant (docs/guide/beyond.md)
    )
}
#: The names of the schemes the library ships (a scheme registered from outside needs another).
BUILT_IN = frozenset(SCHEMES)


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name in :data:`SCHEMES`.

    Parameters
    ----------
    name : str
        A registered scheme's name.

    Returns
    -------
    Scheme
        The registered instance.

    Raises
    ------
    PosKernelsError
        If no scheme has that name (the message lists the names accepted, and the closest one).

    Examples
    --------
    >>> get_scheme("alibi").relative
    True
    >>> get_scheme("bogus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'bogus'; accepted: alibi, fire, fire_c1, ..., xpos, xpos_rescaled
    """
    return SCHEMES[check_name("scheme", name, SCHEMES)]


def scheme_settings() -> dict[str, Setting]:
    """Every registered scheme's settings by name, in registry order (each name once: schemes may share one).

    Returns
    -------
    dict of str to Setting
        The settings a head's configuration may carry, by name.

    Examples
    --------
    >>> list(scheme_settings())  # doctest: +NORMALIZE_WHITESPACE
    ['alibi_slope', 't5_buckets', 't5_max_distance', 'shaw_clip', 'xpos_scale_base', 'xpos_gamma', 'prope_p',
     'partial_rotary_factor', 'random_positions']
    """
    out: dict[str, Setting] = {}
    for scheme in SCHEMES.values():
        for key, setting in scheme.settings.items():
            out.setdefault(key, setting)
    return out


def register_scheme(scheme: type[Scheme] | Scheme) -> Scheme:
    """Add a scheme to :data:`SCHEMES`: a :class:`Scheme` subclass (or an instance of one) from any file.

    From then on the head trains it, the tournament, the long-context reading, a sweep and the laboratory's
    curves read it by its name.  Registering the same class again is a no-op (a worker that loads the same file
    twice); a built-in name, another class under a registered name, or a setting that another scheme declares
    with another default is refused.

    Parameters
    ----------
    scheme : Scheme subclass or Scheme
        The scheme to register.

    Returns
    -------
    Scheme
        The registered instance.

    Raises
    ------
    PosKernelsError
        If `scheme` is not a Scheme subclass or instance, takes a built-in name or another class's name, or declares
        a setting another scheme declares with another default.

    Examples
    --------
    >>> class Gauss(Scheme):
    ...     name, title, article, where = "gauss_doc", "Gaussian bias", "none", "score"
    ...     def bias(self, params, cfg, q, r):
    ...         return -0.5 * (r / 8.0) ** 2
    ...     def bias_backward(self, dz, params, cfg, q, r):
    ...         return None, {}
    >>> register_scheme(Gauss).name in SCHEMES
    True
    >>> del SCHEMES["gauss_doc"]  # (a doctest leaves the registry as it found it)
    >>> register_scheme(Rope)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme 'rope' is built in; a scheme from outside needs a name of its own
    """
    cls = scheme if isinstance(scheme, type) else type(scheme)
    if not (isinstance(cls, type) and issubclass(cls, Scheme)) or cls is Scheme:
        raise PosKernelsError(f"register_scheme takes a Scheme subclass or an instance of one; got {scheme!r}")
    name = cls.name
    if name in BUILT_IN:
        raise PosKernelsError(f"scheme {name!r} is built in; a scheme from outside needs a name of its own")
    old = SCHEMES.get(name)
    if old is not None:
        if _same_class(type(old), cls):
            return old
        raise PosKernelsError(
            f"scheme {name!r} is already registered from {type(old).__module__}.{type(old).__qualname__}; "
            f"got another class {cls.__module__}.{cls.__qualname__}"
        )
    known = scheme_settings()
    for key, setting in cls.settings.items():
        if key in known and known[key] != setting:
            raise PosKernelsError(
                f"scheme {name!r}: setting {key!r} is declared by another scheme as {known[key]}; a shared setting "
                f"needs the same default and range, got {setting}"
            )
    if key_clash := [k for k in cls.settings if k in _HEAD_FIELDS]:
        raise PosKernelsError(f"scheme {name!r}: setting {key_clash[0]!r} is a field of every head; name it otherwise")
    instance = scheme if isinstance(scheme, Scheme) else cls()
    SCHEMES[name] = instance
    return instance


#: The fields every head has (:class:`poskernels.model.config.HeadConfig`): no scheme setting may take one's name.
_HEAD_FIELDS = frozenset({"scheme", "d", "vocab", "embedding", "n_classes", "n_train", "base", "embed_scale",
                          "map_scale", "settings"})  # fmt: skip


def _same_class(a: type, b: type) -> bool:
    """The same class, or the same file's class loaded again (same module name, qualified name and source)."""
    if a is b:
        return True
    if (a.__module__, a.__qualname__) != (b.__module__, b.__qualname__):
        return False
    try:
        return inspect.getsource(a) == inspect.getsource(b)
    except (OSError, TypeError):
        return False
