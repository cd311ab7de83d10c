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
    bias, each model's, query token's and key's; None when there is neither.

    Parameters
    ----------
    c : dict
        The forward pass's cache (:func:`~poskernels.model.engine.stack.stack_forward`'s).
    params : dict of ndarray
        Stacked parameters.
    cfg : HeadConfig
        The heads.
    scheme : Scheme
        Their scheme (``SCHEMES[cfg.scheme]``).

    Returns
    -------
    ndarray of shape (n,) or (M, U, n), or None
        The position term of each key's score: one shared row for a bias the same for every model and query
        (ALiBi).

    Examples
    --------
    >>> from poskernels.encodings import SCHEMES
    >>> from poskernels.model.config import HeadConfig
    >>> from poskernels.model.engine.reductions import stack_params
    >>> from poskernels.model.engine.stack import stack_forward
    >>> from poskernels.model.head import init_params
    >>> x = np.array([[[3, 1, 4, 1, 5, 16], [2, 7, 1, 8, 2, 16]]])  # (M, B, n): one model, its queries last
    >>> def cache_of(scheme):
    ...     cfg = HeadConfig(scheme=scheme)
    ...     params = stack_params([init_params(cfg, np.random.default_rng(0))])
    ...     return stack_forward(params, cfg, x)[1], params, cfg
    >>> c, params, cfg = cache_of("alibi")
    >>> position_table(c, params, cfg, SCHEMES["alibi"]).tolist(), c["r"].tolist()  # -s r with s = 1/2
    ([-2.5, -2.0, -1.5, -1.0, -0.5, -0.0], [5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    >>> c, params, cfg = cache_of("rope")
    >>> position_table(c, params, cfg, SCHEMES["rope"]) is None  # a turn, nothing added
    True
    """
    q, lam, tau = c["q"], c["lam"], cfg.tau
    M, U, n = q.shape[0], q.shape[1], c["r"].shape[-1]
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
    key's weight from it (``(M, B, n)`` or broadcasting to it); ``(None, None)`` without a position term.

    Parameters
    ----------
    ptable : ndarray or None
        :func:`position_table`'s term.
    rows : ndarray of int or None
        Flat indices of each key's entry in a per-query table, or None to use ``ep`` itself.

    Returns
    -------
    ep : ndarray or None
        ``exp(ptable - max)``, each model's largest 1.
    wp : ndarray or None
        Each key's weight from it.

    Examples
    --------
    >>> ep, wp = position_weights(np.array([-1.0, 0.0]), None)
    >>> ep.round(4).tolist(), wp is ep
    ([0.3679, 1.0], True)
    >>> position_weights(None, None)
    (None, None)
    """
    if ptable is None:
        return None, None
    ep = np.exp(ptable - (ptable.max() if ptable.ndim == 1 else per_model_max(ptable)))
    return ep, ep if ep.ndim == 1 or rows is None else ep.reshape(-1)[rows]


def bias_backward(dptable, c: dict, params: dict, cfg, scheme) -> tuple[np.ndarray, dict]:
    """``(dL/dq (M, U, d), the bias's parameter gradients)`` from the position term's gradient (zeros and ``{}``
    when the bias has no parameters, or there is no position term).

    Parameters
    ----------
    dptable : ndarray or None
        The gradient with respect to the position term.
    c : dict
        The forward pass's cache (:func:`~poskernels.model.engine.stack.stack_forward`'s).
    params : dict of ndarray
        Stacked parameters.
    cfg : HeadConfig
        The heads.
    scheme : Scheme
        Their scheme.

    Returns
    -------
    dq : ndarray, shape (M, U, d)
        The bias's share of the queries' gradient.
    grads : dict of ndarray
        The bias's parameter gradients, stacked.

    Examples
    --------
    >>> from poskernels.encodings import SCHEMES
    >>> from poskernels.model.config import HeadConfig
    >>> from poskernels.model.engine.reductions import stack_params
    >>> from poskernels.model.engine.stack import stack_forward
    >>> from poskernels.model.head import init_params
    >>> x = np.array([[[3, 1, 4, 1, 5, 16], [2, 7, 1, 8, 2, 16]]])  # (M, B, n): one model, its queries last
    >>> def cache_of(scheme):
    ...     cfg = HeadConfig(scheme=scheme)
    ...     params = stack_params([init_params(cfg, np.random.default_rng(0))])
    ...     return stack_forward(params, cfg, x)[1], params, cfg
    >>> c, params, cfg = cache_of("t5")
    >>> dq, grads = bias_backward(np.ones((1, 1, 6)), c, params, cfg, SCHEMES["t5"])
    >>> dq.shape, {k: v.shape for k, v in grads.items()}  # T5's learned buckets
    ((1, 1, 16), {'beta': (1, 32)})
    """
    if dptable is not None and not c["ptable_shared"]:
        dq, grads = scheme.bias_backward_at(dptable, params, cfg, c["q"], c["r"], c["pos"][-1])
    else:
        dq, grads = None, {}
    return (np.zeros_like(c["q"]) if dq is None else dq), grads  # (M, U, d)


def code_share_backward(dptable: np.ndarray, c: dict, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """``(dL/dPK (M, n, d), the query's share of dL/dq (M, U, d))``: the code's share of ``<q, k>``, scaled too.

    Parameters
    ----------
    dptable : ndarray, shape (M, U, n)
        The gradient with respect to the position term.
    c : dict
        The forward pass's cache (:func:`~poskernels.model.engine.stack.stack_forward`'s).
    tau : float
        The score's temperature.

    Returns
    -------
    dPK : ndarray, shape (M, n, d)
        The gradient with respect to the code's keys ``p(j) W_K``.
    dq : ndarray, shape (M, U, d)
        The code's share of the queries' gradient.

    Examples
    --------
    >>> from poskernels.encodings import SCHEMES
    >>> from poskernels.model.config import HeadConfig
    >>> from poskernels.model.engine.reductions import stack_params
    >>> from poskernels.model.engine.stack import stack_forward
    >>> from poskernels.model.head import init_params
    >>> x = np.array([[[3, 1, 4, 1, 5, 16], [2, 7, 1, 8, 2, 16]]])  # (M, B, n): one model, its queries last
    >>> def cache_of(scheme):
    ...     cfg = HeadConfig(scheme=scheme)
    ...     params = stack_params([init_params(cfg, np.random.default_rng(0))])
    ...     return stack_forward(params, cfg, x)[1], params, cfg
    >>> c, params, cfg = cache_of("sinusoidal")
    >>> dPK, dq = code_share_backward(np.ones((1, 1, 6)), c, cfg.tau)
    >>> dPK.shape, dq.shape
    ((1, 6, 16), (1, 1, 16))
    """
    q, lam = c["q"], c["lam"]
    if unit_scale(lam):
        return np.swapaxes(dptable, 1, 2) @ q / tau, dptable @ c["PK"] / tau
    return np.swapaxes(dptable, 1, 2) @ q * (lam / tau), dptable @ c["PK"] * (lam / tau)
