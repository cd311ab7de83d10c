"""The score ``s(t, j) = <phi_t(q), phi_j(k_j)> lambda / tau + b(t - j)``: the one definition every reader calls.

The head (:mod:`poskernels.model.head`) writes this line inside its forward pass, for the last query of each
sequence; :func:`score` is the same line for any queries against any keys, so the rebound (Proposition 3 (iii)'s
polynomial), the causal pass at every position (:func:`poskernels.model.all_positions.score_all`), the engine's
chunked and paired forms (:mod:`poskernels.model.engine.chunk_scores`, :mod:`poskernels.model.engine.scores`) and
the filing reader compute it here.  Its terms: :func:`content_score` ``<phi_t(q), phi_j(k)> lambda / tau`` (with
:func:`score_scale` its ``lambda / tau``) and the scheme's bias ``b(t - j)``; the transform ``phi`` is the head's
(:func:`poskernels.model.head.phi`).
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES
from .config import HeadConfig
from .head import _stack, phi
from .reading import PLAIN, Reading, frequencies

__all__ = ["content_score", "score", "score_scale"]


# -- the score s(t, j) = <phi_t(q), phi_j(k)> lambda / tau + b(t - j) ------------------------------------------------


def score_scale(params: dict, cfg: HeadConfig, reading: Reading, seen, shape: tuple):
    """``lambda / tau`` of queries that each see ``seen`` keys: a number, or one per query (``shape``) when the
    scheme's logit scale grows with the key count (``s log n``; ``seen`` is read only then, at least 1).

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (:func:`~poskernels.model.head.init_params`).
    cfg : HeadConfig
        The head.
    reading : Reading
        How the head is read.
    seen : array_like or None
        Keys each query sees (read only by a scale that grows with it).
    shape : tuple
        The queries' shape ``(Nq,)``.

    Returns
    -------
    float or ndarray of shape (Nq,)
        ``lambda / tau``.

    Examples
    --------
    >>> score_scale({}, HeadConfig(scheme="rope"), PLAIN, None, (3,)) == 1 / HeadConfig().tau
    True
    """
    scheme = SCHEMES[cfg.scheme]
    scale = 1.0 / cfg.tau
    if not scheme.scale_grows:
        lam = scheme.logit_scale(cfg, reading)  # the logit scale lambda
        return scale if lam == 1.0 else scale * lam
    seen = np.broadcast_to(np.maximum(np.asarray(seen, dtype=float), 1.0), shape)  # (Nq,)
    return scale * scheme.logit_scale_at(_stack(params), cfg, reading, seen)[0]  # (Nq,)


def content_score(params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading = PLAIN, n=None) -> np.ndarray:
    """The score's first term, ``<phi_t(q), phi_j(k)> * lambda / tau`` (arguments as :func:`score`).

    Parameters
    ----------
    params, cfg, q, q_pos, k, k_pos, reading, n
        As for :func:`score`.

    Returns
    -------
    ndarray, shape (..., Nq, Nk)
        The score without the scheme's bias: equal to :func:`score` for a head that has none.

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> pos = np.arange(5.0)
    >>> h = embed(p, cfg, np.array([3, 1, 4, 1, 5]), pos)
    >>> q, k = h @ p["W_Q"], h @ p["W_K"]
    >>> bool(np.allclose(content_score(p, cfg, q, pos, k, pos), score(p, cfg, q, pos, k, pos)))  # RoPE: no bias
    True
    """
    theta = frequencies(cfg, reading)  # (P,) or None
    q_pos, k_pos = np.asarray(q_pos, dtype=float), np.asarray(k_pos, dtype=float)
    scale = _query_scales(params, cfg, reading, q_pos, k_pos, n)  # a number, or (Nq, 1)
    qt, kt = (q, k) if theta is None else (phi(q, q_pos, theta, query=True), phi(k, k_pos, theta))
    return (qt * scale) @ np.swapaxes(kt, -1, -2)  # (..., Nq, Nk)


def _query_scales(params: dict, cfg: HeadConfig, reading: Reading, q_pos: np.ndarray, k_pos: np.ndarray, n):
    """Each query's logit scale over the keys it sees (``n``, or those given at or before it): a number, or
    ``(Nq, 1)`` when the scale grows with them."""
    seen = n
    if n is None and SCHEMES[cfg.scheme].scale_grows:  # the keys each query sees: those given at or before it
        seen = (k_pos[None, :] <= q_pos[:, None]).sum(axis=1)  # (Nq,)
    scale = score_scale(params, cfg, reading, seen, q_pos.shape)  # a number, or (Nq,)
    return scale if np.ndim(scale) == 0 else scale[:, None]  # (Nq, 1): query t's own lambda


def score(params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading = PLAIN, n=None) -> np.ndarray:
    """The score ``<phi_t(q), phi_j(k)> * lambda / tau + b(t - j)`` of keys against queries: the one definition.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (the scheme's bias reads its own: T5's ``beta``, Shaw's ``A``).
    q : ndarray, shape (..., Nq, d)
        Query vectors ``h W_Q``, not yet turned, at positions ``q_pos (Nq,)``.
    k : ndarray, shape (..., Nk, d)
        Key vectors ``h W_K``, not yet turned, at positions ``k_pos (Nk,)``.
    reading : Reading
        Frequencies and logit scale a rotary head is read with (:data:`~poskernels.model.reading.PLAIN`: as trained).
    n : int or array_like, optional
        The number of keys each query sees, read only by a logit scale that grows with it (``s log n``): by default
        the keys given at or before each query.

    Returns
    -------
    ndarray, shape (..., Nq, Nk)
        No causal mask: every key given is scored (a relative bias reads offsets ``r < 0`` as ``0``).

    See Also
    --------
    poskernels.model.engine.scores.pair_scores : query ``i`` against key ``i`` only.
    poskernels.model.engine.scores.scores : the same numbers, without the offsets of a head that has no bias.

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> pos = np.arange(5.0)
    >>> h = embed(p, cfg, np.array([3, 1, 4, 1, 5]), pos)  # (5, d)
    >>> z = score(p, cfg, h @ p["W_Q"], pos, h @ p["W_K"], pos)  # (5, 5): query t against key j
    >>> bool(np.isclose(z[4, 2], score(p, cfg, h[4:] @ p["W_Q"], [4.0], h[2:3] @ p["W_K"], [2.0])[0, 0]))
    True
    """
    z = content_score(params, cfg, q, q_pos, k, k_pos, reading, n)  # (..., Nq, Nk)
    q_pos, k_pos = np.asarray(q_pos, dtype=float), np.asarray(k_pos, dtype=float)
    bias = SCHEMES[cfg.scheme].bias_at(params, cfg, q, q_pos[:, None] - k_pos[None, :], q_pos[:, None])
    return z if bias is None else z + bias  # b(t - j): (..., Nq, Nk) or (Nq, Nk)
