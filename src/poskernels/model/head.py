"""One causal attention head in NumPy, or a stack of independent heads: forward, hand-written backward.

The head reads token ids ``x_0..x_{n-1}``:

* ``h_m = T[x_m] + p(m)`` (``p`` only for an additive scheme), where ``T = token_table(params, cfg)``
  is the embedding of every token id: the article's ``E[symbol] + m [marked]``, or a free table
  (:mod:`poskernels.model.embedding`); ``q = h_t W_Q``, ``k_j = h_j W_K``, ``v_j = h_j W_V``;
* RoPE rotates them: ``q -> R_theta(t) q``, ``k_j -> R_theta(j) k_j`` (Definition 4);
* scores ``z_j = <q, k_j> / tau + bias(t - j)`` over the causal prefix ``j <= t``, ``tau = sqrt(d)``;
* ``o = sum_j softmax(z)_j v_j`` and logits ``o W_O`` over the symbols; softmax cross-entropy.

Training reads only the last position (the cue task's query).  That path works per token, not
per position: with ``EK = T W_K`` and ``EV = T W_V`` (``(V, d)`` tables) the content scores are
``(q EK^T)[x_j]`` and the output is ``C EV`` where ``C[v]`` is the attention mass on token ``v``,
so a step never builds a ``(B, n, d)`` array.  It runs on a *stack* of ``M`` independent heads at
once (:mod:`poskernels.model.stack`: :func:`stack_forward` and, right after it, its backward): every parameter
gains a leading model axis, and one call advances all ``M``; :func:`query_forward` is the stack of one.
:func:`poskernels.model.reader.score_all` reads every position of a sequence in one causal pass;
a test checks it against :func:`query_forward` on every prefix.

Parameters are a dict of arrays: the embedding's (``E (S+1, d)`` and ``m (d,)``, or ``E (V, d)``),
``W_Q, W_K, W_V (d, d)``, ``W_O (d, C)``, and the scheme's own (``P`` for the learned table,
``beta`` for T5, ``A`` for Shaw); a stack adds a leading ``M`` to each.
"""

from __future__ import annotations

import numpy as np

from ..errors import PosKernelsError, check_array
from .config import HeadConfig
from .embedding import init_embedding, token_table, token_table_backward
from .reading import PLAIN, Reading, _check_tokens, _positions, _theta  # noqa: F401 (the readers' checks, kept here)
from .schemes import HEAD_SCHEMES
from .stack import (
    attention,
    stack_backward,
    stack_cross_entropy,
    stack_forward,
    stack_params,
)
from .validate import check_targets

__all__ = [
    "PLAIN",
    "Reading",
    "accuracy",
    "attention",
    "cross_entropy",
    "init_params",
    "loss_and_grad",
    "query_backward",
    "query_forward",
    "query_logits",
    "stack_backward",
    "stack_cross_entropy",
    "stack_forward",
    "stack_params",
    "token_table",
    "token_table_backward",
]


def init_params(cfg: HeadConfig, rng: np.random.Generator) -> dict:
    """Draw a head: the embedding ``~ N(0, embed_scale^2)``, each map ``~ N(0, map_scale^2 / d)``, no biases.

    Parameters
    ----------
    cfg : HeadConfig
    rng : numpy.random.Generator

    Returns
    -------
    dict of str to ndarray
        The embedding's (``E (S+1, d)`` and ``m (d,)``, or ``E (V, d)`` for a table), ``W_Q``,
        ``W_K``, ``W_V`` ``(d, d)``, ``W_O (d, C)``, then the scheme's own.

    Examples
    --------
    >>> p = init_params(HeadConfig(scheme="learned"), np.random.default_rng(0))
    >>> {k: v.shape for k, v in p.items()}
    {'E': (9, 16), 'm': (16,), 'W_Q': (16, 16), 'W_K': (16, 16), 'W_V': (16, 16), 'W_O': (16, 8), 'P': (32, 16)}
    """
    d, s = cfg.d, cfg.map_scale / np.sqrt(cfg.d)
    params = init_embedding(cfg, rng)
    params.update(
        W_Q=rng.normal(0.0, s, size=(d, d)),  # (d, d)
        W_K=rng.normal(0.0, s, size=(d, d)),  # (d, d)
        W_V=rng.normal(0.0, s, size=(d, d)),  # (d, d)
        W_O=rng.normal(0.0, s, size=(d, cfg.n_classes)),  # (d, C)
    )
    params.update(HEAD_SCHEMES[cfg.scheme].init(cfg, rng))
    return params


def _one(params: dict) -> dict:
    return {k: v[None] for k, v in params.items()}


def query_forward(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, score_shift=None, validate=True
):
    """Logits at the last position of each sequence of one head: the stack of one (:func:`stack_forward`).

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (no model axis).
    tokens : ndarray of int, shape (B, n)
    positions, reading, score_shift, validate
        As in :func:`stack_forward` (``score_shift`` broadcasting to ``(B, n)``).

    Returns
    -------
    logits : ndarray, shape (B, C)
    cache : dict
        Intermediates for :func:`query_backward`, and ``a`` of shape ``(B, n)``: the attention weights
        (:func:`poskernels.model.stack.attention` of the stack of one).
    """
    if validate:
        tokens = _check_tokens(cfg, tokens)
    tokens = np.asarray(tokens)
    shift = None if score_shift is None else np.asarray(score_shift, dtype=float)[None]
    logits, cache = stack_forward(_one(params), cfg, tokens[None], positions, reading, shift, validate=False)
    return logits[0], {"a": attention(cache)[0], "stack": cache}


def query_backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    """Gradients of one head's parameters from ``dL/dlogits`` (shape ``(B, C)``): :func:`stack_backward` of one."""
    grads = stack_backward(_one(params), cfg, cache["stack"], np.asarray(dlogits)[None])
    return {k: g[0] for k, g in grads.items()}


def cross_entropy(logits: np.ndarray, targets) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient with respect to the logits (one head).

    >>> loss, g = cross_entropy(np.zeros((2, 4)), [0, 3])
    >>> round(loss, 4), float(abs(g.sum()).round(12))
    (1.3863, 0.0)
    """
    logits = check_array("logits", logits)  # finite real numbers: inf - inf would make the loss NaN
    if logits.ndim != 2:
        raise PosKernelsError(f"logits must have shape (batch, classes); got {logits.shape}")
    targets = check_targets(targets, logits.shape[1], logits.shape[0])  # (B,) in [0, C): never another row's logit
    loss, grad = stack_cross_entropy(logits[None], targets[None])
    return float(loss[0]), grad[0]


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
    targets = check_targets(targets, cfg.n_classes, np.shape(tokens)[0])  # (B,) class ids
    logits = query_logits(params, cfg, tokens, positions, reading, score_shift)
    return float(np.mean(np.argmax(logits, axis=1) == targets))
