"""The one-pass filing reader: a trained head asked "which company was named last?" at every position at once.

The question at position ``t`` of a filing is the cue task's sequence ``x_0 .. x_t, QUERY``: the filing's prefix
with the query token appended at position ``t + 1``.  The plain way to answer it everywhere runs the head's
forward pass once per position (:func:`read_filing_loop`, ``n`` passes over prefixes of growing length).  The
one-pass reader (:func:`read_filing`) computes every key and value of the filing once, puts a query token at each
of the positions ``1 .. n`` at once, and lets query ``t + 1`` attend to the keys ``j <= t`` and to itself:

    z_{t j} = <R(t+1) q_{t+1}, R(j) k_j> / tau + bias(t + 1 - j),  j <= t,     z_{t,self} = <q, k_QUERY> / tau + bias(0)

an ``(n, n + 1)`` score matrix instead of ``n`` forward passes, every score the head's one definition
(:func:`poskernels.model.score.score`); the tests check it equals the loop at every position for every scheme
and every reading.  A head whose weights decay exponentially in the offset is read as a recursive filter instead
(:mod:`poskernels.experiments.recursive_reader`); a named reader, each question at its ``kappa`` through a map, is
:func:`poskernels.experiments.filing_maps.read_filing_as`.  :func:`content_width` is the width ``W`` of an ALiBi
head's content scores, its horizon ``W / s``.

Examples
--------
>>> from poskernels.model import HeadConfig, init_params
>>> cfg = HeadConfig(scheme="alibi")
>>> params = init_params(cfg, np.random.default_rng(0))
>>> ids = np.random.default_rng(1).integers(0, 16, size=50)
>>> np.allclose(read_filing(params, cfg, ids), read_filing_loop(params, cfg, ids))
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encodings import SCHEMES, default_positions
from ..errors import PosKernelsError, check_int
from ..model.config import HeadConfig
from ..model.engine.cut import content_width as stream_content_width
from ..model.engine.one_head import query_forward
from ..model.engine.scores import pair_scores, scores
from ..model.head import Reading, token_table
from ..model.reading import PLAIN
from ..tasks.filings.tokens import QUERY
from .recursive_reader import _read_recursive, recursive_decay

__all__ = ["content_width", "read_filing", "read_filing_loop"]


def _check_ids(cfg: HeadConfig, ids) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise PosKernelsError(
            f"a filing's token ids must be a non-empty 1-d integer array; got {ids.dtype} {ids.shape}"
        )
    if ids.min() < 0 or ids.max() >= QUERY:
        raise PosKernelsError(
            f"a filing's token ids must lie in [0, {QUERY - 1}] (no query token); got {ids.min()}..{ids.max()}"
        )
    return ids


def _causal_mask(n: int) -> np.ndarray:
    """0 where question ``t``'s query (at ``t + 1``) sees key ``j <= t``, else -inf; shape (n, n), read-only: a corner
    of one mask kept for the longest filings (a corpus's 100 lengths, each read by every head in turn)."""
    return _causal_mask_upto(1 << max(0, n - 1).bit_length())[:n, :n]


@lru_cache(maxsize=4)
def _causal_mask_upto(size: int) -> np.ndarray:
    t = np.arange(size)
    mask = np.where(t[:, None] >= t[None, :], 0.0, -np.inf)  # (size, size)
    mask.setflags(write=False)
    return mask


def read_filing(
    params: dict, cfg: HeadConfig, ids, reading: Reading = PLAIN, method: str = "auto", start: int = 0
) -> np.ndarray:
    """Answer the question at every position of a filing in one pass.

    Parameters
    ----------
    params : dict of ndarray
        A head's weights (:func:`poskernels.model.head.init_params`).
    cfg : HeadConfig
        The head's configuration.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reading : Reading
        Frequencies and logit scale for a RoPE head (:func:`~poskernels.experiments.filing_maps.reader_reading`).
    method : str
        ``"matrix"``: the ``(n, n + 1)`` score matrix, for every scheme.  ``"recursive"``: the ``O(n d)`` filter of
        :func:`~poskernels.experiments.recursive_reader.recursive_decay`, for the heads it gives a decay.  ``"auto"``
        (default): recursive where it applies.
    start : int
        Ask only the questions ``t >= start`` (the rows ``start ..`` of the score matrix: a band of
        :func:`~poskernels.experiments.filing_maps.read_filing_as`).

    Returns
    -------
    ndarray, shape (n - start, C)
        Row ``t - start``: the logits of the head asked at ``t`` (query token at position ``t + 1``).

    Notes
    -----
    Without a code or a rotation the query vector is the same at every position, ``q = E[QUERY] W_Q``, so key
    ``j``'s content score ``c(x_j)`` does not depend on the question.  For ALiBi its weight in question ``t`` is
    ``e^{c(x_j)} rho^{t + 1 - j}`` with ``rho = e^{-s}`` (Theorem 3 (i): a content kernel times an exponential
    kernel in time), so the weighted sums over ``j <= t`` obey ``y_t = rho (y_{t-1} + e^{c(x_t)} v_t)``: a
    first-order recursive filter, one pass over the filing (``rho = 1`` without position: a running sum).

    Raises
    ------
    PosKernelsError
        If ``ids`` is not a non-empty 1-d array of content token ids, ``start`` is not a question of the filing,
        ``method`` is unknown, or ``"recursive"`` is asked of a head it does not apply to.

    Examples
    --------
    >>> from poskernels.model import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> ids = np.random.default_rng(1).integers(0, 16, size=50)
    >>> read_filing(params, cfg, ids).shape, read_filing(params, cfg, ids, start=40).shape
    ((50, 8), (10, 8))
    >>> np.allclose(read_filing(params, cfg, ids, method="recursive"), read_filing(params, cfg, ids, method="matrix"))
    True
    >>> read_filing(params, cfg, [16])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: a filing's token ids must lie in [0, 15] (no query token); got 16..16
    """
    ids = _check_ids(cfg, ids)
    start = check_int("start", start, 0, ids.size - 1, f"the questions of a filing of {ids.size} tokens")
    if method not in ("auto", "matrix", "recursive"):
        raise PosKernelsError(f"unknown method {method!r}; accepted: auto, matrix, recursive")
    rho = recursive_decay(cfg)
    if method == "recursive" and rho is None:
        recursive = sorted(n for n in SCHEMES if recursive_decay(HeadConfig(scheme=n)) is not None)
        raise PosKernelsError(f"the recursive reader needs a scheme of {recursive}; got {cfg.scheme!r} (use 'matrix')")
    if method != "matrix" and rho is not None:
        if not reading.is_plain:
            raise PosKernelsError(f"a rescaled reading applies to rotary heads only; this head is {cfg.scheme!r}")
        return _read_recursive(params, cfg, ids, rho)[start:]
    n, a = ids.size, start
    pos = default_positions(n + 1)  # (n + 1,) the filing at 0..n-1, the queries at 1..n
    code = SCHEMES[cfg.scheme].code(params, cfg, pos)  # (n + 1, d) or None, computed once for both
    E = token_table(params, cfg)  # (V, d)
    # (n, d) and (n - a, d): the filing's tokens, one query per question asked
    H, Hq = E[ids], np.broadcast_to(E[QUERY], (n - a, cfg.d))
    if code is not None:
        H, Hq = H + code[:n], Hq + code[a + 1 :]
    Q, K, V = Hq @ params["W_Q"], H @ params["W_K"], H @ params["W_V"]  # (n - a, d), (n, d), (n, d)
    Ks, Vs = Hq @ params["W_K"], Hq @ params["W_V"]  # (n - a, d) each: the query token's own key and value
    seen = np.arange(a, n) + 2.0  # (n - a,) question t sees t + 2 keys: the prefix 0..t and the query's own
    Z = scores(params, cfg, Q, pos[a + 1 :], K, pos[:n], reading, n=seen)  # (n - a, n): query t + 1 against key j
    if a == 0:
        Z += _causal_mask(n)
    else:  # a band's rows only: question t sees the keys j <= t
        Z[np.arange(n)[None, :] > np.arange(a, n)[:, None]] = -np.inf
    z_self = pair_scores(params, cfg, Q, pos[a + 1 :], Ks, pos[a + 1 :], reading, n=seen)  # (n - a,) own
    m = np.maximum(Z.max(axis=1), z_self)  # (n - a,)
    Z -= m[:, None]
    np.exp(Z, out=Z)  # (n - a, n) unnormalized weights, 0 past each question's prefix
    w_self = np.exp(z_self - m)  # (n - a,)
    out = Z @ V + w_self[:, None] * Vs  # (n - a, d)
    out /= (Z.sum(axis=1) + w_self)[:, None]
    return out @ params["W_O"]  # (n - a, C)


def read_filing_loop(params: dict, cfg: HeadConfig, ids, reading: Reading = PLAIN) -> np.ndarray:
    """The same answers by the plain forward pass, run separately at each position (the reference).

    Parameters
    ----------
    params : dict of ndarray
        A head's weights.
    cfg : HeadConfig
        The head's configuration.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reading : Reading, optional
        Frequencies and logit scale for a RoPE head (default as trained).

    Returns
    -------
    ndarray, shape (n, C)
        Row ``t``: the logits of the head asked at ``t``, one forward pass each.

    Raises
    ------
    PosKernelsError
        If ``ids`` is not a non-empty 1-d array of content token ids.

    Examples
    --------
    >>> from poskernels.model import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> ids = np.random.default_rng(1).integers(0, 16, size=50)
    >>> np.allclose(read_filing_loop(params, cfg, ids[:5]), read_filing(params, cfg, ids[:5]))
    True
    >>> read_filing_loop(params, cfg, [])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: a filing's token ids must be a non-empty 1-d integer array; got float64 (0,)
    """
    ids = _check_ids(cfg, ids)
    rows = []
    for t in range(ids.size):
        seq = np.append(ids[: t + 1], QUERY)[None, :]  # (1, t + 2): the prefix and the query
        rows.append(query_forward(params, cfg, seq, reading=reading)[0][0])
    return np.stack(rows)  # (n, C)


def content_width(params: dict, cfg: HeadConfig) -> float:
    """The content width ``W`` of an ALiBi (or position-free) head, read off its weights (Theorem 3).

    At the query the head's query vector is fixed, ``q = E[QUERY] W_Q``, and a key's content score
    ``c(v) = q (E[v] W_K)^T / tau`` depends only on its token ``v``.  ``W`` is the range of ``c`` over the
    vocabulary (the 16 content tokens and the query's own key): every content score of every filing lies in an
    interval of this width, so Theorem 3 (iii) holds with it, and ``W / s`` is the head's horizon.

    Parameters
    ----------
    params : dict of ndarray
        The head's weights.
    cfg : HeadConfig
        An ALiBi or position-free head (no code, no rotation).

    Returns
    -------
    float
        ``W = max_v c(v) - min_v c(v)``.

    Raises
    ------
    PosKernelsError
        If the head has a code or a rotation.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> T = token_table(p, cfg)
    >>> c = (T[QUERY] @ p["W_Q"]) @ (T @ p["W_K"]).T / cfg.tau
    >>> bool(np.isclose(content_width(p, cfg), c.max() - c.min()))
    True
    >>> content_width(p, HeadConfig(scheme="rope"))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the content width is defined for heads without a code or rotation; got 'rope'
    """
    return stream_content_width(params, cfg, [QUERY])  # one definition, through head.token_table
