"""Read a head far past its window: one query over ``n`` keys in chunks, with a running softmax.

:func:`poskernels.model.head.query_forward` scores every key of a sequence at once (``(B, n)`` arrays, and a
``(U, n, V)`` table for RoPE).  :func:`stream_logits` reads the same query over the keys in chunks of ``chunk``
positions and keeps, per sequence, a running maximum ``m``, a normalizer ``Z = sum_j e^{z_j - m}`` and a weighted
value ``N = sum_j e^{z_j - m} v_j W_O``; a chunk that raises the maximum to ``m'`` rescales both by ``e^{m - m'}``.
The logits are ``N / Z``, the one-pass reader's (the tests check every scheme and every reading), and memory
beyond the token array is ``O(V B chunk)`` whatever ``n``.  Two passes, chosen by the batch (:func:`_per_key`):

* fewer sequences than tokens (one query over ``10^6`` keys): each key's own score only, ``B`` scores and
  exponentials a column, at its row's running maximum (:func:`_key_scores`); a rotary head's key is one dot
  product of ``2P`` numbers with a fixed table of turns (:func:`_rotary_factors`), never a complex exponential;
* more: when every sequence ends in the same query token (the cue task), each chunk of every head goes through one
  sparse product that groups the keys by token, one nonzero per key (:func:`_absorb_products`); otherwise each
  head gathers its scores key by key from the chunk's table.

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
>>> from poskernels.model.head import init_params, query_logits
>>> from poskernels.tasks.cue import cue_batch
>>> cfg = HeadConfig(scheme="rope")
>>> p = init_params(cfg, np.random.default_rng(0))
>>> x, _ = cue_batch(np.random.default_rng(1), 3, 300)
>>> bool(np.allclose(stream_logits(p, cfg, x, chunk=64), query_logits(p, cfg, x)))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...encodings import SCHEMES, Scheme
from ...errors import PosKernelsError, check_positive_int
from ..config import HeadConfig
from ..embedding import token_table
from ..reading import PLAIN, Reading, check_tokens, frequencies, read_positions
from ..validate import check_params
from .cut import certified_cut, check_eps, has_cut
from .key_chunks import KeyChunk, token_rows

__all__ = [
    "recent_weights",
    "stream_logits",
    "stream_many",
]

_TINY = 1e-250  # a normalizer below this (relative to its running maximum) is recomputed row by row


@dataclass(frozen=True)
class _Plan:
    """One head and its reading, prepared for the chunks (every array is the same for every chunk)."""

    params: dict
    cfg: HeadConfig
    reading: Reading
    theta: np.ndarray | None  # (P,) rotary frequencies, or None
    q: np.ndarray  # (U, d) query of each distinct query token
    lam: float  # the logit scale lambda
    content: np.ndarray  # (U, V) content score q_u k_v^T lambda / tau (unrotated)
    G: np.ndarray  # (V, C) each token's value, read out: (E W_V W_O)[v]
    additive: bool  # the scheme adds a code p(m) to the embedding
    start: int  # first key column read (0, or the cut's / the constant past's first column)
    past: int | None  # columns [0, past) enter as token counts (the scheme's far_past), or None
    spin: np.ndarray | None  # (chunk, 2P) Re and -Im of e^{i k theta}, k = 0..chunk-1 (rotary, integer positions)
    w: np.ndarray | None  # (U, P, V) complex conj(q_p) k_p for every key token (rotary heads), or None
    t: float  # the query's position


class _Arange:
    """Positions ``0..n-1`` made a slice at a time (so the default positions take no ``O(n)`` memory)."""

    def __init__(self, n: int):
        self.size = n

    def __getitem__(self, key: slice) -> np.ndarray:
        return np.arange(self.size, dtype=float)[key] if key.step else np.arange(*key.indices(self.size), dtype=float)


def _plan(params, cfg, reading, uq, pos, eps, default_pos, chunk) -> _Plan:
    scheme = SCHEMES[cfg.scheme]
    theta = frequencies(cfg, reading)
    n = pos.size
    tok = token_table(params, cfg)  # (V, d)
    hq = tok[uq]  # (U, d)
    code_q = scheme.code(params, cfg, pos[-1:])  # (1, d) or None; a learned table refuses past its length here
    if code_q is not None:
        if theta is not None:
            raise PosKernelsError(f"scheme {cfg.scheme!r} is both additive and rotary; the head supports one")
        hq = hq + code_q[0]
    q = hq @ params["W_Q"]  # (U, d)
    if scheme.scale_grows:  # lambda = s log n of the n keys this query sees, the same for every key: the far past holds
        lam = float(np.asarray(scheme.logit_scale_at({k: v[None] for k, v in params.items()}, cfg, reading, n))[0])
    else:
        lam = scheme.logit_scale(cfg, reading)
    content = q @ (tok @ params["W_K"]).T  # (U, V)
    content = content / cfg.tau if lam == 1.0 else content * (lam / cfg.tau)
    G = tok @ params["W_V"] @ params["W_O"]  # (V, C)
    start, past = 0, None
    if eps is not None:
        if not default_pos:
            raise PosKernelsError("the certified cut reads integer offsets: pass positions=None with eps")
        start = max(0, n - 1 - certified_cut(params, cfg, uq, eps).D)
    elif default_pos and code_q is None and theta is None and (R0 := scheme.far_past(cfg)) is not None:
        past = max(0, n - R0)  # columns j < past have offsets r >= R0
        start = past
    spin, w = None, None
    if theta is not None:  # Proposition 3 (i), the part that is the same for every chunk (see _rotary_factors)
        kc = (tok @ params["W_K"]).view(np.complex128)  # (V, P)
        w = q.view(np.complex128).conj()[:, :, None] * kc.T[None]  # (U, P, V)
        if default_pos:
            e = np.exp(1j * np.arange(chunk)[:, None] * theta)  # (chunk, P)
            spin = np.concatenate([e.real, -e.imag], axis=1)  # (chunk, 2P)
    t = float(pos[n - 1 :][0])
    return _Plan(params, cfg, reading, theta, q, lam, content, G, code_q is not None, start, past, spin, w, t)


def _rotary_factors(plan: _Plan, r_c: np.ndarray, shared: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """``(left (c, 2P), right (U, 2P, V))`` whose product is a rotary head's chunk of scores before ``lambda / tau``.

    Proposition 3 (i): ``<R(t) q, R(j) k> = <q, R(j - t) k> = Re sum_p w_p e^{-i r theta_p}`` with
    ``w_p = conj(q_p) k_p``, in real arithmetic ``sum_p Re(e_p) Re(w_p) - Im(e_p) Im(w_p)``.  At integer offsets
    ``r_0, r_0 - 1, ...`` the turn splits, ``e^{-i r theta} = e^{-i r_0 theta} e^{i k theta}``: the chunk's
    ``e^{-i r_0 theta}`` turns the ``(U, P, V)`` products ``w`` (a few hundred numbers) and every key of every chunk
    reads the same fixed ``e^{i k theta}`` table, so no chunk computes a ``(c, P)`` turn.  At other positions
    the turn of each key is computed (``shared``, one dict per chunk, keeps it for the heads of one reading)."""
    if plan.spin is not None:
        a = plan.w * np.exp(-1j * r_c[0] * plan.theta)[None, :, None]  # (U, P, V)
        return plan.spin[: r_c.size], np.concatenate([a.real, a.imag], axis=1)
    key = (plan.theta.tobytes(), r_c.tobytes())
    trig = None if shared is None else shared.get(key)
    if trig is None:
        e = np.exp(-1j * r_c[:, None] * plan.theta)  # (c, P)
        trig = np.concatenate([e.real, -e.imag], axis=1)  # (c, 2P)
        if shared is not None:
            shared[key] = trig
    return trig, np.concatenate([plan.w.real, plan.w.imag], axis=1)


def _chunk_table(plan: _Plan, pos_c: np.ndarray, r_c: np.ndarray, shared: dict | None = None):
    """Scores ``(U, c, V)`` of every token at every position of the chunk, and the code's read-out value ``(c, C)``.

    ``shared`` (one dict per chunk) keeps the rotary heads' turns at positions that are not integers and a
    parameter-free code: the heads of one reading share them, so the seeds of a reading compute them once."""
    params, cfg = plan.params, plan.cfg
    scheme = SCHEMES[cfg.scheme]
    U, c = plan.q.shape[0], pos_c.size
    pvo = None
    if plan.theta is not None:
        left, right = _rotary_factors(plan, r_c, shared)  # (c, 2P), (U, 2P, V)
        table = left @ right * (plan.lam / cfg.tau)  # (U, c, V)
    else:
        table = np.broadcast_to(plan.content[:, None, :], (U, c, plan.content.shape[1]))  # (U, c, V)
        if plan.additive:
            # a scheme with no parameters of its own (the sinusoidal code) has the same code for every head
            key = ("code", cfg, float(pos_c[0]), c) if type(scheme).init is Scheme.init else None
            code = None if shared is None or key is None else shared.get(key)
            if code is None:
                code = scheme.code(params, cfg, pos_c)  # (c, d)
                if shared is not None and key is not None:
                    shared[key] = code
            pz = plan.q @ (code @ params["W_K"]).T  # (U, c)
            pz = pz / cfg.tau if plan.lam == 1.0 else pz * (plan.lam / cfg.tau)
            table = table + pz[:, :, None]  # (U, c, V)
            pvo = code @ params["W_V"] @ params["W_O"]  # (c, C)
    bias = scheme.bias_at(params, cfg, plan.q, r_c, plan.t)  # (U, c) or (c,) or None
    if bias is not None:
        table = table + np.broadcast_to(bias, (U, c))[:, :, None]
    return table, pvo


def _key_scores(plan: _Plan, pos_c: np.ndarray, r_c: np.ndarray, x: np.ndarray, iq, buffers: dict):
    """Scores ``(B, c)`` of each key's own token, and the code's read-out ``(c, C)`` (the per-key pass).

    A head with no code scores ``content[u, x_j] + b(r_j)`` (gathered, never a ``(c, V)`` table); a rotary head with
    few rows takes each key's ``2P`` factors (:func:`_rotary_factors`, its token's row of the turned ``w``) and
    one dot product with the fixed spin table, where the table would cost ``V`` products a key; otherwise the
    chunk's table (:func:`_chunk_table`) is read at each key's token."""
    B, c = x.shape
    U, V = plan.content.shape
    if plan.theta is not None and B * _TABLE_ENTRIES_A_KEY <= V:
        left, right = _rotary_factors(plan, r_c, None)  # (c, 2P), (U, 2P, V)
        toks = np.ascontiguousarray((right * (plan.lam / plan.cfg.tau)).transpose(0, 2, 1))  # (U, V, 2P)
        if ("keys", B, c) not in buffers:  # reused: fresh arrays each chunk cost more than the arithmetic
            buffers["keys", B, c] = np.empty((B, c, left.shape[1])), np.empty((B, c))
        keys, z = buffers["keys", B, c]  # (B, c, 2P), (B, c)
        if iq is None:  # "wrap" skips a bounds check per key (4x faster): KeyChunk checked the ids are in [0, V)
            np.take(toks[0], x, axis=0, out=keys, mode="wrap")
        else:
            keys[...] = toks[iq[:, None], x]
        np.einsum("ck,bck->bc", left, keys, out=z)  # (B, c), overwritten by the next chunk: read before then
        pvo = None
    elif plan.theta is None and not plan.additive:
        z = plan.content[0][x] if iq is None else plan.content[iq[:, None], x]  # (B, c)
        pvo = None
    else:
        table, pvo = _chunk_table(plan, pos_c, r_c)  # (U, c, V)
        z = table[0][np.arange(c), x] if iq is None else table[iq[:, None], np.arange(c), x]  # (B, c)
        return z, pvo
    bias = SCHEMES[plan.cfg.scheme].bias_at(plan.params, plan.cfg, plan.q, r_c, plan.t)  # (U, c) or (c,) or None
    if bias is not None:
        bias = np.broadcast_to(bias, (U, c))
        z = z + (bias[0] if iq is None else bias[iq])  # (B, c)
    return z, pvo


#: A gathered key (its ``2P`` factors, one dot product) costs about as much as this many entries of the ``(c, V)``
#: table one matrix product fills: at ``P = 8``, ``V = 17``, one BLAS thread, a column of 4,096 keys took ~10 ns a
#: key gathered against ~30 ns a key for the product (so with 17 tokens, up to 3 rows are gathered).
_TABLE_ENTRIES_A_KEY = 5


class _State:
    """Running maximum (per row), normalizer mass per token ``(B, V)`` and the code's read-out ``(B, C)``."""

    def __init__(self, B: int, V: int, C: int):
        self.m = np.full(B, -np.inf)  # (B,)
        self.mass = np.zeros((B, V))  # (B, V): sum over keys of token v of e^{z - m}
        self.code = np.zeros((B, C))  # (B, C): sum of e^{z - m} p(j) W_V W_O

    def rescale(self, new_m: np.ndarray) -> None:
        f = np.exp(self.m - new_m)  # (B,); e^{-inf} = 0 before the first key
        self.mass *= f[:, None]
        self.code *= f[:, None]
        self.m = new_m


