"""The scores of one chunk of keys, for the streaming reader (:mod:`poskernels.model.engine.stream`).

A head and its reading are prepared once (:func:`plan_head`: the query of each distinct query token, the content
scores ``q_u k_v^T lambda / tau``, each token's read-out value, a rotary head's products ``conj(q_p) k_p`` and its
fixed table of turns); each chunk of keys is then scored two ways:

* :func:`chunk_table`: the ``(U, c, V)`` table of every token at every position of the chunk (the grouped pass);
* :func:`key_scores`: each key's own score, ``(B, c)`` (the per-key pass, for fewer sequences than tokens); a
  rotary key is one dot product of ``2P`` numbers with the fixed table (:func:`rotary_factors`), never a complex
  exponential.

Both are the readable head's score (:func:`poskernels.model.score.score`), written for chunks; the streaming reader's
tests check them equal to it for every scheme.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...encodings import SCHEMES, Scheme
from ...errors import PosKernelsError
from ..config import HeadConfig
from ..embedding import token_table
from ..reading import Reading, frequencies
from .cut import certified_cut

__all__ = ["TABLE_ENTRIES_A_KEY", "HeadPlan", "chunk_table", "key_scores", "plan_head", "rotary_factors"]


@dataclass(frozen=True)
class HeadPlan:
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


def plan_head(params, cfg, reading, uq, pos, eps, default_pos, chunk) -> HeadPlan:
    """Prepare one head and its reading for the chunks: what every chunk of keys reads the same.

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters.
    cfg : HeadConfig
        The head.
    reading : Reading
        How it is read.
    uq : ndarray of int, shape (U,)
        The distinct query tokens.
    pos : ndarray, shape (n,)
        The keys' positions; the query is at the last.
    eps : float or None
        Read only back to the head's certified cut for this dropped weight (:func:`certified_cut`), or
        everything.
    default_pos : bool
        Whether ``pos`` is ``0..n-1`` (the cut and the constant far past need it).
    chunk : int
        Key positions per chunk (a rotary head's fixed table of turns has this many rows).

    Returns
    -------
    HeadPlan
        The queries, content scores, read-out values, first column read and, for a rotary head, its products and
        turns.

    Raises
    ------
    PosKernelsError
        If the scheme is both additive and rotary, or ``eps`` is given with positions other than ``0..n-1``.

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> from poskernels.model.score import score
    >>> from poskernels.model.reading import PLAIN
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, pos = np.array([3, 1, 4, 1, 5, 9, 2, 16]), np.arange(8.0)  # one sequence, its query last
    >>> plan = plan_head(p, cfg, PLAIN, x[-1:], pos, None, True, 8)
    >>> h = embed(p, cfg, x, pos)
    >>> z = score(p, cfg, h[-1:] @ p["W_Q"], pos[-1:], h @ p["W_K"], pos)[0]  # the readable head's scores
    >>> plan.q.shape, plan.content.shape, plan.G.shape, plan.start
    ((1, 16), (1, 17), (17, 8), 0)
    >>> alibi = HeadConfig(scheme="alibi")
    >>> plan_head(init_params(alibi, np.random.default_rng(0)), alibi, PLAIN, x[-1:], pos, 1e-12, False, 8)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the certified cut reads integer offsets: pass positions=None with eps
    """
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
    if theta is not None:  # Proposition 3 (i), the part that is the same for every chunk (see rotary_factors)
        kc = (tok @ params["W_K"]).view(np.complex128)  # (V, P)
        w = q.view(np.complex128).conj()[:, :, None] * kc.T[None]  # (U, P, V)
        if default_pos:
            e = np.exp(1j * np.arange(chunk)[:, None] * theta)  # (chunk, P)
            spin = np.concatenate([e.real, -e.imag], axis=1)  # (chunk, 2P)
    t = float(pos[n - 1 :][0])
    return HeadPlan(params, cfg, reading, theta, q, lam, content, G, code_q is not None, start, past, spin, w, t)


def rotary_factors(plan: HeadPlan, r_c: np.ndarray, shared: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """``(left (c, 2P), right (U, 2P, V))`` whose product is a rotary head's chunk of scores before ``lambda / tau``.

    Proposition 3 (i): ``<R(t) q, R(j) k> = <q, R(j - t) k> = Re sum_p w_p e^{-i r theta_p}`` with
    ``w_p = conj(q_p) k_p``, in real arithmetic ``sum_p Re(e_p) Re(w_p) - Im(e_p) Im(w_p)``.  At integer offsets
    ``r_0, r_0 - 1, ...`` the turn splits, ``e^{-i r theta} = e^{-i r_0 theta} e^{i k theta}``: the chunk's
    ``e^{-i r_0 theta}`` turns the ``(U, P, V)`` products ``w`` (a few hundred numbers) and every key of every chunk
    reads the same fixed ``e^{i k theta}`` table, so no chunk computes a ``(c, P)`` turn.  At other positions
    the turn of each key is computed (``shared``, one dict per chunk, keeps it for the heads of one reading).

    Parameters
    ----------
    plan : HeadPlan
        A rotary head's plan (:func:`plan_head`).
    r_c : ndarray, shape (c,)
        The chunk's offsets ``t - j``.
    shared : dict or None
        The chunk's cache of turns, shared by the heads of one reading.

    Returns
    -------
    left : ndarray, shape (c, 2P)
        The turns of the chunk's offsets.
    right : ndarray, shape (U, 2P, V)
        The products ``conj(q_p) k_p`` of every query and key token, real and imaginary parts.

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> from poskernels.model.score import score
    >>> from poskernels.model.reading import PLAIN
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, pos = np.array([3, 1, 4, 1, 5, 9, 2, 16]), np.arange(8.0)  # one sequence, its query last
    >>> plan = plan_head(p, cfg, PLAIN, x[-1:], pos, None, True, 8)
    >>> h = embed(p, cfg, x, pos)
    >>> z = score(p, cfg, h[-1:] @ p["W_Q"], pos[-1:], h @ p["W_K"], pos)[0]  # the readable head's scores
    >>> left, right = rotary_factors(plan, pos[-1] - pos, None)
    >>> left.shape, right.shape
    ((8, 16), (1, 16, 17))
    >>> bool(np.allclose((left @ right)[0, np.arange(8), x] * plan.lam / cfg.tau, z))
    True
    """
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


def chunk_table(plan: HeadPlan, pos_c: np.ndarray, r_c: np.ndarray, shared: dict | None = None):
    """Scores ``(U, c, V)`` of every token at every position of the chunk, and the code's read-out value ``(c, C)``.

    ``shared`` (one dict per chunk) keeps the rotary heads' turns at positions that are not integers and a
    parameter-free code: the heads of one reading share them, so the seeds of a reading compute them once.

    Parameters
    ----------
    plan : HeadPlan
        The head's plan (:func:`plan_head`).
    pos_c : ndarray, shape (c,)
        The chunk's key positions.
    r_c : ndarray, shape (c,)
        Their offsets ``t - j``.
    shared : dict, optional
        The chunk's cache, shared by the heads of one reading.

    Returns
    -------
    table : ndarray, shape (U, c, V)
        The score of every token at every position of the chunk.
    pvo : ndarray, shape (c, C), or None
        The code's read-out value at each position (an additive scheme), else None.

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> from poskernels.model.score import score
    >>> from poskernels.model.reading import PLAIN
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, pos = np.array([3, 1, 4, 1, 5, 9, 2, 16]), np.arange(8.0)  # one sequence, its query last
    >>> plan = plan_head(p, cfg, PLAIN, x[-1:], pos, None, True, 8)
    >>> h = embed(p, cfg, x, pos)
    >>> z = score(p, cfg, h[-1:] @ p["W_Q"], pos[-1:], h @ p["W_K"], pos)[0]  # the readable head's scores
    >>> table, pvo = chunk_table(plan, pos, pos[-1] - pos)
    >>> table.shape, pvo, bool(np.allclose(table[0, np.arange(8), x], z))
    ((1, 8, 17), None, True)
    """
    params, cfg = plan.params, plan.cfg
    scheme = SCHEMES[cfg.scheme]
    U, c = plan.q.shape[0], pos_c.size
    pvo = None
    if plan.theta is not None:
        left, right = rotary_factors(plan, r_c, shared)  # (c, 2P), (U, 2P, V)
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


def key_scores(plan: HeadPlan, pos_c: np.ndarray, r_c: np.ndarray, x: np.ndarray, iq, buffers: dict):
    """Scores ``(B, c)`` of each key's own token, and the code's read-out ``(c, C)`` (the per-key pass).

    A head with no code scores ``content[u, x_j] + b(r_j)`` (gathered, never a ``(c, V)`` table); a rotary head with
    few rows takes each key's ``2P`` factors (:func:`rotary_factors`, its token's row of the turned ``w``) and
    one dot product with the fixed spin table, where the table would cost ``V`` products a key; otherwise the
    chunk's table (:func:`chunk_table`) is read at each key's token.

    Parameters
    ----------
    plan : HeadPlan
        The head's plan (:func:`plan_head`).
    pos_c, r_c : ndarray, shape (c,)
        The chunk's key positions and offsets.
    x : ndarray of int, shape (B, c)
        The chunk's key tokens.
    iq : ndarray of int, shape (B,), or None
        Each sequence's query among the plan's ``U`` (None: one query token for all).
    buffers : dict
        Arrays reused from chunk to chunk.

    Returns
    -------
    z : ndarray, shape (B, c)
        Each key's score (a buffer the next chunk overwrites: read it before then).
    pvo : ndarray, shape (c, C), or None
        As for :func:`chunk_table`.

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> from poskernels.model.score import score
    >>> from poskernels.model.reading import PLAIN
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, pos = np.array([3, 1, 4, 1, 5, 9, 2, 16]), np.arange(8.0)  # one sequence, its query last
    >>> plan = plan_head(p, cfg, PLAIN, x[-1:], pos, None, True, 8)
    >>> h = embed(p, cfg, x, pos)
    >>> z = score(p, cfg, h[-1:] @ p["W_Q"], pos[-1:], h @ p["W_K"], pos)[0]  # the readable head's scores
    >>> zk, _ = key_scores(plan, pos, pos[-1] - pos, x[None], None, {})
    >>> zk.shape, bool(np.allclose(zk[0], z))
    ((1, 8), True)
    """
    B, c = x.shape
    U, V = plan.content.shape
    if plan.theta is not None and B * TABLE_ENTRIES_A_KEY <= V:
        left, right = rotary_factors(plan, r_c, None)  # (c, 2P), (U, 2P, V)
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
        table, pvo = chunk_table(plan, pos_c, r_c)  # (U, c, V)
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
TABLE_ENTRIES_A_KEY = 5
