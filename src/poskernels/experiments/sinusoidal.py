"""Why the added sinusoidal code collapses past its window: Theorem 2 on the trained heads.

With ``h = x E + p`` the score of key ``j`` at query ``t`` is ``h_t M h_j^T / tau`` with
``M = W_Q W_K^T``, four terms: content against content, content against position, position
against content, and position against position ``p(t) M p(j)^T``.  This module measures

* the relativity defect ``delta(M)`` (Theorem 2) at initialization and after training;
* the head re-read with only the position-against-position term replaced by ``p(t) (Pi M) p(j)^T``
  (its projection onto the commutant, relative by Theorem 2);
* the query shift: a long sequence read at positions ``m - (n - L)``, so the query sits at ``L - 1``
  where training put it and every offset is kept;
* the spread across keys of the position-against-position term and of the two cross terms.
"""

from __future__ import annotations

import numpy as np

from ..encodings import sinusoidal_code
from ..errors import PosKernelsError
from ..model.engine.one_head import accuracy
from ..model.head import token_table
from ..model.train import TrainedHead, initial_params
from ..tasks.registry import layout_of
from ..theory.commutant import commutant_projection, relativity_defect

__all__ = [
    "defects",
    "projected_accuracy",
    "projected_shift",
    "score_matrix",
    "shifted_accuracy",
    "shifted_positions",
    "term_spreads",
]


def _check(head: TrainedHead) -> None:
    if head.head.scheme != "sinusoidal":
        raise PosKernelsError(f"these diagnostics need a head with the added sinusoidal code; got {head.head.scheme!r}")


