"""A stack of ``M`` independent heads: one forward, hand-written backward and loss for all of them.

Every parameter gains a leading model axis (:func:`stack_params`) and head ``m`` reads its own
sequences ``tokens[m]``; one call advances all ``M``, so NumPy's per-call cost is paid once per
stack instead of once per head.  Nothing mixes the models: every maximum, sum and accumulation is
each model's own (and a row sum is one BLAS ``gemv`` per model, the same whatever the stack), so a
head computes the same bits alone and inside any stack (``tests/test_stack.py``); the per-model reductions
that guarantee it, and the loss, are :mod:`poskernels.model.engine.reductions`'s.  The single-head API of
:mod:`poskernels.model.head` is this stack of one.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...encodings import SCHEMES
from ...errors import PosKernelsError
from ..config import HeadConfig
from ..embedding import token_table, token_table_backward
from ..reading import PLAIN, Reading, check_tokens, frequencies, read_positions
from .reductions import grid, per_model_max, row_sum

__all__ = ["attention", "stack_backward", "stack_forward"]


def _query_index(xq: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Distinct query tokens ``uq`` and each sequence's index into them (None: a single query token)."""
    first = xq.flat[0] if xq.size else 0
    if xq.size and (xq == first).all():
        return xq.reshape(-1)[:1], None  # the cue task: every sequence ends with the query token
    return np.unique(xq, return_inverse=True)


@lru_cache(maxsize=64)
def _rotations_cached(r: bytes, theta: bytes, dtype: str) -> np.ndarray:
    r_, theta_ = np.frombuffer(r), np.frombuffer(theta, dtype=dtype)
    e = np.exp(-1j * r_[:, None] * theta_)  # (n, P); complex theta = theta - i gamma: e^{-i r theta} e^{-gamma r}
    e.setflags(write=False)
    return e


