"""One causal pass over every position of a sequence: the head read at all positions at once.

Position ``t`` attends to ``j <= t`` with the scores of :func:`poskernels.model.score.score` (the one
definition), which are those of :func:`poskernels.model.head.query_forward` on the prefix ``tokens[:, :t+1]``
(the tests check every ``t``, every scheme and every reading).  Memory is ``O(B n^2)``: pass long sequences
one at a time.
"""

from __future__ import annotations

import numpy as np

from .config import HeadConfig
from .reading import PLAIN, Reading, _check_tokens, _positions
from .score import embed, score

__all__ = ["score_all"]


def score_all(params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, return_attention=False):
    """Read every position of every sequence in one causal pass.

    Position ``t`` attends to ``j <= t`` with the same score as :func:`query_forward` on the
    prefix ``tokens[:, :t+1]`` (the tests check this at every ``t``).

    Parameters
    ----------
    params, cfg, positions, reading : see :func:`query_forward`.
    tokens : ndarray of int, shape (B, n)
    return_attention : bool
        Also return the attention weights.

    Returns
    -------
    logits : ndarray, shape (B, n, C)
    attention : ndarray, shape (B, n, n), only if ``return_attention``
        Row ``t`` holds the weights of position ``t`` on keys ``j`` (zero above the diagonal).

    Examples
    --------
    >>> from poskernels.model.head import init_params, query_logits
    >>> from poskernels.tasks.cue import cue_batch
    >>> cfg = HeadConfig(scheme="t5")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x, _ = cue_batch(np.random.default_rng(1), 2, 40)
    >>> np.allclose(score_all(p, cfg, x)[:, -1], query_logits(p, cfg, x))
    True
    """
    tokens = _check_tokens(cfg, tokens)
    B, n = tokens.shape
    pos = _positions(positions, n)
    H = embed(params, cfg, tokens, pos)  # (B, n, d)
    Q, K, Vv = H @ params["W_Q"], H @ params["W_K"], H @ params["W_V"]  # (B, n, d) each
    S = score(params, cfg, Q, pos, K, pos, reading)  # (B, n, n): query t against key j
    causal = np.tril(np.ones((n, n), dtype=bool))  # (n, n) key j <= query t
    S = np.where(causal, S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True)
    A = np.exp(S)  # (B, n, n)
    A /= A.sum(axis=-1, keepdims=True)
    logits = (A @ Vv) @ params["W_O"]  # (B, n, C)
    return (logits, A) if return_attention else logits
