"""One head by the engine: the stack of one, as training, the tournament and every reader call it.

:func:`query_forward` and :func:`query_backward` compute :func:`poskernels.model.head.forward` and
:func:`~poskernels.model.head.backward` by the stack (:mod:`poskernels.model.engine.stack`), ``M = 1``;
:func:`loss_and_grad` is one training step's loss and gradient, :func:`query_logits` and :func:`accuracy` read a
long test set in chunks.  ``tests/test_engine.py`` checks them against the readable head for every registered
scheme.

Examples
--------
>>> from poskernels.model.head import forward, init_params
>>> from poskernels.tasks.cue import cue_batch
>>> cfg = HeadConfig(scheme="rope")
>>> p = init_params(cfg, np.random.default_rng(0))
>>> x, y = cue_batch(np.random.default_rng(1), 4, 12)
>>> bool(np.allclose(query_forward(p, cfg, x)[0], forward(p, cfg, x)[0]))  # the head as the article writes it
True
"""

from __future__ import annotations

import numpy as np

from ...errors import PosKernelsError, check_array
from ..config import HeadConfig
from ..head import _stack, _unstack
from ..reading import PLAIN, Reading, check_tokens
from ..validate import check_targets
from .reductions import stack_cross_entropy
from .stack import attention, stack_backward, stack_forward

__all__ = ["accuracy", "cross_entropy", "loss_and_grad", "query_backward", "query_forward", "query_logits"]


def query_forward(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, score_shift=None, validate=True
):
    """:func:`~poskernels.model.head.forward` by the engine: logits ``(B, C)`` and a cache, the stack of one
    (:func:`~poskernels.model.engine.stack.stack_forward`).

    ``score_shift`` (broadcasting to ``(B, n)``) is added to the scores before the softmax; the cache holds ``a``,
    the attention weights ``(B, n)``.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters.
    cfg : HeadConfig
        The head.
    tokens : array_like of int, shape (B, n)
        Sequences; the query is the last token of each.
    positions : array_like, shape (n,), optional
        Their positions; ``0..n-1`` by default.
    reading : Reading
        How the head is read.
    score_shift : array_like, optional
        Added to the scores before the softmax, broadcasting to ``(B, n)``.
    validate : bool
        Check the tokens (the trainer, which drew them, passes False).

    Returns
    -------
    logits : ndarray, shape (B, C)
        Equal to :func:`~poskernels.model.head.forward`'s.
    cache : dict
        ``a`` (the attention weights) and what :func:`query_backward` reads.

    Raises
    ------
    PosKernelsError
        If ``validate`` and a token is refused.

    Examples
    --------
    >>> from poskernels.model.head import backward, forward, init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x = np.random.default_rng(1).integers(0, cfg.vocab, size=(3, 8))
    >>> z, cache = query_forward(p, cfg, x)
    >>> z0, cache0 = forward(p, cfg, x)
    >>> bool(np.allclose(z, z0)), bool(np.allclose(cache["a"], cache0["a"]))
    (True, True)
    """
    if validate:
        tokens = check_tokens(cfg, tokens)
    tokens = np.asarray(tokens)
    shift = None if score_shift is None else np.asarray(score_shift, dtype=float)[None]
    logits, cache = stack_forward(_stack(params), cfg, tokens[None], positions, reading, shift, validate=False)
    return logits[0], {"a": attention(cache)[0], "stack": cache}


def query_backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    """:func:`~poskernels.model.head.backward` by the engine: gradients from ``dL/dlogits (B, C)``
    (:func:`~poskernels.model.engine.stack.stack_backward` of one).

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters.
    cfg : HeadConfig
        The head.
    cache : dict
        :func:`query_forward`'s cache.
    dlogits : ndarray, shape (B, C)
        The gradient with respect to the logits.

    Returns
    -------
    dict of ndarray
        One gradient per parameter, equal to :func:`~poskernels.model.head.backward`'s.

    Examples
    --------
    >>> from poskernels.model.head import backward, forward, init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x = np.random.default_rng(1).integers(0, cfg.vocab, size=(3, 8))
    >>> dlogits = np.eye(cfg.n_classes)[[0, 1, 2]]
    >>> g = query_backward(p, cfg, query_forward(p, cfg, x)[1], dlogits)
    >>> g0 = backward(p, cfg, forward(p, cfg, x)[1], dlogits)
    >>> all(np.allclose(g[k], g0[k]) for k in g0)
    True
    """
    return _unstack(stack_backward(_stack(params), cfg, cache["stack"], np.asarray(dlogits)[None]))


