"""Read a head far past its window: one query over ``n`` keys in chunks, with a running softmax.

:func:`poskernels.model.engine.one_head.query_forward` scores every key of a sequence at once (``(B, n)`` arrays, and a
``(U, n, V)`` table for RoPE).  :func:`stream_logits` reads the same query over the keys in chunks of ``chunk``
positions and keeps, per sequence, a running maximum ``m``, a normalizer ``Z = sum_j e^{z_j - m}`` and a weighted
value ``N = sum_j e^{z_j - m} v_j W_O``; a chunk that raises the maximum to ``m'`` rescales both by ``e^{m - m'}``.
The logits are ``N / Z``, the one-pass reader's (the tests check every scheme and every reading), and memory
beyond the token array is ``O(V B chunk)`` whatever ``n``.  The pass itself is
:func:`~poskernels.model.engine.chunk_pass.read_pass`, in one of two ways, chosen by the batch:

* fewer sequences than tokens (one query over ``10^6`` keys): each key's own score only, ``B`` scores and
  exponentials a column, at its row's running maximum
  (:func:`~poskernels.model.engine.chunk_scores.key_scores`); a rotary head's key is one dot product of ``2P``
  numbers with a fixed table of turns (:func:`~poskernels.model.engine.chunk_scores.rotary_factors`), never a
  complex exponential;
* more: when every sequence ends in the same query token (the cue task), each chunk of every head goes through one
  sparse product that groups the keys by token, one nonzero per key; otherwise each head gathers its scores key by
  key from the chunk's table.

Per-token embeddings come only from :func:`poskernels.model.head.token_table`.

Two shortcuts, each read off the scheme (:class:`poskernels.encodings.Scheme`):

* ``far_past`` (exact): past the offset ``R0`` where a relative bias stops changing (NoPE from 0, Shaw past its
  clip, T5 in its last bucket), keys differ only by their token, so they enter as token counts (a logit scale that
  grows with the key count, the scaled softmax's ``s log n``, is one number per query, the same for every key it
  reads, so the count stays exact);
* a certified cut (Theorem 3 (ii)): keys of a head whose bias is exactly ``-s r`` (ALiBi, ``linear_slope``) or
  whose tail bound is finite (Kerple, ``tail_bound``) past its cut ``D``
  (:func:`poskernels.model.engine.cut.certified_cut`) are dropped, ``O(D)`` per query whatever ``n``, with dropped
  weight ``<= eps``.

Examples
--------
>>> from poskernels.model.head import init_params
>>> from poskernels.model.engine.one_head import query_logits
>>> from poskernels.tasks.cue import cue_batch
>>> cfg = HeadConfig(scheme="rope")
>>> p = init_params(cfg, np.random.default_rng(0))
>>> x, _ = cue_batch(np.random.default_rng(1), 3, 300)
>>> bool(np.allclose(stream_logits(p, cfg, x, chunk=64), query_logits(p, cfg, x)))
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import PosKernelsError, check_positive_int
from ..config import HeadConfig
from ..reading import PLAIN, Reading, check_tokens, read_positions
from ..validate import check_params
from .chunk_pass import read_pass
from .chunk_scores import chunk_table, plan_head
from .cut import check_eps, has_cut

__all__ = [
    "recent_weights",
    "stream_logits",
    "stream_many",
]

_TINY = 1e-250  # a normalizer below this (relative to its running maximum) is recomputed row by row


class _Arange:
    """Positions ``0..n-1`` made a slice at a time (so the default positions take no ``O(n)`` memory)."""

    def __init__(self, n: int):
        self.size = n

    def __getitem__(self, key: slice) -> np.ndarray:
        return np.arange(self.size, dtype=float)[key] if key.step else np.arange(*key.indices(self.size), dtype=float)


def _check_heads(heads) -> list:
    """``heads`` as a list of ``(params, HeadConfig, Reading)`` triples, else an error naming the entry."""
    if isinstance(heads, str | bytes | dict) or not isinstance(heads, Sequence):
        raise PosKernelsError(f"heads must be a sequence of (params, cfg, reading) triples; got {type(heads).__name__}")
    for i, head in enumerate(heads):
        ok = isinstance(head, tuple | list) and len(head) == 3
        if not (ok and isinstance(head[0], dict) and isinstance(head[1], HeadConfig) and isinstance(head[2], Reading)):
            kinds = f"({', '.join(type(h).__name__ for h in head)})" if isinstance(head, tuple | list) else None
            shown = kinds or type(head).__name__
            raise PosKernelsError(f"heads[{i}] must be a (params dict, HeadConfig, Reading) triple; got {shown}")
        check_params(head[0], head[1])
    return list(heads)


def stream_many(heads: Sequence, tokens, positions=None, chunk: int = 4096, eps: float | None = None) -> list:
    """Logits at the last position of each sequence, for several heads sharing one pass over the tokens.

    Parameters
    ----------
    heads : sequence of (params, cfg, reading)
        Each head and how it is read (``reading`` as in :func:`poskernels.model.engine.one_head.query_forward`).
    tokens : ndarray of int, shape (B, n)
        Token ids (any integer dtype; ``uint8`` keeps long test sets small); the last column is the query.
    positions : array_like, shape (n,), optional
        Absolute positions (default ``0..n-1``).  The count shortcut and the cut need the default.
    chunk : int
        Key positions per step; a step holds ``(V, chunk, heads)`` weights and ``B chunk`` key indices, so keep
        ``B chunk`` near ``2^19`` for a large batch.
    eps : float, optional
        Read the heads that have a certified cut (:func:`poskernels.model.engine.cut.has_cut`: ALiBi, Kerple with a
        light tail) only back to it (:func:`certified_cut`); the other heads are read in full.

    Returns
    -------
    list of ndarray, shape (B, C) each

    Raises
    ------
    PosKernelsError
        If ``chunk`` is not a positive integer, ``eps`` is not in ``(0, 1)``, a head or the tokens are refused, or
        the heads do not share a vocabulary.

    Examples
    --------
    An ALiBi and a RoPE head read in one pass, chunk by chunk, equal each head read whole:

    >>> from poskernels.model.engine.one_head import query_forward
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> x, _ = cue_batch(np.random.default_rng(1), 2, 50)
    >>> alibi, rope = HeadConfig(scheme="alibi"), HeadConfig(scheme="rope")
    >>> pa, pr = init_params(alibi, np.random.default_rng(0)), init_params(rope, np.random.default_rng(0))
    >>> za, zr = stream_many([(pa, alibi, PLAIN), (pr, rope, PLAIN)], x, chunk=16)
    >>> bool(np.allclose(za, query_forward(pa, alibi, x)[0])), bool(np.allclose(zr, query_forward(pr, rope, x)[0]))
    (True, True)
    """
    chunk = check_positive_int("chunk", chunk)
    if eps is not None:
        check_eps(eps)
    heads = _check_heads(heads)
    if not heads:
        return []
    cfg0 = heads[0][1]
    tokens = _check_stream_tokens(cfg0, tokens)
    B, n = tokens.shape
    chunk = min(chunk, n)  # a step never holds more than the sequence (chunk = 10**12 would size tables by it)
    default_pos = positions is None
    pos = _Arange(n) if default_pos else read_positions(positions, n)
    xq = tokens[:, -1].astype(np.int64)
    uq, iq = (xq[:1], None) if (xq == xq[0]).all() else np.unique(xq, return_inverse=True)
    plans, out = [], []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # weights past float64: refused below
        for params, cfg, reading in heads:
            if cfg.vocab != cfg0.vocab:
                raise PosKernelsError(f"heads read together must share a vocabulary; got {cfg0.vocab} and {cfg.vocab}")
            cut_eps = eps if has_cut(params, cfg) else None
            plans.append(plan_head(params, cfg, reading, uq, pos, cut_eps, default_pos, chunk))
        for p, st in zip(plans, read_pass(plans, tokens, pos, iq, chunk, rowwise=False)):
            Z = st.mass.sum(axis=1)  # (B,)
            bad = np.flatnonzero(~(Z > _TINY))
            if bad.size:  # every key of these rows scored far below the chunk maxima: redo them with per-row maxima
                exact = read_pass([p], tokens[bad], pos, None if iq is None else iq[bad], chunk, rowwise=True)[0]
                st.mass[bad], st.code[bad] = exact.mass, exact.code
                Z = st.mass.sum(axis=1)
            out.append((st.mass @ p.G + st.code) / Z[:, None])  # (B, C)
    _check_finite(out, heads)
    return out


def _check_stream_tokens(cfg0, tokens) -> np.ndarray:
    """``tokens`` as a non-empty 2-d integer array whose queries are ids of ``cfg0``, else :class:`PosKernelsError`."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or tokens.shape[1] < 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise PosKernelsError(f"tokens must be a 2-d integer array (batch, n); got {tokens.dtype} {tokens.shape}")
    if tokens.shape[0] == 0:
        raise PosKernelsError(f"tokens must hold at least one sequence (batch >= 1); got shape {tokens.shape}")
    check_tokens(cfg0, tokens[:, -1:])  # the queries; every other column is checked as its chunk is read
    return tokens