def _rotations(r: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``e^{-i r theta}`` (``(n, P)``, read-only), remembered by value: a training step asks for the same every time."""
    theta = np.asarray(theta)
    theta = theta if np.iscomplexobj(theta) else np.asarray(theta, dtype=float)
    return _rotations_cached(np.asarray(r, dtype=float).tobytes(), theta.tobytes(), theta.dtype.str)


@lru_cache(maxsize=8)
def _shared_weights(wp: bytes, shape: tuple) -> np.ndarray:
    w = np.broadcast_to(np.frombuffer(wp), shape).ravel()  # (M B n,)
    w.setflags(write=False)
    return w


def _key_weights(wp: np.ndarray, shape: tuple) -> np.ndarray:
    """Each key's position weight, flat: ``wp`` broadcast to ``shape``; remembered when ``wp`` is one ``(n,)`` row.

    A bias without parameters (ALiBi) gives the same row every step, so its ``(M B n,)`` copy is made once.
    """
    if wp.ndim == 1:
        return _shared_weights(np.ascontiguousarray(wp, dtype=float).tobytes(), shape)
    return np.broadcast_to(wp, shape).ravel()


@lru_cache(maxsize=64)
def _flat_offsets(M: int, B: int, V: int, narrow: bool) -> np.ndarray:
    """``(m B + b) V``, shape ``(M, B, 1)``, read-only: ``uint16`` when the index is only counted (bytes tokens
    then make a ``uint16`` index, a quarter of the bytes to write; a gather would read it slower)."""
    offsets = grid(M * B, 1, V).reshape(M, B, 1)  # (M, B, 1)
    if narrow:
        offsets = offsets.astype(np.uint16)
        offsets.setflags(write=False)
    return offsets


def stack_forward(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, score_shift=None, validate=True
):
    """Logits at the last position of each sequence for a stack of ``M`` heads, and what the backward needs.

    Every parameter carries a leading model axis (:func:`stack_params`); head ``m`` reads its own
    sequences ``tokens[m]``.  The score of key ``j`` depends on the sequence only through the
    query token ``x_t`` and the key token ``x_j`` (and ``j``), so it is read from a table over
    (distinct query tokens, [positions,] tokens), a single query token in the cue task.  The
    softmax is taken as ``exp(content table)[x_j] * exp(position term)_j``, so the exponential runs
    over the tables, not over every score, and the attention mass on each token, ``C (M, B, V)``,
    is accumulated straight from the tokens (Notes).  Nothing mixes models: each one's maxima, sums
    and accumulations are its own, so a head's result does not depend on the heads stacked with it.

    Parameters
    ----------
    params : dict of ndarray
        Stacked parameters, each ``(M, ...)``.
    cfg : HeadConfig
    tokens : ndarray of int, shape (M, B, n)
        Token ids; the last column is read (the query).
    positions : array_like, shape (n,), optional
        Absolute positions of the columns (default ``0..n-1``); real values are allowed for the
        sinusoidal code and RoPE (a shifted or interpolated reading).
    reading : Reading
        Per-plane frequencies and logit scale for a RoPE head.
    score_shift : array_like broadcasting to (M, B, n), optional
        Added to the scores before the softmax (diagnostics that replace one term of the score).
    validate : bool
        Check the token ids (the trainer, whose sampler it trusts, skips it).

    Returns
    -------
    logits : ndarray, shape (M, B, C)
    cache : dict
        Intermediates for :func:`stack_backward`.

    Notes
    -----
    Three ways to the same weights, by what the score holds:

    * ``content`` (no position, ALiBi, T5, Shaw): the score is ``c(x_t, x_j) + b(x_t, j)``, so
      ``C[b, v] = e^{c(x_t, v)} sum_{j: x_j = v} e^{b(x_t, j)}``: one weighted count per token, and
      the backward needs no per-token array for the content (and one gather for a learned bias);
    * ``rotary`` (RoPE): the content table depends on ``j``; each key's weight is one gather from it;
    * ``token`` (an additive code, or a score shift): the general per-token path.

    ``a_j = e_j / Z`` is never formed outside the ``token`` path; :func:`attention` builds it.
    """
    tokens = np.asarray(tokens)
    if validate:
        check_tokens(cfg, tokens.reshape(-1, tokens.shape[-1]) if tokens.ndim == 3 else tokens)
    return _forward(params, cfg, tokens, positions, reading, score_shift, exact=False)


def _forward(params, cfg, tokens, positions, reading, score_shift, exact):
    scheme = SCHEMES[cfg.scheme]
    M, B, n = tokens.shape
    V, tau = cfg.vocab, cfg.tau
    W_Q, W_K, W_V = params["W_Q"], params["W_K"], params["W_V"]
    T = token_table(params, cfg)  # (M, V, d)
    pos = read_positions(positions, n)
    r = pos[-1] - pos  # (n,) offsets t - j
    theta = frequencies(cfg, reading)
    code = scheme.code(params, cfg, pos)  # (n, d), (M, n, d) or None
    if code is not None and theta is not None:
        raise PosKernelsError(f"scheme {cfg.scheme!r} is both additive and rotary; the head supports one or the other")
    uq, iq = _query_index(tokens[..., -1])  # (U,), (M*B,) or None
    U = uq.size
    hq = T[:, uq]  # (M, U, d)
    if code is not None:
        hq = hq + code[..., -1:, :]
        PK, PV = code @ W_K, code @ W_V  # (M, n, d) each
    q = hq @ W_Q  # (M, U, d)
    EK, EV = T @ W_K, T @ W_V  # (M, V, d) each: key and value of every token
    qrow = None if iq is None else iq.reshape(M, B) + grid(M, 1, U)  # (M, B) query row in the stack's (M U) rows
    rows = None if iq is None else qrow[..., None] * n + grid(1, n, 1)  # (M, B, n) into the stack's (M U, n) table
    c = {"tokens": tokens, "pos": pos, "r": r, "code": code, "T": T, "EK": EK, "EV": EV, "hq": hq, "q": q, "uq": uq}
    lam = _logit_scale(params, cfg, reading, n)  # the logit scale lambda (1 as trained; (M, 1, 1): s log n)
    inv_tau = 1.0 / tau if _unit(lam) else lam / tau  # (kept as a division when lambda = 1: the same bits as ever)
    c.update(rows=rows, qrow=qrow, U=U, lam=lam, reading=reading)
    if theta is not None:
        # Proposition 3 (i): <R(t) q, R(j) k> = <q, R(j - t) k>.  In complex form plane p of k is
        # multiplied by e^{i (j - t) theta_p}; W[u, j] = conj(q_u) e^{i (j - t) theta}.
        e = _rotations(r, theta)  # (n, P)
        W = q.view(np.complex128).conj()[:, :, None, :] * e  # (M, U, n, P)
        kc = EK.view(np.complex128)  # (M, V, P): plane p is EK[..., 2p] + i EK[..., 2p+1]
        table = (W.reshape(M, U * n, -1) @ np.swapaxes(kc, 1, 2)).real  # (M, U n, V)
        if scheme.scale_grows:
            c["raw"] = table  # the unscaled table: dL/dlambda reads it
        table = table * (lam / tau)
        if rows is None:  # (M, B, n) into the stack's (M n, V) tables: model m, key j, token x
            index = tokens + (grid(1, n, V) + grid(M, 1, n * V).reshape(M, 1, 1))
        else:
            index = rows * V + tokens
        c.update(e=e, W=W, kc=kc)
    else:
        table = q @ np.swapaxes(EK, 1, 2)  # (M, U, V): each query token against each token's key
        if scheme.scale_grows:
            c["raw"] = table
        table = table / tau if _unit(lam) else table * inv_tau
        index = None  # built below when the path reads per key
    ptable = None if code is None else q @ np.swapaxes(PK, 1, 2)  # (M, U, n): query tokens against positions
    if ptable is not None:
        if scheme.scale_grows:
            c["raw_p"] = ptable
        ptable = ptable / tau if _unit(lam) else ptable * inv_tau
    bias = scheme.bias_at(params, cfg, q, r, pos[-1])  # (M, U, n), (M, n), (n,) or None
    if bias is not None:
        bias = bias[:, None, :] if bias.ndim == 2 else bias
        ptable = bias if ptable is None else ptable + bias
    if ptable is not None and ptable.ndim == 3:
        ptable = np.broadcast_to(ptable, (M, U, n))
    mode = (
        "token"
        if exact or code is not None or score_shift is not None
        else "rotary"
        if theta is not None
        else "content"
    )
    if mode == "rotary" and ptable is not None:
        mode = "token"
    narrow = mode == "content" and (ptable is None or ptable.ndim == 1) and M * B * V <= 1 << 16  # only counted
    flat = tokens + _flat_offsets(M, B, V, narrow)  # (M, B, n) index into a (M, B, V) table
    c["flat"] = flat
    ec = np.exp(table - per_model_max(table))  # (M, U[ n], V) exp of the content table, each model's max 1
    ep = None  # the position term's exponential: (n,) or (M, U, n)
    if ptable is not None:
        ep = np.exp(ptable - (ptable.max() if ptable.ndim == 1 else per_model_max(ptable)))
    wp = None  # each key's position weight, (M, B, n) or broadcasting to it
    if ep is not None:
        wp = ep if ep.ndim == 1 or rows is None else ep.reshape(-1)[rows]
    if mode == "content":
        if wp is None:
            Cw = np.bincount(flat.ravel(), minlength=M * B * V)  # token counts (int, exact as floats)
        else:
            w = _key_weights(wp, (M, B, n))  # (M B n,) each key's position weight
            Cw = np.bincount(flat.ravel(), weights=w, minlength=M * B * V)
        ecr = ec if qrow is None else ec.reshape(M * U, V)[qrow]  # (M, 1 or B, V) content weight of each token
        Cw = Cw.reshape(M, B, V) * ecr if wp is None else np.multiply(Cw.reshape(M, B, V), ecr, out=Cw.reshape(M, B, V))
        # (M, B, V) unnormalized mass per token (the counts are int: a new array; weighted sums: in place)
        c.update(ecr=ecr, wp=wp)
    else:
        if index is None:  # (M, B, n) into the stack's (M U, V) table
            index = tokens + grid(M, 1, V).reshape(M, 1, 1) if qrow is None else qrow[..., None] * V + tokens
        e = np.take(ec, index)  # (M, B, n) each key's content weight
        if wp is not None:
            e *= wp
        if score_shift is not None:
            shift = np.broadcast_to(np.asarray(score_shift, dtype=float), (M, B, n))
            e *= np.exp(shift - per_model_max(shift))
        if exact:  # one model whose rows underflowed: every score itself, shifted by its row's maximum
            z = table.ravel()[index]
            if ptable is not None:
                z = z + (ptable if ptable.ndim == 1 else ptable.reshape(-1)[rows] if rows is not None else ptable)
            if score_shift is not None:
                z = z + shift
            e = np.exp(z - z.max(axis=-1, keepdims=True))
        Cw = np.bincount(flat.ravel(), weights=e.ravel(), minlength=M * B * V).reshape(M, B, V)
        c.update(ec=ec, index=index, table_size=table.size)
    Z = row_sum(Cw)  # (M, B, 1)
    low = ()  # the models with a row far below its tables' maxima, whose sum underflowed (one check when none)
    if Z.min() <= 1e-200:
        low = np.flatnonzero(Z.reshape(M, B).min(axis=1) <= 1e-200)
        Z = np.where(Z > 0, Z, 1.0)  # a row that underflowed to 0 is recomputed below
    C = np.divide(Cw, Z, out=Cw)  # (M, B, V) attention mass on each token (in place)
    o = C @ EV  # (M, B, d)
    if mode == "token":
        a = e / Z  # (M, B, n) attention weights
        if code is not None:
            o += a @ PV
            c.update(PK=PK, PV=PV)
        c["a"] = a
    c.update(
        C=C, Z=Z, o=o, mode=mode, has_ptable=ptable is not None, ptable_shared=ptable is not None and ptable.ndim == 1
    )
    c.update(ep=ep)
    logits = o @ params["W_O"]  # (M, B, C)
    c["exact"] = {}
    for m in low:  # those models again, every score itself (rare: huge weights)
        one = {k: v[m : m + 1] for k, v in params.items()}
        shift_m = None if score_shift is None else np.broadcast_to(score_shift, (M, B, n))[m : m + 1]
        sub_logits, c["exact"][m] = _forward(one, cfg, tokens[m : m + 1], positions, reading, shift_m, exact=True)
        logits[m] = sub_logits[0]
    return logits, c


def _unit(lam) -> bool:
    """Whether the logit scale is the number 1 (a scale of the key count is an array, never taken as 1)."""
    return np.ndim(lam) == 0 and lam == 1.0


def _logit_scale(params: dict, cfg: HeadConfig, reading: Reading, n: int):
    """The stack's logit scale over ``n`` keys: a number, or ``(M, 1, 1)`` when it grows with ``n`` (``s log n``)."""
    scheme = SCHEMES[cfg.scheme]
    if not scheme.scale_grows:
        return scheme.logit_scale(cfg, reading)
    return np.asarray(scheme.logit_scale_at(params, cfg, reading, n), dtype=float).reshape(-1, 1, 1)


def attention(cache: dict) -> np.ndarray:
    """The attention weights ``a (M, B, n)`` of a forward pass (:func:`stack_forward`'s cache).

    >>> from poskernels.model.head import init_params, query_forward
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> _, cache = query_forward(p, cfg, cue_batch(np.random.default_rng(1), 3, 8)[0])
    >>> a = attention(cache["stack"])
    >>> a.shape, bool(np.allclose(a.sum(axis=-1), 1.0))
    ((1, 3, 8), True)
    """
    if "a" in cache:
        a = cache["a"].copy()
    elif cache["mode"] == "content":
        wp = 1.0 if cache["wp"] is None else cache["wp"]
        ecr = np.broadcast_to(cache["ecr"], cache["C"].shape)  # (M, B, V)
        a = np.ascontiguousarray(ecr).ravel()[cache["flat"]] * wp / cache["Z"]
    else:
        a = cache["ec"].ravel()[cache["index"]] / cache["Z"]
    for m, sub in cache["exact"].items():
        a[m] = attention(sub)[0]
    return a


def stack_backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    """Gradients of every stacked parameter from ``dL/dlogits`` (shape ``(M, B, C)``), by hand.

    The reverse of :func:`stack_forward`, line by line; checked against float64 central
    differences and PyTorch autograd in ``tests/test_head_gradients.py``.

    Notes
    -----
    With ``g[b, v] = dL/do_b . EV[v]`` and ``s_b = sum_v C[b, v] g[b, v]`` (the softmax's mean), a
    key's score gradient is ``dz_j = a_j (g[b, x_j] - s_b)`` (plus the code's share in the
    ``token`` path), so the content table's gradient sums ``C (g - s)`` over sequences, and a
    position term's is ``e^{b_j} R[b, x_j]`` with ``R = e^{c} (g - s) / Z``: one gather, no per-token softmax.
    """
    if not cache["exact"]:
        return _backward(params, cfg, cache, dlogits)
    with np.errstate(all="ignore"):  # the underflowed models' slices are overwritten from their exact pass
        return _backward(params, cfg, cache, dlogits)


def _backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    scheme = SCHEMES[cfg.scheme]
    W_Q, W_K, W_V, W_O = params["W_Q"], params["W_K"], params["W_V"], params["W_O"]
    tokens, C, q, code, U, mode = cache["tokens"], cache["C"], cache["q"], cache["code"], cache["U"], cache["mode"]
    M, B, n = tokens.shape
    V, tau = cfg.vocab, cfg.tau
    rows, qrow, flat = cache["rows"], cache["qrow"], cache["flat"]
    grads = {"W_O": np.swapaxes(cache["o"], 1, 2) @ dlogits}  # (M, d, C)
    do = dlogits @ np.swapaxes(W_O, 1, 2)  # (M, B, d)
    dEV = np.swapaxes(C, 1, 2) @ do  # (M, V, d)
    dptable = None
    g = do @ np.swapaxes(cache["EV"], 1, 2)  # (M, B, V) dL/dC
    if mode == "token":
        a = cache["a"]
        da = np.take(g, flat)  # (M, B, n)
        if code is not None:
            dPV = np.swapaxes(a, 1, 2) @ do  # (M, n, d)
            da += do @ np.swapaxes(cache["PV"], 1, 2)
        da -= row_sum(a * da)
        dz = np.multiply(da, a, out=da)  # (M, B, n) softmax backward a (da - sum_j a_j da_j), in place
        dtable = np.bincount(cache["index"].ravel(), weights=dz.ravel(), minlength=cache["table_size"])
        if cache["has_ptable"]:
            if rows is None:
                dptable = dz.sum(axis=1)[:, None]  # (M, 1, n)
            else:
                dptable = np.bincount(rows.ravel(), weights=dz.ravel(), minlength=M * U * n).reshape(M, U, n)
    else:
        gs = g
        gs -= row_sum(C * g)  # (M, B, V) g - s, in place
        if mode == "rotary":
            gs /= cache["Z"]  # (M, B, V) R = (g - s) / Z: dz_j = e_j R[b, x_j]
            dtable = cache["ec"].ravel() * np.bincount(
                cache["index"].ravel(), weights=np.take(gs, flat.ravel()), minlength=cache["table_size"]
            )
        else:
            free = cache["has_ptable"] and not cache["ptable_shared"]  # a bias that depends on parameters
            H = C * gs if free else np.multiply(gs, C, out=gs)  # (M, B, V) the score gradient per token
            if qrow is None:
                dtable = H.sum(axis=1)  # (M, V)
            else:
                cols = qrow[..., None] * V + grid(1, V, 1)  # (M, B, V) into the stack's (M U, V) table
                dtable = np.bincount(cols.ravel(), weights=H.ravel(), minlength=M * U * V)
            if free:
                np.multiply(gs, cache["ecr"], out=gs)  # gs is not read again: R = e^c (g - s) / Z in its place
                Rt = np.take(np.divide(gs, cache["Z"], out=gs), flat)  # (M, B, n): dz_j = e^{b_j} R[b, x_j]
                if rows is None:
                    dptable = cache["ep"] * Rt.sum(axis=1)[:, None]  # (M, 1, n)
                else:
                    dptable = cache["ep"] * np.bincount(rows.ravel(), weights=Rt.ravel(), minlength=M * U * n).reshape(
                        M, U, n
                    )
    if dptable is not None and not cache["ptable_shared"]:
        dq, scheme_grads = scheme.bias_backward_at(dptable, params, cfg, q, cache["r"], cache["pos"][-1])
    else:
        dq, scheme_grads = None, {}
    dq = np.zeros_like(q) if dq is None else dq  # (M, U, d)
    if scheme.scale_grows:  # lambda = s log n scales the content tables: dL/dlambda = sum dtable * raw / tau
        dlam = (dtable.reshape(M, -1) * cache["raw"].reshape(M, -1)).sum(axis=1)  # (M,)
        if code is not None:
            dlam += (dptable.reshape(M, -1) * cache["raw_p"].reshape(M, -1)).sum(axis=1)
        scheme_grads.update(scheme.logit_scale_backward(dlam / tau, params, cfg, cache["reading"], n))
    if scheme.rotary:
        dtable = dtable.reshape(M, U * n, V) * (cache["lam"] / tau)  # (M, U n, V)
        # table = Re(W kc^T): d/dkc = sum conj(W) dtable; d/dW = conj(dtable kc), and W = conj(q) e
        Wc = cache["W"].reshape(M, U * n, -1).conj()  # (M, U n, P)
        dEK = (np.swapaxes(dtable, 1, 2) @ Wc).view(np.float64)  # (M, V, d)
        dW = (dtable @ cache["kc"]).reshape(M, U, n, -1)  # (M, U, n, P)
        dq += (dW * cache["e"]).sum(axis=2).view(np.float64)  # (M, U, d)
    else:
        lam = cache["lam"]
        dtable = dtable.reshape(M, U, V) / tau if _unit(lam) else dtable.reshape(M, U, V) * (lam / tau)  # (M, U, V)
        dq += dtable @ cache["EK"]
        dEK = np.swapaxes(dtable, 1, 2) @ q  # (M, V, d)
        if code is not None:
            if _unit(lam):
                dq += dptable @ cache["PK"] / tau
                dPK = np.swapaxes(dptable, 1, 2) @ q / tau  # (M, n, d)
            else:  # the code's share of <q, k> is scaled too
                dq += dptable @ cache["PK"] * (lam / tau)
                dPK = np.swapaxes(dptable, 1, 2) @ q * (lam / tau)  # (M, n, d)
    T = cache["T"]
    TT = np.swapaxes(T, 1, 2)  # (M, d, V)
    grads["W_Q"] = np.swapaxes(cache["hq"], 1, 2) @ dq  # (M, d, d)
    dhq = dq @ np.swapaxes(W_Q, 1, 2)  # (M, U, d)
    grads["W_K"] = TT @ dEK
    grads["W_V"] = TT @ dEV
    dT = dEK @ np.swapaxes(W_K, 1, 2) + dEV @ np.swapaxes(W_V, 1, 2)  # (M, V, d)
    dT[:, cache["uq"]] += dhq  # the distinct query tokens' rows
    grads.update(token_table_backward(dT, params, cfg))
    if code is not None:
        codeT = np.swapaxes(code, -1, -2)  # (d, n) or (M, d, n)
        grads["W_K"] += codeT @ dPK
        grads["W_V"] += codeT @ dPV
        dcode = dPK @ np.swapaxes(W_K, 1, 2) + dPV @ np.swapaxes(W_V, 1, 2)  # (M, n, d)
        dcode[:, -1] += dhq.sum(axis=1)
        scheme_grads.update(scheme.code_backward(dcode, params, cfg, cache["pos"]))
    grads.update(scheme_grads)
    for m, sub in cache["exact"].items():  # the models whose rows underflowed, from their exact pass
        one = {k: v[m : m + 1] for k, v in params.items()}
        for k, v in stack_backward(one, cfg, sub, dlogits[m : m + 1]).items():
            grads[k][m] = v[0]
    return {k: grads[k] for k in params}
