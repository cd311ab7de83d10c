"""The head read at every position at once: one causal pass over each sequence, as the article's head defines it.

:func:`~poskernels.model.head.forward` reads a head at its last position, the query; :func:`score_all` reads it at
every position ``t``, each attending to the keys ``j <= t`` through the one score
(:func:`~poskernels.model.score.score`), so row ``t`` equals ``forward`` on the prefix ``tokens[:, :t+1]``.  The
diagnostics that read a head's attention along a sequence (:mod:`poskernels.experiments.curves`, the tests) call it.
"""

from __future__ import annotations

import numpy as np

from .config import HeadConfig
from .head import embed
from .reading import PLAIN, Reading, check_tokens, read_positions
from .score import score

__all__ = ["score_all"]


def score_all(params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN, return_attention=False):
    """Every position of every sequence ``tokens (B, n)`` read in one causal pass: logits ``(B, n, C)``.

    Position ``t`` attends to ``j <= t`` with :func:`~poskernels.model.score.score`, which is
    :func:`~poskernels.model.head.forward` on the prefix ``tokens[:, :t+1]`` (the tests check every ``t``).  Memory is
    ``O(B n^2)``: pass long sequences one at a time.

    Parameters
    ----------
    params : dict
        The head's arrays, as :func:`~poskernels.model.head.init_params` draws them (or training leaves them).
    cfg : HeadConfig
        The head's configuration (width, vocabulary, scheme and its settings).
    tokens : array_like of int, shape (B, n)
        The sequences.
    positions : array_like, shape (n,), optional
        The tokens' positions; default ``0..n-1``.
    reading : Reading, optional
        How the head is read: extended frequencies (``inv_freq``) and a logit scale; default the trained head as
        trained.
    return_attention : bool, optional
        Also return the attention weights; default False.

    Returns
    -------
    ndarray, shape (B, n, C), or tuple of it and an ndarray of shape (B, n, n)
        The logits at every position; with `return_attention` also the weights (row ``t`` on keys ``j``, zero above
        the diagonal).

    Raises
    ------
    PosKernelsError
        If `tokens` is not a 2-d integer array of the head's vocabulary, or `positions` does not fit it.

    Examples
    --------
    >>> from poskernels.model.head import forward, init_params
    >>> cfg = HeadConfig(scheme="t5")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x = np.random.default_rng(1).integers(0, cfg.vocab, size=(2, 40))
    >>> bool(np.allclose(score_all(p, cfg, x)[:, -1], forward(p, cfg, x)[0]))
    True
    """
    tokens = check_tokens(cfg, tokens)
    B, n = tokens.shape
    pos = read_positions(positions, n)
    H = embed(params, cfg, tokens, pos)  # (B, n, d)
    Q, K, Vv = H @ params["W_Q"], H @ params["W_K"], H @ params["W_V"]  # (B, n, d) each
    S = score(params, cfg, Q, pos, K, pos, reading)  # (B, n, n): query t against key j
    S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)  # key j <= query t
    A = np.exp(S - S.max(axis=-1, keepdims=True))  # (B, n, n)
    A /= A.sum(axis=-1, keepdims=True)
    logits = (A @ Vv) @ params["W_O"]  # (B, n, C)
    return (logits, A) if return_attention else logits
