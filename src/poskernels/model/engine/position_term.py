"""The position term of a stack's score: the added code's share of ``<q, k>`` and the bias, forward beside backward.

A key's score is its content entry (:mod:`poskernels.model.engine.tables`) plus a term of its position alone,
``ptable``: ``q_u p(j) W_K lambda / tau`` for a head with an added code, plus the scheme's bias ``b(t - j)``
(:meth:`poskernels.encodings.Scheme.bias_at`).  It is ``(n,)`` when the bias is one row shared by every model and
query (ALiBi), else ``(M, U, n)``; None when the score has no such term.
"""

from __future__ import annotations

import numpy as np

from .reductions import per_model_max
from .tables import unit_scale

__all__ = ["bias_backward", "code_share_backward", "position_table", "position_weights"]


def position_table(c: dict, params: dict, cfg, scheme) -> np.ndarray | None:
    """``ptable``: the code's share of the score (kept unscaled as ``c["raw_p"]`` for a learned ``lambda``), plus the
    bias, each model's, query token's and key's; None when there is neither."""
    q, lam, tau = c["q"], c["lam"], cfg.tau
    M, U, n = q.shape[0], q.shape[1], c["r"].size
    ptable = None if c["code"] is None else q @ np.swapaxes(c["PK"], 1, 2)  # (M, U, n): query tokens against positions
    if ptable is not None:
        if scheme.scale_grows:
            c["raw_p"] = ptable
        ptable = ptable / tau if unit_scale(lam) else ptable * (lam / tau)
    bias = scheme.bias_at(params, cfg, q, c["r"], c["pos"][-1])  # (M, U, n), (M, n), (n,) or None
    if bias is not None:
        bias = bias[:, None, :] if bias.ndim == 2 else bias
        ptable = bias if ptable is None else ptable + bias
    if ptable is not None and ptable.ndim == 3:
        ptable = np.broadcast_to(ptable, (M, U, n))
    return ptable


def position_weights(ptable: np.ndarray | None, rows: np.ndarray | None):
    """``(ep, wp)``: the position term's exponential (``(n,)`` or ``(M, U, n)``, each model's maximum 1) and each
    key's weight from it (``(M, B, n)`` or broadcasting to it); ``(None, None)`` without a position term."""
    if ptable is None:
        return None, None
    ep = np.exp(ptable - (ptable.max() if ptable.ndim == 1 else per_model_max(ptable)))
    return ep, ep if ep.ndim == 1 or rows is None else ep.reshape(-1)[rows]


def bias_backward(dptable, c: dict, params: dict, cfg, scheme) -> tuple[np.ndarray, dict]:
    """``(dL/dq (M, U, d), the bias's parameter gradients)`` from the position term's gradient (zeros and ``{}``
    when the bias has no parameters, or there is no position term)."""
    if dptable is not None and not c["ptable_shared"]:
        dq, grads = scheme.bias_backward_at(dptable, params, cfg, c["q"], c["r"], c["pos"][-1])
    else:
        dq, grads = None, {}
    return (np.zeros_like(c["q"]) if dq is None else dq), grads  # (M, U, d)


def code_share_backward(dptable: np.ndarray, c: dict, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """``(dL/dPK (M, n, d), the query's share of dL/dq (M, U, d))``: the code's share of ``<q, k>``, scaled too."""
    q, lam = c["q"], c["lam"]
    if unit_scale(lam):
        return np.swapaxes(dptable, 1, 2) @ q / tau, dptable @ c["PK"] / tau
    return np.swapaxes(dptable, 1, 2) @ q * (lam / tau), dptable @ c["PK"] * (lam / tau)