def _absorb(st: _State, z_or_e, flat, rowwise: bool, m_rows, pvo):
    """Add one chunk (``flat``: each key's index into the ``(B, V)`` mass): ``rowwise`` takes scores ``z (B, c)``,
    otherwise weights ``e^{z - m}`` already at the rows' maxima ``m_rows``."""
    B, V = st.mass.shape
    if rowwise:
        new_m = np.maximum(st.m, z_or_e.max(axis=1))  # (B,)
        st.rescale(new_m)
        a = np.exp(z_or_e - new_m[:, None])  # (B, c)
    else:
        st.rescale(m_rows)
        a = z_or_e
    st.mass += np.bincount(flat.ravel(), weights=a.ravel(), minlength=B * V).reshape(B, V)
    if pvo is not None:
        st.code += a @ pvo  # (B, C)


def _absorb_products(plans, states, mu, ch: KeyChunk, b: int, pos, n: int, buffers: dict) -> None:
    """Add one chunk for every head at once when all rows share the query token.

    With ``e[j, v] = e^{z(j, v) - m}`` a head's weights, the mass of sequence ``b`` on token ``v`` is the sum of
    ``e[j, v]`` over its keys ``j`` holding ``v``: one sparse product
    (:func:`~poskernels.model.engine.key_chunks.token_rows`, one nonzero per key) with the ``(V c, K)`` weights of
    the ``K`` heads, instead of a gather and a bincount per key and head (or a dense product with ``V`` token
    indicators, ``V`` times the arithmetic).
    """
    B, c = ch.x.shape
    V = ch.V
    active = [k for k, p in enumerate(plans) if max(ch.a0, p.start) < b]
    if not active:
        return
    E = np.empty((V, c, len(active)))  # (V, c, K): the weights of the heads read in this chunk, for one product
    shared: dict = {}
    for at, k in enumerate(active):
        p = plans[k]
        lo = max(ch.a0, p.start)
        pos_c = pos[lo:b]  # (c_k,)
        table, pvo = _chunk_table(p, pos_c, pos[n - 1 :] - pos_c, shared)  # (1, c_k, V), (c_k, C) or None
        mu[k] = np.maximum(mu[k], table.max(axis=(1, 2)))  # (1,)
        if not (states[k].m == mu[k][0]).all():  # a factor e^0 = 1 would change nothing
            states[k].rescale(np.full(B, mu[k][0]))
        E[:, : lo - ch.a0, at] = 0.0  # keys before the head's first column weigh nothing
        np.exp(table[0].T - mu[k][0], out=E[:, lo - ch.a0 :, at])  # (V, c_k)
        if pvo is not None:  # the code's read-out needs each key's own weight e[j, x_bj]
            # a head without rotation scores content_v + (a part of the position alone), so the weight factors as
            # e^{content_v - content_w} e^{z(j, w) - m} (w its best token): a gather from V values, one product
            w = int(np.argmax(p.content[0]))
            ed = np.zeros(c)  # (c,) keys before the head's first column weigh nothing
            ed[lo - ch.a0 :] = np.exp(table[0, :, w] - mu[k][0])
            if ("gather", B, c) not in buffers:  # reused: a fresh (B, c) array each time costs page faults
                buffers["gather", B, c] = np.empty((B, c))
            factor = np.exp(p.content[0] - p.content[0, w])  # (V,); "wrap": no bounds check, KeyChunk checked the ids
            weights = np.take(factor, ch.x, out=buffers["gather", B, c], mode="wrap")  # (B, c)
            pvo = np.concatenate([np.zeros((lo - ch.a0, pvo.shape[1])), pvo]) if lo > ch.a0 else pvo  # (c, C)
            states[k].code += weights @ (ed[:, None] * pvo)  # (B, c) @ (c, C)
    out = (token_rows(ch, buffers) @ E.reshape(V * c, -1)).reshape(V, B, -1)  # (V, B, K)
    for at, k in enumerate(active):
        states[k].mass += out[:, :, at].T  # (B, V)


