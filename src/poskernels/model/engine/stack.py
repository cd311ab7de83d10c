"""A stack of ``M`` independent heads: one forward, hand-written backward and loss for all of them.

Every parameter gains a leading model axis (:func:`stack_params`) and head ``m`` reads its own
sequences ``tokens[m]``; one call advances all ``M``, so NumPy's per-call cost is paid once per
stack instead of once per head.  Nothing mixes the models: every maximum, sum and accumulation is
each model's own (and a row sum is one BLAS ``gemv`` per model, the same whatever the stack), so a
head computes the same bits alone and inside any stack (``tests/test_stack.py``); the per-model reductions
that guarantee it, and the loss, are :mod:`poskernels.model.engine.reductions`'s.  The single-head entry points
(:mod:`poskernels.model.engine.one_head`) are this stack of one.

A step reads in four parts, each forward beside its backward in its own module: the content table
(:mod:`~poskernels.model.engine.tables`), the position term (:mod:`~poskernels.model.engine.position_term`), the
softmax by one of the score paths (:mod:`~poskernels.model.engine.paths`, chosen from a table by what the score
holds), and the read-out; this module joins them, and recomputes a model whose row sum underflowed by the exact path.
"""

from __future__ import annotations

import numpy as np

from ...encodings import SCHEMES
from ...errors import PosKernelsError
from ..config import HeadConfig
from ..embedding import token_table, token_table_backward
from ..reading import PLAIN, Reading, check_tokens, frequencies, read_positions
from .paths import ScoreTerms, choose_path
from .position_term import bias_backward, code_share_backward, position_table
from .reductions import grid, row_sum
from .tables import DotTable, RotaryTable

__all__ = ["attention", "stack_backward", "stack_forward"]

_UNDERFLOW = 1e-200  # a model with a row sum at or below it is recomputed by the exact path