def score_matrix(params: dict) -> np.ndarray:
    """``M = W_Q W_K^T``, shape ``(d, d)``: the matrix of every term of the score (and of ``p M p^T``).

    Parameters
    ----------
    params : dict of ndarray
        A head's weights, with ``W_Q`` and ``W_K`` of shape ``(d, d_k)``.

    Returns
    -------
    ndarray, shape (d, d)
        ``W_Q @ W_K.T``.

    Examples
    --------
    >>> score_matrix({"W_Q": np.eye(2), "W_K": np.array([[0.0, 1.0], [1.0, 0.0]])}).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    return params["W_Q"] @ params["W_K"].T  # (d, d)


def defects(head: TrainedHead) -> tuple[float, float]:
    """``(delta(M) at initialization, delta(M) after training)`` of one sinusoidal head (Theorem 2).

    Parameters
    ----------
    head : TrainedHead
        A head trained with the added sinusoidal code (``head.head.scheme == "sinusoidal"``).

    Returns
    -------
    (float, float)
        The relativity defect (:func:`poskernels.theory.commutant.relativity_defect`) of ``M`` from the weights
        training started from (:func:`poskernels.model.train.initial_params`) and of ``M`` from the trained ones.

    Raises
    ------
    PosKernelsError
        If ``head`` is not a sinusoidal head.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="sinusoidal"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> [round(v, 3) for v in defects(head)]
    [0.972, 0.984]
    >>> rope = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=1, batch=8), seed=0)
    >>> defects(rope)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: these diagnostics need a head with the added sinusoidal code; got 'rope'
    """
    _check(head)
    before = score_matrix(initial_params(head.config, head.seed))
    return float(relativity_defect(before)), float(relativity_defect(score_matrix(head.params)))


def projected_shift(head: TrainedHead, n: int) -> np.ndarray:
    """Score change ``p(t) (Pi M - M) p(j)^T / tau`` of the query at ``t = n - 1``, shape ``(n,)``.

    Parameters
    ----------
    head : TrainedHead
        A head trained with the added sinusoidal code (``head.head.scheme == "sinusoidal"``).
    n : int
        Sequence length; the query sits at ``n - 1``.

    Returns
    -------
    ndarray, shape (n,)
        What replacing ``M`` by its commutant projection ``Pi M`` in the position-against-position term adds to
        the score of each key ``j``.

    Raises
    ------
    PosKernelsError
        If ``head`` is not a sinusoidal head.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="sinusoidal"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> projected_shift(head, 64).shape
    (64,)
    """
    _check(head)
    cfg = head.head
    M = score_matrix(head.params)
    P = sinusoidal_code(np.arange(n), cfg.d, cfg.base)  # (n, d)
    return P[-1] @ (commutant_projection(M) - M) @ P.T / cfg.tau  # (n,)


def projected_accuracy(head: TrainedHead, tokens, targets) -> float:
    """Accuracy with the position-against-position term replaced by its commutant projection.

    Parameters
    ----------
    head : TrainedHead
        A head trained with the added sinusoidal code (``head.head.scheme == "sinusoidal"``).
    tokens : array_like of int, shape (B, n)
        Test sequences.
    targets : array_like of int, shape (B,)
        Their answers.

    Returns
    -------
    float
        The share of ``tokens`` answered right with the score shifted by :func:`projected_shift`.

    Raises
    ------
    PosKernelsError
        If ``head`` is not a sinusoidal head.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="sinusoidal"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> from poskernels.experiments.held_out import heldout
    >>> x, y = heldout(64, 20, 0)
    >>> projected_accuracy(head, x, y)
    0.05
    """
    shift = projected_shift(head, np.asarray(tokens).shape[1])  # (n,)
    return accuracy(head.params, head.head, tokens, targets, score_shift=shift)


def shifted_positions(n: int, L: int) -> np.ndarray:
    """Positions ``m - (n - L)``: the query at ``L - 1``, older keys at negative positions.

    Parameters
    ----------
    n : int
        Sequence length.
    L : int
        Training length: the query's position.

    Returns
    -------
    ndarray, shape (n,)
        ``m - (n - L)`` for ``m = 0..n-1``, as floats.

    Examples
    --------
    >>> shifted_positions(5, 3).tolist()
    [-2.0, -1.0, 0.0, 1.0, 2.0]
    """
    return np.arange(n, dtype=float) - (n - L)


def shifted_accuracy(head: TrainedHead, tokens, targets) -> float:
    """Accuracy of the query-shift experiment: every offset kept, the query where training put it.

    Parameters
    ----------
    head : TrainedHead
        A head trained with the added sinusoidal code (``head.head.scheme == "sinusoidal"``).
    tokens : array_like of int, shape (B, n)
        Test sequences.
    targets : array_like of int, shape (B,)
        Their answers.

    Returns
    -------
    float
        The share of ``tokens`` answered right when read at :func:`shifted_positions` ``(n, n_train)``.

    Raises
    ------
    PosKernelsError
        If ``head`` is not a sinusoidal head.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="sinusoidal"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> from poskernels.experiments.held_out import heldout
    >>> x, y = heldout(64, 20, 0)
    >>> shifted_accuracy(head, x, y)
    0.0
    """
    _check(head)
    n = np.asarray(tokens).shape[1]
    return accuracy(head.params, head.head, tokens, targets, positions=shifted_positions(n, head.head.n_train))


def term_spreads(head: TrainedHead, tokens) -> dict:
    """Spread across keys of three terms of the score at the query, averaged over sequences.

    With the query token's embedding ``e_q`` at ``t = n - 1``, per key ``j``:

    * ``pos_pos``: ``p(t) M p(j)^T / tau``;
    * ``pos_content`` (position against content): ``p(t) M e(x_j)^T / tau``, the query's position
      against the key's content;
    * ``content_pos`` (content against position): ``e_q M p(j)^T / tau``.

    The spread is the standard deviation over the keys of one sequence, averaged over sequences.

    Parameters
    ----------
    head : TrainedHead
        A head trained with the added sinusoidal code (``head.head.scheme == "sinusoidal"``).
    tokens : array_like of int, shape (B, n)
        Sequences of the head's task.

    Returns
    -------
    dict
        ``pos_pos``, ``pos_content``, ``content_pos`` (floats) and ``ratio`` =
        ``pos_content / pos_pos``.

    Raises
    ------
    PosKernelsError
        If ``head`` is not a sinusoidal head.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="sinusoidal"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> from poskernels.experiments.held_out import heldout
    >>> spreads = term_spreads(head, heldout(64, 20, 0)[0])
    >>> {k: round(v, 3) for k, v in spreads.items()}
    {'pos_pos': 0.024, 'pos_content': 0.021, 'content_pos': 0.013, 'ratio': 0.869}
    """
    _check(head)
    cfg, p = head.head, head.params
    tokens = np.asarray(tokens)
    n = tokens.shape[1]
    M = score_matrix(p)
    P = sinusoidal_code(np.arange(n), cfg.d, cfg.base)  # (n, d)
    pt = P[-1] @ M / cfg.tau  # (d,) the query's position, through M
    pos_pos = P @ pt  # (n,)
    T = token_table(p, cfg)  # (V, d) the embedding of every token
    pos_content = (T @ pt)[tokens]  # (B, n)
    content_pos = P @ (M.T @ T[layout_of(head.config.task).query]) / cfg.tau  # (n,) the task's query token
    out = {
        "pos_pos": float(pos_pos.std()),
        "pos_content": float(pos_content.std(axis=1).mean()),
        "content_pos": float(content_pos.std()),
    }
    out["ratio"] = out["pos_content"] / out["pos_pos"]
    return out