def _check_finite(out: list, heads: list) -> None:
    """Refuse a head whose logits are not finite (a NaN logit is an argmax of class 0: a wrong accuracy, silently)."""
    for i, (logits, (params, cfg, _)) in enumerate(zip(out, heads)):
        if not np.isfinite(logits).all():
            top = max((float(np.abs(v).max()) for v in params.values() if np.size(v)), default=0.0)
            raise PosKernelsError(
                f"heads[{i}] ({cfg.scheme}): its scores or values overflow float64 (largest |weight| {top:.3g}), "
                "or its weights hold NaN: no finite logits to read"
            )


def stream_logits(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, chunk: int = 4096, eps=None
) -> np.ndarray:
    """Logits at the last position of each sequence, read in chunks of keys (one head; see :func:`stream_many`).

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters.
    cfg : HeadConfig
        The head.
    tokens, positions, chunk, eps
        As for :func:`stream_many`.
    reading : Reading
        How the head is read.

    Returns
    -------
    ndarray, shape (B, C)

    Raises
    ------
    PosKernelsError
        As :func:`stream_many`.

    Examples
    --------
    >>> from poskernels.model.engine.one_head import query_forward
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> x, _ = cue_batch(np.random.default_rng(1), 2, 50)
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> bool(np.allclose(stream_logits(p, cfg, x, chunk=7), query_forward(p, cfg, x)[0]))
    True
    """
    return stream_many([(params, cfg, reading)], tokens, positions, chunk, eps)[0]