def cross_entropy(logits: np.ndarray, targets) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient with respect to the logits (one head).

    Parameters
    ----------
    logits : ndarray, shape (B, C)
        Finite logits.
    targets : array_like of int, shape (B,)
        Class ids.

    Returns
    -------
    loss : float
        The mean cross-entropy.
    grad : ndarray, shape (B, C)
        Its gradient.

    Raises
    ------
    PosKernelsError
        If the logits are not a finite ``(B, C)`` array, or a target is out of range.

    Examples
    --------
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
    """Cross-entropy of the head read at the last position, and its gradient (by the engine).

    Parameters
    ----------
    params : dict
        The head's arrays, as :func:`init_params` draws them (or training leaves them).
    cfg : HeadConfig
        The head's configuration (width, vocabulary, scheme and its settings).
    tokens : array_like of int, shape (B, n)
        The sequences.
    targets : array_like of int, shape (B,)
        The class each sequence should give.

    Returns
    -------
    tuple of (float, dict)
        The mean cross-entropy, and its gradient with respect to each array of `params`, by name.

    Raises
    ------
    PosKernelsError
        If `tokens` or `targets` is not of the shape and range the head reads.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> rng = np.random.default_rng(0)
    >>> cfg = HeadConfig(scheme="rope")
    >>> loss, grads = loss_and_grad(init_params(cfg, rng), cfg, *cue_batch(rng, 8, 32))
    >>> round(loss, 2), sorted(grads) == sorted(init_params(cfg, rng))
    (2.08, True)
    """
    logits, cache = query_forward(params, cfg, tokens)
    loss, dlogits = cross_entropy(logits, targets)
    return loss, query_backward(params, cfg, cache, dlogits)


def query_logits(
    params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, score_shift=None, chunk=1 << 17
):
    """Logits ``(B, C)`` at the last position, computed in chunks of about ``chunk`` tokens (long test sets).

    Parameters
    ----------
    params : dict
        The head's arrays, as :func:`init_params` draws them (or training leaves them).
    cfg : HeadConfig
        The head's configuration (width, vocabulary, scheme and its settings).
    tokens : array_like of int, shape (B, n)
        The sequences.
    positions : array_like, shape (n,), optional
        The tokens' positions; default ``0..n-1``.
    reading : Reading, optional
        How the head is read: extended frequencies (``inv_freq``) and a logit scale; default the trained head as
        trained.
    score_shift : array_like, optional
        Added to the scores before the softmax, broadcasting to ``(B, n)``; default None.
    chunk : int, optional
        About how many tokens each pass of the engine holds; default 131,072.

    Returns
    -------
    ndarray, shape (B, C)
        The logits, equal to :func:`query_forward`'s.

    Raises
    ------
    PosKernelsError
        If `tokens` is not a 2-d integer array of the head's vocabulary.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, _ = cue_batch(np.random.default_rng(1), 4, 32)
    >>> out = query_logits(p, cfg, x, chunk=64)  # two sequences a pass
    >>> out.shape, bool(np.allclose(out, query_forward(p, cfg, x)[0]))
    ((4, 8), True)
    """
    tokens = check_tokens(cfg, tokens)
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

    Parameters
    ----------
    params : dict
        The head's arrays, as :func:`init_params` draws them (or training leaves them).
    cfg : HeadConfig
        The head's configuration (width, vocabulary, scheme and its settings).
    tokens : array_like of int, shape (B, n)
        The sequences.
    targets : array_like of int, shape (B,)
        The class each sequence should give.
    positions : array_like, shape (n,), optional
        The tokens' positions; default ``0..n-1``.
    reading : Reading, optional
        How the head is read: extended frequencies (``inv_freq``) and a logit scale; default the trained head as
        trained.
    score_shift : array_like, optional
        Added to the scores before the softmax, broadcasting to ``(B, n)``; default None.

    Returns
    -------
    float
        The accuracy, in ``[0, 1]``.

    Raises
    ------
    PosKernelsError
        If `tokens` or `targets` is not of the shape and range the head reads.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="alibi")
    >>> acc = accuracy(init_params(cfg, np.random.default_rng(0)), cfg, *cue_batch(np.random.default_rng(1), 100, 32))
    >>> 0.0 <= acc <= 1.0
    True
    """
    targets = check_targets(targets, cfg.n_classes, np.shape(tokens)[0])  # (B,) class ids
    logits = query_logits(params, cfg, tokens, positions, reading, score_shift)
    return float(np.mean(np.argmax(logits, axis=1) == targets))
