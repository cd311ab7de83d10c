"""``M`` heads in one array without mixing them: stacked parameters, per-model reductions, each model's loss.

Every parameter gains a leading model axis (:func:`stack_params`).  A head computes the same bits alone and
inside any stack only if no reduction crosses that axis: each model's maximum is its own (:func:`per_model_max`),
a row sum is one BLAS ``gemv`` per model whatever the stack (:func:`row_sum`), and the softmax cross-entropy is
shifted by each model's own largest logit (:func:`stack_cross_entropy`).  The head's forward and backward over the
stack are :mod:`poskernels.model.engine.stack`'s.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...errors import PosKernelsError, check_array
from ..validate import check_stack_targets

__all__ = ["cross_entropy_core", "grid", "per_model_max", "row_sum", "stack_cross_entropy", "stack_params"]


def stack_params(heads) -> dict:
    """Stack heads' parameter dicts along a new leading model axis (one array per name).

    Parameters
    ----------
    heads : iterable of dict
        Heads' parameters, one dict each, with the same names and shapes.

    Returns
    -------
    dict of ndarray
        Each parameter with a leading model axis ``M``.

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> from poskernels.model.head import init_params
    >>> p = stack_params([init_params(HeadConfig(), np.random.default_rng(s)) for s in range(3)])
    >>> p["E"].shape, p["W_O"].shape
    ((3, 9, 16), (3, 16, 8))
    """
    heads = list(heads)
    return {k: np.stack([h[k] for h in heads]) for k in heads[0]}


@lru_cache(maxsize=64)
def grid(rows: int, n: int, stride: int) -> np.ndarray:
    """``stride * (i * n + j)`` for ``i < rows``, ``j < n`` (read-only), the offsets of flat table indices."""
    g = stride * np.arange(rows * n).reshape(rows, n)  # (rows, n)
    g.setflags(write=False)
    return g


@lru_cache(maxsize=64)
def _ones(k: int) -> np.ndarray:
    o = np.ones(k)  # (k,)
    o.setflags(write=False)
    return o


def row_sum(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=-1, keepdims=True)`` of a ``(M, B, k)`` array, as one matrix-vector product per model.

    NumPy's reduction over a short last axis costs about ten times a BLAS ``gemv``; each model's
    rows go through the same ``gemv`` whatever the stack, so a head's sums do not depend on it.

    Parameters
    ----------
    x : ndarray, shape (M, B, k)
        The rows.

    Returns
    -------
    ndarray, shape (M, B, 1)
        Each row's sum.

    Examples
    --------
    >>> row_sum(np.arange(6.0).reshape(2, 1, 3)).tolist()
    [[[3.0]], [[12.0]]]
    """
    return (x @ _ones(x.shape[-1]))[..., None]


def per_model_max(x: np.ndarray) -> np.ndarray:
    """The maximum of each model's slice of ``x`` (shape ``(M, ...)``), shaped to broadcast against it.

    Parameters
    ----------
    x : ndarray, shape (M, ...)
        A stack's array.

    Returns
    -------
    ndarray, shape (M, 1, ..., 1)
        Each model's maximum.

    Examples
    --------
    >>> per_model_max(np.arange(6.0).reshape(2, 1, 3)).tolist()
    [[[2.0]], [[5.0]]]
    """
    return x.reshape(x.shape[0], -1).max(axis=1).reshape((-1,) + (1,) * (x.ndim - 1))


def stack_cross_entropy(logits: np.ndarray, targets, finite: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Each model's mean softmax cross-entropy and its gradient, logits ``(M, B, C)``, targets ``(M, B)``.

    The softmax is shifted by each model's largest logit (one reduction per model, not per row); a
    model with a row so far below it that the row's sum underflows is shifted row by row instead.
    Logits must be finite; the trainer passes ``finite=False``, and a model whose logits overflowed then gets a
    NaN (or infinite) loss, its divergence signal, without changing the others' bits.

    Parameters
    ----------
    logits : ndarray, shape (M, B, C)
        Each model's logits.
    targets : array_like of int, shape (M, B)
        Class ids.
    finite : bool
        Refuse non-finite logits (the trainer passes False).

    Returns
    -------
    loss : ndarray, shape (M,)
        Each model's mean cross-entropy.
    grad : ndarray, shape (M, B, C)
        Its gradient with respect to the logits.

    Raises
    ------
    PosKernelsError
        If the logits are not a nonempty ``(M, B, C)`` array (finite, with ``finite``), or a target is out of range.

    Examples
    --------
    >>> loss, g = stack_cross_entropy(np.zeros((2, 2, 4)), [[0, 3], [1, 1]])
    >>> loss.round(4).tolist(), g.shape
    ([1.3863, 1.3863], (2, 2, 4))
    """
    logits = check_array("logits", logits) if finite else np.asarray(logits, dtype=float)
    if logits.ndim != 3 or 0 in logits.shape:
        raise PosKernelsError(f"logits must have shape (models, batch, classes), none empty; got {logits.shape}")
    M, B, C = logits.shape
    targets = check_stack_targets(targets, (M, B), C)  # (M, B): one out of range would read another row
    return cross_entropy_core(logits, targets)


def cross_entropy_core(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`stack_cross_entropy` on arguments already checked: float logits ``(M, B, C)`` and integer targets
    ``(M, B)`` in ``[0, C)`` (the trainer's, whose draw checked its targets once for many steps).

    Parameters
    ----------
    logits : ndarray of float, shape (M, B, C)
        Each model's logits (not checked; an overflowed model gets a NaN or infinite loss).
    targets : ndarray of int, shape (M, B)
        Class ids in ``[0, C)`` (not checked: one out of range reads another row).

    Returns
    -------
    loss : ndarray, shape (M,)
    grad : ndarray, shape (M, B, C)

    Examples
    --------
    >>> z, y = np.zeros((2, 2, 4)), np.array([[0, 3], [1, 1]])
    >>> all(np.array_equal(a, b) for a, b in zip(cross_entropy_core(z, y), stack_cross_entropy(z, y)))
    True
    """
    M, B, C = logits.shape
    pick = grid(M * B, 1, C).ravel() + targets.ravel()  # (M B,) flat index of each target
    shifted = logits - per_model_max(logits)  # (M, B, C)
    p = np.exp(shifted)
    Z = p @ _ones(C)  # (M, B)
    if not Z.min() >= 1e-250:  # rare: rows far below the max (a NaN model is not one, but it stops the quick check)
        for m in np.flatnonzero(Z.min(axis=1) < 1e-250):
            shifted[m] = logits[m] - logits[m].max(axis=-1, keepdims=True)
            p[m] = np.exp(shifted[m])
            Z[m] = p[m] @ _ones(C)
    loss = (np.log(Z) - shifted.ravel()[pick].reshape(M, B)).sum(axis=1) / B  # (M,)
    p *= (1.0 / (B * Z))[..., None]
    p.ravel()[pick] -= 1.0 / B
    return loss, p  # (M,), (M, B, C)