def recent_weights(params: dict, cfg: HeadConfig, tokens, k: int, reading: Reading = PLAIN, chunk: int = 4096):
    """Attention weights of the last position on its ``k`` most recent keys, exact at the full length ``n``.

    The normalizer runs over all ``n`` keys (the streaming pass), the weights are returned for offsets
    ``r = 0..k-1`` only, so a query over ``10^5`` keys costs ``O(chunk)`` memory.

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters.
    cfg : HeadConfig
        The head.
    tokens : array_like of int, shape (B, n)
        Sequences; the last token is the query.
    k : int
        Recent keys returned (at most ``n``).
    reading : Reading
        How the head is read.
    chunk : int
        Key positions per step of the streaming pass.

    Returns
    -------
    ndarray, shape (B, k)
        Column ``r`` is the weight on the key ``r`` positions back (column 0: the query itself).

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.model.engine.one_head import query_forward
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, _ = cue_batch(np.random.default_rng(1), 2, 50)
    >>> a = query_forward(p, cfg, x)[1]["a"]  # (2, 50) all weights
    >>> bool(np.allclose(recent_weights(p, cfg, x, 10, chunk=16), a[:, ::-1][:, :10]))
    True
    """
    _check_heads([(params, cfg, reading)])
    tokens = check_tokens(cfg, tokens)
    B, n = tokens.shape
    k = min(check_positive_int("k", k), n)
    chunk = min(check_positive_int("chunk", chunk), n)  # chunk <= 0 would read no key at all
    pos = _Arange(n)
    xq = tokens[:, -1].astype(np.int64)
    uq, iq = np.unique(xq, return_inverse=True)
    plan = plan_head(params, cfg, reading, uq, pos, None, False, chunk)  # every key read, no shortcut
    st = read_pass([plan], tokens, pos, iq, chunk, rowwise=True)[0]
    logZ = st.m + np.log(st.mass.sum(axis=1))  # (B,)
    table, _ = chunk_table(plan, pos[n - k :], pos[n - 1 :] - pos[n - k :])  # (U, k, V)
    x = tokens[:, n - k :].astype(np.int64)  # (B, k)
    z = table.ravel()[(iq[:, None] * k + np.arange(k)) * table.shape[2] + x]  # (B, k)
    return np.exp(z - logZ[:, None])[:, ::-1]  # (B, k), offsets 0..k-1
