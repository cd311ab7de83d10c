"""One pass of the streaming reader over the keys, chunk by chunk: each head's running softmax.

:func:`read_pass` reads the chunks from the query back (:mod:`poskernels.model.engine.stream` explains the two ways
a chunk is scored and the shortcuts).  Each head keeps, per sequence, a running maximum ``m``, the normalizer's
mass on each token ``sum_{j: x_j = v} e^{z_j - m}`` and the code's weighted read-out; a chunk that raises the
maximum to ``m'`` rescales both by ``e^{m - m'}`` (:class:`_State`).  A chunk enters by its keys' own scores
(:func:`_absorb`, each row at its own maximum), or, when every row ends in the same query token, every head's
weights of the chunk at once through one sparse product that groups the keys by token (:func:`_absorb_products`,
:func:`~poskernels.model.engine.key_chunks.token_rows`); the keys past a constant far past enter as token counts
(:func:`_counts`).
"""

from __future__ import annotations

import numpy as np

from ...errors import PosKernelsError
from .chunk_scores import chunk_table, key_scores
from .key_chunks import KeyChunk, token_rows

__all__ = ["read_pass"]

_GROUP = 32  # heads whose weights are exponentiated together before one copy into the product's layout (small memory)


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
    K = len(active)
    if buffers.get("weights", (None, np.empty(0)))[1].shape != (V, c, K):  # reused while the chunks' shape holds
        buffers.pop("weights", None)  # one at a time: the (V, c, K) array is the pass's largest
        buffers["weights"] = np.empty((min(K, _GROUP), V, c)), np.empty((V, c, K))
    W, E = buffers["weights"]  # (G, V, c) a group of heads' weights, contiguous; (V, c, K) for the product
    shared: dict = {}
    for at, k in enumerate(active):
        p = plans[k]
        lo = max(ch.a0, p.start)
        pos_c = pos[lo:b]  # (c_k,)
        table, pvo = chunk_table(p, pos_c, pos[n - 1 :] - pos_c, shared)  # (1, c_k, V), (c_k, C) or None
        mu[k] = np.maximum(mu[k], table.max(axis=(1, 2)))  # (1,)
        if not (states[k].m == mu[k][0]).all():  # a factor e^0 = 1 would change nothing
            states[k].rescale(np.full(B, mu[k][0]))
        g = at % W.shape[0]  # the head's place in its group
        W[g, :, : lo - ch.a0] = 0.0  # keys before the head's first column weigh nothing
        np.exp(table[0].T - mu[k][0], out=W[g, :, lo - ch.a0 :])  # (V, c_k), written in a row, not a column
        if g == W.shape[0] - 1 or at == K - 1:  # a group done: one copy into the product's layout
            E[:, :, at - g : at + 1] = W[: g + 1].transpose(1, 2, 0)  # (V, c, g + 1); K strided exps took twice it
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


def read_pass(plans, tokens, pos, iq, chunk, rowwise) -> list[_State]:
    """One pass over the keys of ``tokens``, chunk by chunk from the query back, for every head of ``plans``.

    Parameters
    ----------
    plans : list of HeadPlan
        The heads and their readings (:func:`~poskernels.model.engine.chunk_scores.plan_head`), one vocabulary.
    tokens : ndarray of int, shape (B, n)
        The sequences; the last column is the query.
    pos : array_like, shape (n,)
        The keys' positions (sliced a chunk at a time).
    iq : ndarray of int, shape (B,), or None
        Each row's query among the plans' ``U`` query tokens (None: one query token for every row).
    chunk : int
        Key positions a step.
    rowwise : bool
        Score each key's own token at its row's running maximum (else as :func:`_per_key` chooses).

    Returns
    -------
    list of _State
        Each head's running maximum ``m (B,)``, normalizer mass per token ``mass (B, V)`` and weighted code
        ``code (B, C)``: the logits are ``(mass G + code) / mass.sum(1)``.

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> from poskernels.model.head import init_params
    >>> from poskernels.model.reading import PLAIN
    >>> from poskernels.model.engine.chunk_scores import plan_head
    >>> from poskernels.model.engine.one_head import query_logits
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x = np.random.default_rng(1).integers(0, 16, size=(2, 40))
    >>> pos = np.arange(40.0)
    >>> plan = plan_head(p, cfg, PLAIN, np.unique(x[:, -1]), pos, None, True, 16)
    >>> iq = np.unique(x[:, -1], return_inverse=True)[1]
    >>> st = read_pass([plan], x, pos, iq, 16, rowwise=True)[0]
    >>> bool(np.allclose((st.mass @ plan.G + st.code) / st.mass.sum(1)[:, None], query_logits(p, cfg, x)))
    True
    """
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
                z, pvo = key_scores(p, pos_c, pos[n - 1 :] - pos_c, x, iq, buffers)
                _absorb(states[k], z, flat, True, None, pvo)
                continue
            table, pvo = chunk_table(p, pos_c, pos[n - 1 :] - pos_c)
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
        table, _ = chunk_table(p, pos[p.past - 1 : p.past], pos[-1:] - pos[p.past - 1 : p.past])  # (U, 1, V)
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
