"""The head's score in the forms its readers ask for: pairs, and a head without a bias read without offsets.

:func:`poskernels.model.score.score` is the one definition, queries against keys.  Readers ask two things more:

* :func:`pair_scores`: query ``i`` against key ``i`` only (a curve over offsets, a query's own key), one turn per
  pair by Proposition 3 (i), ``<phi_t(q), phi_j(k)> = <q, phi_{j - t}(k)>``;
* :func:`scores`: the definition's numbers, bit for bit, without the ``(Nq, Nk)`` offsets when the scheme has no
  bias (a fresh array of that size costs page faults on a long filing).

``tests/test_score.py`` checks both against the definition.
"""

from __future__ import annotations

import numpy as np

from ...encodings import SCHEMES, Scheme
from ..config import HeadConfig
from ..head import phi
from ..reading import PLAIN, Reading, frequencies
from ..score import content_score, score, score_scale

__all__ = ["pair_scores", "scores"]


def scores(params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading = PLAIN, n=None) -> np.ndarray:
    """:func:`~poskernels.model.score.score`, the same bits, skipping the offsets of a head with no bias.

    Parameters
    ----------
    params, cfg, q, q_pos, k, k_pos, reading, n
        As in :func:`~poskernels.model.score.score`.

    Returns
    -------
    ndarray, shape (..., Nq, Nk)
        The scores, equal bit for bit to :func:`~poskernels.model.score.score`'s.

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig(scheme="nope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> q, k, t, j = np.ones((3, 16)), np.arange(64.0).reshape(4, 16), [0, 1, 2], [0, 1, 2, 3]
    >>> bool(np.array_equal(scores(p, cfg, q, t, k, j), score(p, cfg, q, t, k, j)))
    True
    """
    if type(SCHEMES[cfg.scheme]).bias is Scheme.bias:  # no bias: the content term is the score
        return content_score(params, cfg, q, q_pos, k, k_pos, reading, n)
    return score(params, cfg, q, q_pos, k, k_pos, reading, n)


def pair_scores(params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading = PLAIN, n=None) -> np.ndarray:
    """The score of query ``i`` against key ``i`` only, ``(R,)``.

    Parameters
    ----------
    params, cfg, reading
        As in :func:`~poskernels.model.score.score`.
    q, k : ndarray, shape (R, d) or (d,)
        Query and key vectors, not yet turned (one vector for every pair when ``(d,)``).
    q_pos, k_pos : array_like, shape (R,)
        Their positions.
    n : int or array_like, optional
        The keys each query sees, read only by a logit scale that grows with it: by default ``t + 1`` (a query at
        ``t`` over positions ``0..t``).

    Returns
    -------
    ndarray, shape (R,)

    Examples
    --------
    >>> from poskernels.model.head import embed, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> pos = np.arange(5.0)
    >>> h = embed(p, cfg, np.array([3, 1, 4, 1, 5]), pos)  # (5, d)
    >>> z = score(p, cfg, h @ p["W_Q"], pos, h @ p["W_K"], pos)  # (5, 5): query t against key j
    >>> bool(np.isclose(z[4, 2], pair_scores(p, cfg, h[4] @ p["W_Q"], [4.0], h[2] @ p["W_K"], [2.0])[0]))
    True
    """
    theta = frequencies(cfg, reading)  # (P,) or None
    q_pos, k_pos = np.asarray(q_pos, dtype=float), np.asarray(k_pos, dtype=float)
    q_pos, k_pos = np.broadcast_arrays(q_pos, k_pos)  # (R,) each
    shape = q_pos.shape + np.broadcast_shapes(np.shape(q)[-1:], np.shape(k)[-1:])
    q, k = np.broadcast_to(q, shape), np.broadcast_to(k, shape)  # (R, d) each
    scale = score_scale(params, cfg, reading, q_pos + 1.0 if n is None else n, q_pos.shape)  # a number, or (R,)
    kt = k if theta is None else phi(k, k_pos - q_pos, theta)  # (R, d): one turn per pair
    z = np.einsum("rd,rd->r", q, kt) * scale  # (R,)
    bias = SCHEMES[cfg.scheme].bias_at(params, cfg, q, (q_pos - k_pos)[:, None], q_pos[:, None])  # (R, 1)
    return z if bias is None else z + bias[..., 0]