def _query_index(xq: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Distinct query tokens ``uq`` and each sequence's index into them (None: a single query token)."""
    first = xq.flat[0] if xq.size else 0
    if xq.size and (xq == first).all():
        return xq.reshape(-1)[:1], None  # the cue task: every sequence ends with the query token
    return np.unique(xq, return_inverse=True)


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
    positions : array_like, shape (n,) or (M, n), optional
        Absolute positions of the columns (default ``0..n-1``); real values are allowed for the
        sinusoidal code and RoPE (a shifted or interpolated reading).  ``(M, n)``: each model its own positions
        (randomized positions train so), for a scheme whose position enters by its code or its turn alone.
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
    Three ways to the same weights, by what the score holds: the score paths of
    :mod:`poskernels.model.engine.paths`, each a forward beside its backward, the first of its table that takes the
    score computing it:

    * ``content`` (no position, ALiBi, T5, Shaw, Kerple, FIRE): the score is ``c(x_t, x_j) + b(x_t, j)``, so
      ``C[b, v] = e^{c(x_t, v)} sum_{j: x_j = v} e^{b(x_t, j)}``: one weighted count per token, and
      the backward needs no per-token array for the content (and one gather for a learned bias);
    * ``rotary`` (RoPE and its family): the content table depends on ``j``; each key's weight is one gather from it;
    * ``token`` (an additive code, a score shift, a turn with a bias): the general per-key path.

    ``a_j = e_j / Z`` is never formed outside the ``token`` path; :func:`attention` builds it.

    Examples
    --------
    Head ``m`` of the stack gives what it gives alone:

    >>> from poskernels.model.engine.reductions import stack_params
    >>> from poskernels.model.head import backward, forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> heads = [init_params(cfg, np.random.default_rng(s)) for s in (0, 1)]
    >>> x = np.random.default_rng(2).integers(0, cfg.vocab, size=(2, 3, 8))  # (M, B, n)
    >>> z, cache = stack_forward(stack_params(heads), cfg, x)
    >>> z.shape, bool(np.allclose(z[1], forward(heads[1], cfg, x[1])[0]))
    ((2, 3, 8), True)
    """
    tokens = np.asarray(tokens)
    if validate:
        check_tokens(cfg, tokens.reshape(-1, tokens.shape[-1]) if tokens.ndim == 3 else tokens)
    return _forward(params, cfg, tokens, positions, reading, score_shift, exact=False)


def _inputs(params: dict, cfg: HeadConfig, tokens: np.ndarray, positions, reading: Reading) -> dict:
    """The step's cache, begun: positions and offsets, the added code, the distinct query tokens' queries, every
    token's key and value, and where each sequence's query sits among the stack's query rows."""
    scheme = SCHEMES[cfg.scheme]
    M, B, n = tokens.shape
    W_Q, W_K, W_V = params["W_Q"], params["W_K"], params["W_V"]
    T = token_table(params, cfg)  # (M, V, d)
    pos = _positions(positions, scheme, M, n)  # (n,), or (M, n): each model's own
    theta = frequencies(cfg, reading)
    code = scheme.code(params, cfg, pos)  # (n, d), (M, n, d) or None
    if code is not None and theta is not None:
        raise PosKernelsError(f"scheme {cfg.scheme!r} is both additive and rotary; the head supports one or the other")
    uq, iq = _query_index(tokens[..., -1])  # (U,), (M*B,) or None
    U = uq.size
    hq = T[:, uq]  # (M, U, d)
    c = {}
    if code is not None:
        hq = hq + code[..., -1:, :]
        c.update(PK=code @ W_K, PV=code @ W_V)  # (M, n, d) each
    qrow = None if iq is None else iq.reshape(M, B) + grid(M, 1, U)  # (M, B) query row in the stack's (M U) rows
    rows = None if iq is None else qrow[..., None] * n + grid(1, n, 1)  # (M, B, n) into the stack's (M U, n) table
    r = pos[-1] - pos if pos.ndim == 1 else pos[:, -1:] - pos  # (n,) or (M, n) each key's offset from the query
    c.update(tokens=tokens, pos=pos, r=r, theta=theta, code=code, T=T, hq=hq, q=hq @ W_Q, uq=uq)
    c.update(EK=T @ W_K, EV=T @ W_V, rows=rows, qrow=qrow, U=U, reading=reading)  # (M, V, d): every token's k, v
    c["lam"] = _logit_scale(params, cfg, reading, n)  # the logit scale lambda (1 as trained; (M, 1, 1): s log n)
    return c


def _positions(positions, scheme, M: int, n: int) -> np.ndarray:
    """The columns' positions: ``(n,)`` shared by the stack, or ``(M, n)``, one row per model (each row checked as
    :func:`read_positions` checks one), for a scheme whose position enters by its code or its turn alone."""
    if positions is None or np.ndim(positions) != 2:
        return read_positions(positions, n)
    if np.shape(positions)[0] != M:
        raise PosKernelsError(f"per-model positions must have one row per model, ({M}, {n}); got {np.shape(positions)}")
    if scheme.where not in ("input", "rotation"):
        raise PosKernelsError(f"per-model positions need a scheme whose position is its code or its turn; "
                              f"got scheme {scheme.name!r} (where={scheme.where!r})")  # fmt: skip
    return np.stack([read_positions(row, n) for row in positions])  # (M, n)


def _forward(params, cfg, tokens, positions, reading, score_shift, exact):
    c = _inputs(params, cfg, tokens, positions, reading)
    scheme = SCHEMES[cfg.scheme]
    c["table"] = RotaryTable if c["theta"] is not None else DotTable
    table = c["table"].forward(c, scheme, cfg.tau)  # (M, U[ n], V) the content entry of every (query, [key,] token)
    ptable = position_table(c, params, cfg, scheme)  # (n,), (M, U, n) or None
    coded, rotary, positional = c["code"] is not None, c["theta"] is not None, ptable is not None
    path = choose_path(ScoreTerms(exact, score_shift is not None, coded, rotary, positional))
    Cw = path.mass(c, table, ptable, score_shift)  # (M, B, V) unnormalized mass on each token
    Z, low = _normalizer(Cw)  # (M, B, 1)
    C = np.divide(Cw, Z, out=Cw)  # (M, B, V) attention mass on each token (in place)
    EO = c["EV"] @ params["W_O"]  # (M, V, C): each token's value, read out
    logits = C @ EO  # (M, B, C): o W_O with o = C EV, never formed
    path.read_out(c, Z, logits, params["W_O"])
    c.update(path=path, C=C, Z=Z, EO=EO, logits=logits, has_ptable=ptable is not None)
    c["ptable_shared"] = ptable is not None and ptable.ndim == 1
    c["exact"] = {}
    for m in low:  # those models again, every score itself (rare: huge weights)
        one = {k: v[m : m + 1] for k, v in params.items()}
        M, B, n = tokens.shape
        shift_m = None if score_shift is None else np.broadcast_to(score_shift, (M, B, n))[m : m + 1]
        pos_m = c["pos"] if c["pos"].ndim == 1 else c["pos"][m : m + 1]  # its own row of per-model positions
        sub_logits, c["exact"][m] = _forward(one, cfg, tokens[m : m + 1], pos_m, reading, shift_m, exact=True)
        logits[m] = sub_logits[0]
    return logits, c


def _normalizer(Cw: np.ndarray) -> tuple[np.ndarray, np.ndarray | tuple]:
    """``Z (M, B, 1)``, each row's sum, and the models with a row far below its tables' maxima, whose sum
    underflowed (one check when none); a row that underflowed to 0 is divided by 1 (it is recomputed)."""
    Z = row_sum(Cw)  # (M, B, 1)
    low = ()
    if Z.min() <= _UNDERFLOW:
        low = np.flatnonzero(Z.reshape(Z.shape[0], -1).min(axis=1) <= _UNDERFLOW)
        Z = np.where(Z > 0, Z, 1.0)
    return Z, low


def _logit_scale(params: dict, cfg: HeadConfig, reading: Reading, n: int):
    """The stack's logit scale over ``n`` keys: a number, or ``(M, 1, 1)`` when it grows with ``n`` (``s log n``)."""
    scheme = SCHEMES[cfg.scheme]
    if not scheme.scale_grows:
        return scheme.logit_scale(cfg, reading)
    return np.asarray(scheme.logit_scale_at(params, cfg, reading, n), dtype=float).reshape(-1, 1, 1)


def attention(cache: dict) -> np.ndarray:
    """The attention weights ``a (M, B, n)`` of a forward pass (:func:`stack_forward`'s cache).

    Parameters
    ----------
    cache : dict
        :func:`stack_forward`'s cache.

    Returns
    -------
    ndarray, shape (M, B, n)
        Each sequence's softmax weights over its keys.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.model.engine.one_head import query_forward
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> _, cache = query_forward(p, cfg, cue_batch(np.random.default_rng(1), 3, 8)[0])
    >>> a = attention(cache["stack"])
    >>> a.shape, bool(np.allclose(a.sum(axis=-1), 1.0))
    ((1, 3, 8), True)
    """
    a = cache["path"].attention(cache)
    for m, sub in cache["exact"].items():
        a[m] = attention(sub)[0]
    return a


def stack_backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    """Gradients of every stacked parameter from ``dL/dlogits`` (shape ``(M, B, C)``), by hand.

    The reverse of :func:`stack_forward`, line by line; checked against float64 central
    differences and PyTorch autograd in ``tests/test_head_gradients.py``.

    Parameters
    ----------
    params : dict of ndarray
        Stacked parameters, each ``(M, ...)``.
    cfg : HeadConfig
        The heads.
    cache : dict
        :func:`stack_forward`'s cache.
    dlogits : ndarray, shape (M, B, C)
        The gradient with respect to the logits.

    Returns
    -------
    dict of ndarray
        One gradient per parameter, stacked like ``params``.

    Notes
    -----
    The values are read out through ``EO = EV W_O`` (``logits = C EO``), so with ``g[b, v] = dL/dlogits_b . EO[v]``
    the softmax's mean is ``s_b = sum_v C[b, v] g[b, v] = dL/dlogits_b . logits_b`` (the code's values included), a
    key's score gradient is ``dz_j = a_j (g[b, x_j] - s_b)`` (plus the code's share in the ``token`` path), so the
    content table's gradient sums ``C (g - s)`` over sequences (for a single query token, ``sum EO dEO - C^T s`` with
    ``dEO = C^T dL/dlogits``: no ``g`` at all), and a position term's is ``e^{b_j} R[b, x_j]`` with
    ``R = e^{c} (g - s) / Z``: one gather, no per-token softmax.

    Examples
    --------
    >>> from poskernels.model.engine.reductions import stack_params
    >>> from poskernels.model.head import backward, forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> heads = [init_params(cfg, np.random.default_rng(s)) for s in (0, 1)]
    >>> x = np.random.default_rng(2).integers(0, cfg.vocab, size=(2, 3, 8))  # (M, B, n)
    >>> z, cache = stack_forward(stack_params(heads), cfg, x)
    >>> dlogits = np.zeros_like(z)
    >>> dlogits[..., 0] = 1.0
    >>> g = stack_backward(stack_params(heads), cfg, cache, dlogits)
    >>> alone = backward(heads[1], cfg, forward(heads[1], cfg, x[1])[1], dlogits[1])
    >>> all(np.allclose(g[k][1], alone[k]) for k in alone)
    True
    """
    if not cache["exact"]:
        return _backward(params, cfg, cache, dlogits)
    with np.errstate(all="ignore"):  # the underflowed models' slices are overwritten from their exact pass
        return _backward(params, cfg, cache, dlogits)


def _backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    scheme = SCHEMES[cfg.scheme]
    W_OT = np.swapaxes(params["W_O"], 1, 2)  # (M, C, d)
    dEO = np.swapaxes(cache["C"], 1, 2) @ dlogits  # (M, V, C)
    s = row_sum(dlogits * cache["logits"])  # (M, B, 1) the softmax's mean sum_v C[b, v] dL/dC[b, v] = dlogits . logits
    dtable, dptable, dPO = cache["path"].backward(cache, dlogits, s, dEO)  # the softmax, by the path that computed it
    grads = {"W_O": np.swapaxes(cache["EV"], 1, 2) @ dEO}  # (M, d, C)
    dEV = dEO @ W_OT  # (M, V, d)
    dPV = None
    if dPO is not None:  # the code's values: o = C EV + a P W_V
        grads["W_O"] += np.swapaxes(cache["PV"], 1, 2) @ dPO
        dPV = dPO @ W_OT  # (M, n, d)
    dq, scheme_grads = bias_backward(dptable, cache, params, cfg, scheme)  # (M, U, d)
    if scheme.scale_grows:  # lambda = s log n scales the content tables: dL/dlambda = sum dtable * raw / tau
        dlam = _scale_gradient(cache, dtable, dptable)  # (M,)
        n = cache["tokens"].shape[-1]
        scheme_grads.update(scheme.logit_scale_backward(dlam / cfg.tau, params, cfg, cache["reading"], n))
    dEK, dq_table = cache["table"].backward(cache, dtable, cfg.tau)  # (M, V, d), (M, U, d)
    dq += dq_table
    dPK = None
    if cache["code"] is not None:
        dPK, dq_code = code_share_backward(dptable, cache, cfg.tau)  # (M, n, d), (M, U, d)
        dq += dq_code
    projection_grads, dhq = _projection_grads(params, cfg, cache, dq, dEK, dEV)
    grads.update(projection_grads)
    if cache["code"] is not None:
        scheme_grads.update(_code_grads(params, cfg, cache, grads, dhq, dPK, dPV))
    grads.update(scheme_grads)
    for m, sub in cache["exact"].items():  # the models whose rows underflowed, from their exact pass
        one = {k: v[m : m + 1] for k, v in params.items()}
        for k, v in stack_backward(one, cfg, sub, dlogits[m : m + 1]).items():
            grads[k][m] = v[0]
    return {k: grads[k] for k in params}


def _scale_gradient(cache: dict, dtable: np.ndarray, dptable) -> np.ndarray:
    """``tau dL/dlambda`` of each model ``(M,)``: the tables' gradients against their unscaled entries."""
    M = cache["tokens"].shape[0]
    dlam = (dtable.reshape(M, -1) * cache["raw"].reshape(M, -1)).sum(axis=1)  # (M,)
    if cache["code"] is not None:
        dlam += (dptable.reshape(M, -1) * cache["raw_p"].reshape(M, -1)).sum(axis=1)
    return dlam


def _projection_grads(params: dict, cfg: HeadConfig, cache: dict, dq, dEK, dEV) -> tuple[dict, np.ndarray]:
    """``W_Q``, ``W_K``, ``W_V`` and the embedding's gradients from those of the queries, keys and values, and the
    gradient of the distinct query tokens' inputs ``dhq (M, U, d)``."""
    W_Q, W_K, W_V = params["W_Q"], params["W_K"], params["W_V"]
    TT = np.swapaxes(cache["T"], 1, 2)  # (M, d, V)
    grads = {"W_Q": np.swapaxes(cache["hq"], 1, 2) @ dq}  # (M, d, d)
    dhq = dq @ np.swapaxes(W_Q, 1, 2)  # (M, U, d)
    grads["W_K"] = TT @ dEK
    grads["W_V"] = TT @ dEV
    dT = dEK @ np.swapaxes(W_K, 1, 2) + dEV @ np.swapaxes(W_V, 1, 2)  # (M, V, d)
    dT[:, cache["uq"]] += dhq  # the distinct query tokens' rows
    grads.update(token_table_backward(dT, params, cfg))
    return grads, dhq


def _code_grads(params: dict, cfg: HeadConfig, cache: dict, grads: dict, dhq, dPK, dPV) -> dict:
    """The added code's share of ``W_K`` and ``W_V`` (added into ``grads``), and the code's own gradients."""
    W_K, W_V = params["W_K"], params["W_V"]
    code = cache["code"]
    codeT = np.swapaxes(code, -1, -2)  # (d, n) or (M, d, n)
    grads["W_K"] += codeT @ dPK
    grads["W_V"] += codeT @ dPV
    dcode = dPK @ np.swapaxes(W_K, 1, 2) + dPV @ np.swapaxes(W_V, 1, 2)  # (M, n, d)
    dcode[:, -1] += dhq.sum(axis=1)  # the query's own position
    return SCHEMES[cfg.scheme].code_backward(dcode, params, cfg, cache["pos"])
