"""One causal attention head in NumPy: forward, hand-written backward, and a one-pass reader.

The head reads token ids ``x_0..x_{n-1}``:

* ``h_m = E[x_m] + p(m)`` (``p`` only for an additive scheme), ``q = h_t W_Q``, ``k_j = h_j W_K``,
  ``v_j = h_j W_V``;
* RoPE rotates them: ``q -> R_theta(t) q``, ``k_j -> R_theta(j) k_j`` (Definition 4);
* scores ``z_j = <q, k_j> / tau + bias(t - j)`` over the causal prefix ``j <= t``, ``tau = sqrt(d)``;
* ``o = sum_j softmax(z)_j v_j`` and logits ``o W_O`` over the symbols; softmax cross-entropy.

Training reads only the last position (the cue task's query).  That path works per token, not
per position: with ``EK = E W_K`` and ``EV = E W_V`` (``(V, d)`` tables) the content scores are
``(q EK^T)[x_j]`` and the output is ``C EV`` where ``C[v]`` is the attention mass on token ``v``,
so a step never builds a ``(B, n, d)`` array except for RoPE's rotated keys.  Its backward,
:func:`query_backward`, sits right after :func:`query_forward`.
:func:`poskernels.model.reader.score_all` reads every position of a sequence in one causal pass;
a test checks it against :func:`query_forward` on every prefix.

Parameters are a dict of arrays: ``E (V, d)``, ``W_Q, W_K, W_V (d, d)``, ``W_O (d, C)``, and the
scheme's own (``P`` for the learned table, ``beta`` for T5, ``A`` for Shaw).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..encodings import omega
from ..errors import PosKernelsError
from .config import HeadConfig
from .schemes import HEAD_SCHEMES, default_positions

__all__ = [
    "Reading",
    "accuracy",
    "cross_entropy",
    "init_params",
    "loss_and_grad",
    "query_backward",
    "query_forward",
    "query_logits",
    "token_table",
]


@dataclass(frozen=True)
class Reading:
    """How a trained RoPE head is read: per-plane frequencies and a logit scale (Definition 5).

    Attributes
    ----------
    inv_freq : ndarray of shape (d/2,) or None
        Frequencies replacing ``theta = omega(d, b)``; None reads the head as trained.
    logit_scale : float
        Multiplier on ``<q, k> / tau`` (YaRN's ``(0.1 ln kappa + 1)**2``).

    Examples
    --------
    >>> from poskernels.extension import extend
    >>> from poskernels.encodings import omega
    >>> r = Reading.from_extension(extend("yarn", omega(16), 4, 32))
    >>> round(r.logit_scale, 4), r.inv_freq.shape
    (1.2965, (8,))
    """

    inv_freq: np.ndarray | None = None
    logit_scale: float = 1.0

    @classmethod
    def from_extension(cls, ext) -> Reading:
        """The reading of a :class:`poskernels.extension.Extension`."""
        return cls(np.asarray(ext.inv_freq, dtype=float), float(ext.logit_scale))

    @property
    def is_plain(self) -> bool:
        return self.inv_freq is None and self.logit_scale == 1.0


PLAIN = Reading()


# Minimal token_table for the long-context reader; the factored-embedding change replaces this body.
def token_table(params: dict, cfg: HeadConfig) -> np.ndarray:
    """The effective embedding of every token id, shape ``(V, d)`` (here the table ``E`` itself).

    >>> p = init_params(HeadConfig(), np.random.default_rng(0))
    >>> token_table(p, HeadConfig()).shape
    (17, 16)
    """
    return params["E"]  # (V, d)


def init_params(cfg: HeadConfig, rng: np.random.Generator) -> dict:
    """Draw a head: ``E ~ N(0, embed_scale^2)``, each map ``~ N(0, map_scale^2 / d)``, no biases.

    Parameters
    ----------
    cfg : HeadConfig
    rng : numpy.random.Generator

    Returns
    -------
    dict of str to ndarray
        ``E (V, d)``, ``W_Q``, ``W_K``, ``W_V`` ``(d, d)``, ``W_O (d, C)``, then the scheme's own.

    Examples
    --------
    >>> p = init_params(HeadConfig(scheme="learned"), np.random.default_rng(0))
    >>> {k: v.shape for k, v in p.items()}
    {'E': (17, 16), 'W_Q': (16, 16), 'W_K': (16, 16), 'W_V': (16, 16), 'W_O': (16, 8), 'P': (32, 16)}
    """
    d, s = cfg.d, cfg.map_scale / np.sqrt(cfg.d)
    params = {
        "E": rng.normal(0.0, cfg.embed_scale, size=(cfg.vocab, d)),  # (V, d)
        "W_Q": rng.normal(0.0, s, size=(d, d)),  # (d, d)
        "W_K": rng.normal(0.0, s, size=(d, d)),  # (d, d)
        "W_V": rng.normal(0.0, s, size=(d, d)),  # (d, d)
        "W_O": rng.normal(0.0, s, size=(d, cfg.n_classes)),  # (d, C)
    }
    params.update(HEAD_SCHEMES[cfg.scheme].init(cfg, rng))
    return params


def _check_tokens(cfg: HeadConfig, tokens) -> np.ndarray:
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or tokens.shape[1] < 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise PosKernelsError(f"tokens must be a 2-d integer array (batch, n); got {tokens.dtype} {tokens.shape}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= cfg.vocab):
        raise PosKernelsError(f"token ids must lie in [0, {cfg.vocab - 1}]; got {tokens.min()}..{tokens.max()}")
    return tokens


def _positions(positions, n: int) -> np.ndarray:
    if positions is None:
        return default_positions(n)
    pos = np.asarray(positions, dtype=float)
    if pos.shape != (n,):
        raise PosKernelsError(f"positions must have shape ({n},) to match the tokens; got {pos.shape}")
    return pos


def _theta(cfg: HeadConfig, scheme, reading: Reading) -> np.ndarray:
    if not scheme.rotary:
        if not reading.is_plain:
            raise PosKernelsError(f"a rescaled reading applies to RoPE heads only; this head is {cfg.scheme!r}")
        return None
    if reading.inv_freq is None:
        return omega(cfg.d, cfg.base)  # (d/2,)
    inv = np.asarray(reading.inv_freq, dtype=float)
    if inv.shape != (cfg.d // 2,):
        raise PosKernelsError(f"inv_freq must have shape ({cfg.d // 2},); got {inv.shape}")
    return inv


def _query_index(xq: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Distinct query tokens ``uq`` and each sequence's index into them (None: a single query token)."""
    if xq.size and (xq == xq[0]).all():
        return xq[:1], None  # the cue task: every sequence ends with the query token
    return np.unique(xq, return_inverse=True)


@lru_cache(maxsize=64)
def _grid(rows: int, n: int, stride: int) -> np.ndarray:
    """``stride * (i * n + j)`` for ``i < rows``, ``j < n`` (read-only), the offsets of flat table indices."""
    g = stride * np.arange(rows * n).reshape(rows, n)  # (rows, n)
    g.setflags(write=False)
    return g


def query_forward(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, score_shift=None, validate=True
):
    """Logits at the last position of each sequence, and what the backward pass needs.

    The score of key ``j`` depends on the sequence only through the query token ``x_t`` and the
    key token ``x_j`` (and ``j``), so it is read from a table over (distinct query tokens,
    [positions,] tokens), a single query token in the cue task; every per-sequence array is
    ``(B, n)`` or ``(B, V)``.  The softmax is taken as ``exp(table)[x_j] * exp(position term)_j``,
    so the exponential runs over the tables, not over every score.

    Parameters
    ----------
    params : dict of ndarray
    cfg : HeadConfig
    tokens : ndarray of int, shape (B, n)
        Token ids; the last column is read (the query).
    positions : array_like, shape (n,), optional
        Absolute positions of the columns (default ``0..n-1``); real values are allowed for the
        sinusoidal code and RoPE (a shifted or interpolated reading).
    reading : Reading
        Per-plane frequencies and logit scale for a RoPE head.
    score_shift : array_like broadcasting to (B, n), optional
        Added to the scores before the softmax (diagnostics that replace one term of the score).
    validate : bool
        Check the token ids (the trainer, whose sampler it trusts, skips it).

    Returns
    -------
    logits : ndarray, shape (B, C)
    cache : dict
        Intermediates for :func:`query_backward`.
    """
    if validate:
        tokens = _check_tokens(cfg, tokens)
    scheme = HEAD_SCHEMES[cfg.scheme]
    B, n = tokens.shape
    V, tau = cfg.vocab, cfg.tau
    E, W_Q, W_K, W_V = params["E"], params["W_Q"], params["W_K"], params["W_V"]
    pos = _positions(positions, n)
    r = pos[-1] - pos  # (n,) offsets t - j
    theta = _theta(cfg, scheme, reading)
    code = scheme.code(params, cfg, pos)  # (n, d) or None
    if code is not None and theta is not None:
        raise PosKernelsError(f"scheme {cfg.scheme!r} is both additive and rotary; the head supports one or the other")
    uq, iq = _query_index(tokens[:, -1])  # (U,), (B,) or None
    U = uq.size
    hq = E[uq]  # (U, d)
    if code is not None:
        hq = hq + code[-1]
        PK, PV = code @ W_K, code @ W_V  # (n, d) each
    q = hq @ W_Q  # (U, d)
    EK, EV = E @ W_K, E @ W_V  # (V, d) each: key and value of every token
    rows = None if iq is None else iq[:, None] * n + _grid(1, n, 1)  # (B, n) index into a (U, n) table
    c = {"tokens": tokens, "pos": pos, "r": r, "code": code, "EK": EK, "EV": EV, "hq": hq, "q": q, "uq": uq}
    if theta is not None:
        # Proposition 3 (i): <R(t) q, R(j) k> = <q, R(j - t) k>.  In complex form plane p of k is
        # multiplied by e^{i (j - t) theta_p}; W[u, j] = conj(q_u) e^{i (j - t) theta}.
        e = np.exp(-1j * r[:, None] * theta)  # (n, P)
        W = q.view(np.complex128).conj()[:, None, :] * e  # (U, n, P)
        kc = EK.view(np.complex128)  # (V, P): plane p is EK[:, 2p] + i EK[:, 2p+1]
        table = (W @ kc.T).real * (reading.logit_scale / tau)  # (U, n, V)
        index = (_grid(1, n, V) if rows is None else rows * V) + tokens  # (B, n)
        c.update(e=e, W=W, kc=kc)
    else:
        table = q @ EK.T / tau  # (U, V): each query token against each token's key
        index = tokens if iq is None else iq[:, None] * V + tokens  # (B, n)
    ptable = None if code is None else q @ PK.T / tau  # (U, n): each query token against each position
    bias = scheme.bias(params, cfg, q, r)  # (U, n) or (n,) or None
    if bias is not None:
        ptable = bias if ptable is None else ptable + bias
    # softmax over keys, up to a per-row constant: exp(content score) * exp(position term)
    a = np.exp(table - table.max()).ravel()[index]  # (B, n)
    if ptable is not None:
        ep = np.exp(ptable - ptable.max())  # (U, n) or (n,)
        a *= ep if ep.ndim == 1 or rows is None else ep.ravel()[rows]
    if score_shift is not None:
        shift = np.asarray(score_shift, dtype=float)
        a *= np.exp(shift - shift.max())
    total = a.sum(axis=1, keepdims=True)  # (B, 1)
    if not total.min() > 1e-200:  # a row far below the tables' maxima underflowed: recompute it exactly
        z = table.ravel()[index]
        if ptable is not None:
            z = z + (ptable if ptable.ndim == 1 or rows is None else ptable.ravel()[rows])
        if score_shift is not None:
            z = z + shift
        a = np.exp(z - z.max(axis=1, keepdims=True))
        total = a.sum(axis=1, keepdims=True)
    a /= total
    flat = tokens + _grid(B, 1, V)  # (B, n) index into a (B, V) table
    C = np.bincount(flat.ravel(), weights=a.ravel(), minlength=B * V).reshape(B, V)  # (B, V) mass per token
    o = C @ EV  # (B, d)
    if code is not None:
        o += a @ PV
        c.update(PK=PK, PV=PV)
    c.update(a=a, C=C, o=o, flat=flat, index=index, rows=rows, table_size=table.size, U=U)
    c.update(has_ptable=ptable is not None, logit_scale=reading.logit_scale)
    return o @ params["W_O"], c  # (B, C)


def query_backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    """Gradients of every parameter from ``dL/dlogits`` (shape ``(B, C)``), by hand.

    The reverse of :func:`query_forward`, line by line; checked against float64 central
    differences in ``tests/test_head_gradients.py``.
    """
    scheme = HEAD_SCHEMES[cfg.scheme]
    E, W_Q, W_K, W_V, W_O = params["E"], params["W_Q"], params["W_K"], params["W_V"], params["W_O"]
    tokens, a, C, q, code, U = cache["tokens"], cache["a"], cache["C"], cache["q"], cache["code"], cache["U"]
    B, n = tokens.shape
    V, tau = cfg.vocab, cfg.tau
    grads = {"W_O": cache["o"].T @ dlogits}  # (d, C)
    do = dlogits @ W_O.T  # (B, d)
    dEV = C.T @ do  # (V, d)
    da = (do @ cache["EV"].T).ravel()[cache["flat"]]  # (B, n)
    if code is not None:
        dPV = a.T @ do  # (n, d)
        da += do @ cache["PV"].T
    dz = a * (da - (a * da).sum(axis=1, keepdims=True))  # (B, n) softmax backward
    dtable = np.bincount(cache["index"].ravel(), weights=dz.ravel(), minlength=cache["table_size"])
    if cache["has_ptable"]:
        rows = cache["rows"]
        if rows is None:
            dptable = dz.sum(axis=0)[None]  # (1, n)
        else:
            dptable = np.bincount(rows.ravel(), weights=dz.ravel(), minlength=U * n).reshape(U, n)  # (U, n)
        dq, scheme_grads = scheme.bias_backward(dptable, params, cfg, q, cache["r"])
    else:
        dq, scheme_grads = None, {}
    dq = np.zeros_like(q) if dq is None else dq  # (U, d)
    if scheme.rotary:
        dtable = dtable.reshape(U, n, V) * (cache["logit_scale"] / tau)  # (U, n, V)
        # table = Re(W kc^T): d/dkc = sum conj(W) dtable; d/dW = conj(dtable kc), and W = conj(q) e
        dEK = np.einsum("ujv,ujp->vp", dtable, cache["W"].conj()).view(np.float64)  # (V, d)
        dq += ((dtable @ cache["kc"]) * cache["e"]).sum(axis=1).view(np.float64)  # (U, d)
    else:
        dtable = dtable.reshape(U, V) / tau  # (U, V)
        dq += dtable @ cache["EK"]
        dEK = dtable.T @ q  # (V, d)
        if code is not None:
            dq += dptable @ cache["PK"] / tau
            dPK = dptable.T @ q / tau  # (n, d)
    hq = cache["hq"]
    grads["W_Q"] = hq.T @ dq  # (d, d)
    dhq = dq @ W_Q.T  # (U, d)
    grads["W_K"] = E.T @ dEK
    grads["W_V"] = E.T @ dEV
    dE = dEK @ W_K.T + dEV @ W_V.T  # (V, d)
    dE[cache["uq"]] += dhq  # the distinct query tokens' rows
    grads["E"] = dE
    if code is not None:
        grads["W_K"] += code.T @ dPK
        grads["W_V"] += code.T @ dPV
        dcode = dPK @ W_K.T + dPV @ W_V.T  # (n, d)
        dcode[-1] += dhq.sum(axis=0)
        scheme_grads.update(scheme.code_backward(dcode, params, cfg, cache["pos"]))
    grads.update(scheme_grads)
    return {k: grads[k] for k in params}


def cross_entropy(logits: np.ndarray, targets) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient with respect to the logits.

    >>> loss, g = cross_entropy(np.zeros((2, 4)), [0, 3])
    >>> round(loss, 4), float(abs(g.sum()).round(12))
    (1.3863, 0.0)
    """
    logits = np.asarray(logits, dtype=float)
    targets = np.asarray(targets)
    B = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)  # (B, C)
    p = np.exp(shifted)
    Z = p.sum(axis=1)  # (B,)
    rows = _grid(B, 1, 1).ravel()  # 0..B-1
    loss = float((np.log(Z).sum() - shifted[rows, targets].sum()) / B)
    p *= (1.0 / (B * Z))[:, None]
    p[rows, targets] -= 1.0 / B
    return loss, p  # (B, C)


def loss_and_grad(params: dict, cfg: HeadConfig, tokens, targets) -> tuple[float, dict]:
    """Cross-entropy of the head read at the last position, and its gradient.

    Examples
    --------
    >>> from poskernels.tasks.cue import cue_batch
    >>> rng = np.random.default_rng(0)
    >>> cfg = HeadConfig(scheme="rope")
    >>> params = init_params(cfg, rng)
    >>> loss, grads = loss_and_grad(params, cfg, *cue_batch(rng, 8, 32))
    >>> round(loss, 2), sorted(grads) == sorted(params)
    (2.08, True)
    """
    logits, cache = query_forward(params, cfg, tokens)
    loss, dlogits = cross_entropy(logits, targets)
    return loss, query_backward(params, cfg, cache, dlogits)


def query_logits(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, score_shift=None, chunk=1 << 17
):
    """Logits at the last position, computed in chunks of about ``chunk`` tokens (long test sets).

    Returns
    -------
    ndarray, shape (B, C)
    """
    tokens = _check_tokens(cfg, tokens)
    B, n = tokens.shape
    step = max(1, chunk // max(n, 1))
    shift = None if score_shift is None else np.broadcast_to(score_shift, (B, n))
    out = [
        query_forward(
            params, cfg, tokens[i : i + step], positions, reading, None if shift is None else shift[i : i + step]
        )[0]
        for i in range(0, B, step)
    ]
    return np.concatenate(out, axis=0) if out else np.zeros((0, cfg.n_classes))


def accuracy(
    params: dict, cfg: HeadConfig, tokens, targets, positions=None, reading: Reading = PLAIN, score_shift=None
) -> float:
    """Fraction of sequences whose last-position argmax equals the target (arguments as :func:`query_forward`).

    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="alibi")
    >>> acc = accuracy(init_params(cfg, np.random.default_rng(0)), cfg, *cue_batch(np.random.default_rng(1), 100, 32))
    >>> 0.0 <= acc <= 1.0
    True
    """
    logits = query_logits(params, cfg, tokens, positions, reading, score_shift)
    return float(np.mean(np.argmax(logits, axis=1) == np.asarray(targets)))