def _per_key(B: int, V: int) -> bool:
    """Whether a pass over ``B`` sequences scores each key's own token (``B`` scores a column, each row with its own
    maximum) rather than weighing every token of the table (``V`` exponentials a column, one sparse product)."""
    return B < V


def _read(plans, tokens, pos, iq, chunk, rowwise) -> list[_State]:
    B, n = tokens.shape
    V = plans[0].content.shape[1]
    states = [_State(B, V, p.G.shape[1]) for p in plans]
    mu = [np.full(p.q.shape[0], -np.inf) for p in plans]  # running table maximum per query token
    first = min(p.start for p in plans)
    buffers: dict = {}
    rowwise = rowwise or _per_key(B, V)  # few rows: each key's own score, at its row's running maximum
    for b in range(n, first, -chunk):  # chunks from the query backwards
        ch = KeyChunk(tokens, max(first, b - chunk), b, V)
        if iq is None and not rowwise:  # one query token: every head's chunk in one batched product
            _absorb_products(plans, states, mu, ch, b, pos, n, buffers)
            continue
        for k, p in enumerate(plans):
            lo = max(ch.a0, p.start)
            if lo >= b:
                continue
            cut = lo - ch.a0  # columns of this chunk before the head's first key
            pos_c = pos[lo:b]  # (c,)
            x, flat = ch.x[:, cut:], ch.flat[:, cut:]  # (B, c)
            if rowwise:  # each key's own score (B, c): B exponentials a column
                z, pvo = _key_scores(p, pos_c, pos[n - 1 :] - pos_c, x, iq, buffers)
                _absorb(states[k], z, flat, True, None, pvo)
                continue
            table, pvo = _chunk_table(p, pos_c, pos[n - 1 :] - pos_c)
            U, c = table.shape[:2]
            idx = ch.idx[:, cut:] - V * cut if iq is None else (iq[:, None] * c + np.arange(c)) * V + x  # (B, c)
            mu[k] = np.maximum(mu[k], table.reshape(U, -1).max(axis=1))  # (U,)
            e = np.exp(table - mu[k][:, None, None])  # (U, c, V)
            m_rows = mu[k][iq] if iq is not None else np.full(B, mu[k][0])
            _absorb(states[k], e.ravel()[idx], flat, False, m_rows, pvo)
    past = [p.past for p in plans if p.past]
    base, counts_at = min(past, default=0), None
    for k, p in enumerate(plans):
        if not p.past:
            continue
        if counts_at is None:  # token counts of the columns every constant-past head shares, once
            counts_at = _counts(tokens, 0, base, V, chunk)
        counts = counts_at + _counts(tokens, base, p.past, V, chunk)  # keys at offsets r >= R0
        table, _ = _chunk_table(p, pos[p.past - 1 : p.past], pos[-1:] - pos[p.past - 1 : p.past])  # (U, 1, V)
        t = table[:, 0, :][iq] if iq is not None else np.broadcast_to(table[0, 0], (B, V))  # (B, V)
        st = states[k]
        present = np.where(counts > 0, t, -np.inf)  # (B, V)
        new_m = np.maximum(st.m, present.max(axis=1)) if rowwise else np.maximum(st.m, t.max(axis=1))
        st.rescale(new_m)
        st.mass += counts * np.exp(t - new_m[:, None])
    return states


def _counts(tokens: np.ndarray, lo: int, hi: int, V: int, chunk: int) -> np.ndarray:
    """``(B, V)`` count of each token id in columns ``[lo, hi)``."""
    B = tokens.shape[0]
    counts = np.zeros((B, V))
    for a0 in range(lo, hi, chunk):
        x = tokens[:, a0 : min(hi, a0 + chunk)].astype(np.int64)  # (B, c)
        if x.size and (x.min() < 0 or x.max() >= V):
            raise PosKernelsError(f"token ids must lie in [0, {V - 1}]; got {x.min()}..{x.max()}")
        counts += np.bincount((x + V * np.arange(B)[:, None]).ravel(), minlength=B * V).reshape(B, V)
    return counts


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
        Each head and how it is read (``reading`` as in :func:`poskernels.model.head.query_forward`).
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
    """
    chunk = check_positive_int("chunk", chunk)
    if eps is not None:
        check_eps(eps)
    heads = _check_heads(heads)
    if not heads:
        return []
    cfg0 = heads[0][1]
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or tokens.shape[1] < 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise PosKernelsError(f"tokens must be a 2-d integer array (batch, n); got {tokens.dtype} {tokens.shape}")
    if tokens.shape[0] == 0:
        raise PosKernelsError(f"tokens must hold at least one sequence (batch >= 1); got shape {tokens.shape}")
    check_tokens(cfg0, tokens[:, -1:])  # the queries; every other column is checked as its chunk is read
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
            plans.append(_plan(params, cfg, reading, uq, pos, cut_eps, default_pos, chunk))
        for p, st in zip(plans, _read(plans, tokens, pos, iq, chunk, rowwise=False)):
            Z = st.mass.sum(axis=1)  # (B,)
            bad = np.flatnonzero(~(Z > _TINY))
            if bad.size:  # every key of these rows scored far below the chunk maxima: redo them with per-row maxima
                exact = _read([p], tokens[bad], pos, None if iq is None else iq[bad], chunk, rowwise=True)[0]
                st.mass[bad], st.code[bad] = exact.mass, exact.code
                Z = st.mass.sum(axis=1)
            out.append((st.mass @ p.G + st.code) / Z[:, None])  # (B, C)
    for i, (logits, (params, cfg, _)) in enumerate(zip(out, heads)):
        if not np.isfinite(logits).all():  # a NaN logit is an argmax of class 0: a wrong accuracy, silently
            top = max((float(np.abs(v).max()) for v in params.values() if np.size(v)), default=0.0)
            raise PosKernelsError(
                f"heads[{i}] ({cfg.scheme}): its scores or values overflow float64 (largest |weight| {top:.3g}), "
                "or its weights hold NaN: no finite logits to read"
            )
    return out


def stream_logits(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, chunk: int = 4096, eps=None
) -> np.ndarray:
    """Logits at the last position of each sequence, read in chunks of keys (one head; see :func:`stream_many`).

    Returns
    -------
    ndarray, shape (B, C)
    """
    return stream_many([(params, cfg, reading)], tokens, positions, chunk, eps)[0]


def recent_weights(params: dict, cfg: HeadConfig, tokens, k: int, reading: Reading = PLAIN, chunk: int = 4096):
    """Attention weights of the last position on its ``k`` most recent keys, exact at the full length ``n``.

    The normalizer runs over all ``n`` keys (the streaming pass), the weights are returned for offsets
    ``r = 0..k-1`` only, so a query over ``10^5`` keys costs ``O(chunk)`` memory.

    Returns
    -------
    ndarray, shape (B, k)
        Column ``r`` is the weight on the key ``r`` positions back (column 0: the query itself).

    Examples
    --------
    >>> from poskernels.model.head import init_params, query_forward
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
    plan = _plan(params, cfg, reading, uq, pos, None, False, chunk)  # every key read, no shortcut
    st = _read([plan], tokens, pos, iq, chunk, rowwise=True)[0]
    logZ = st.m + np.log(st.mass.sum(axis=1))  # (B,)
    table, _ = _chunk_table(plan, pos[n - k :], pos[n - 1 :] - pos[n - k :])  # (U, k, V)
    x = tokens[:, n - k :].astype(np.int64)  # (B, k)
    z = table.ravel()[(iq[:, None] * k + np.arange(k)) * table.shape[2] + x]  # (B, k)
    return np.exp(z - logZ[:, None])[:, ::-1]  # (B, k), offsets 0..k-1
