"""The score of a key: one definition, read by every reader of a head.

A query vector ``q`` at position ``t`` scores a key vector ``k_j`` at position ``j`` (offset ``r = t - j``):

    z = <R_theta(t) q, R_theta(j) k_j> * logit_scale / tau + bias(t - j)

with ``q = h_t W_Q``, ``k_j = h_j W_K`` and ``h_m = T[x_m] + p(m)`` (:func:`embed`; ``p`` only for an additive
code).  The rotation ``R_theta`` (Definition 4, through :func:`poskernels.encodings.rotate`) and the logit scale
act on RoPE heads only, with the frequencies and scale of a :class:`~poskernels.model.reading.Reading`
(Definition 5's maps); ``bias`` is the scheme's hook (ALiBi, T5, Shaw; Definition 3).  :func:`score` computes it
for every query against every key, or for pairs.

Every reader scores through it: :func:`poskernels.model.reader.score_all` (every position of a sequence),
:func:`poskernels.experiments.filings_reader.read_filing` (every question of a filing) and
:func:`poskernels.experiments.curves.marked_key_scores` (the laboratory's curves).  The rebound reads the same
score as Proposition 3 (iii)'s trigonometric polynomial in the offset, and ``tests/test_score.py`` checks it
equals :func:`score`.  The training forward (:func:`poskernels.model.stack.stack_forward`) never forms a score
one key at a time: it factors this definition into tables over (query token, position, key token) and
exponentiates those; ``tests/test_score.py`` checks that its attention weights
(:func:`poskernels.model.stack.attention`) equal the softmax of :func:`score` for every scheme and reading, so
the fast path is a factoring of this one definition, not a second one.

Examples
--------
>>> from poskernels.model.head import init_params
>>> cfg = HeadConfig(scheme="rope")
>>> p = init_params(cfg, np.random.default_rng(0))
>>> pos = np.arange(5.0)
>>> h = embed(p, cfg, np.array([3, 1, 4, 1, 5]), pos)  # (5, d)
>>> z = score(p, cfg, h @ p["W_Q"], pos, h @ p["W_K"], pos)  # (5, 5): query t against key j
>>> bool(np.isclose(z[4, 2], score(p, cfg, h[4] @ p["W_Q"], [4.0], h[2] @ p["W_K"], [2.0], pairwise=True)[0]))
True
"""

from __future__ import annotations

import numpy as np

from ..encodings import rotate
from .config import HeadConfig
from .embedding import token_table
from .reading import PLAIN, Reading, _theta
from .schemes import HEAD_SCHEMES, HeadScheme

__all__ = ["embed", "frequencies", "score", "turn"]


def frequencies(cfg: HeadConfig, reading: Reading = PLAIN) -> np.ndarray | None:
    """The per-plane frequencies a head is read with: the reading's, or ``omega(d, base)``; None without RoPE.

    Raises :class:`~poskernels.errors.PosKernelsError` for a rescaled reading of a head that does not rotate.

    >>> frequencies(HeadConfig(scheme="rope")).shape, frequencies(HeadConfig(scheme="alibi"))
    ((8,), None)
    """
    return _theta(cfg, HEAD_SCHEMES[cfg.scheme], reading)


def embed(params: dict, cfg: HeadConfig, tokens, positions) -> np.ndarray:
    """``h_m = T[x_m] + p(m)``: the embedding of each token, plus the scheme's additive code (if any).

    Parameters
    ----------
    tokens : ndarray of int, shape (..., n)
    positions : ndarray, shape (n,)

    Returns
    -------
    ndarray, shape (..., n, d)
    """
    h = token_table(params, cfg)[tokens]  # (..., n, d)
    code = HEAD_SCHEMES[cfg.scheme].code(params, cfg, np.asarray(positions, dtype=float))  # (n, d) or None
    return h if code is None else h + code


def turn(x: np.ndarray, positions, theta: np.ndarray) -> np.ndarray:
    """``R_theta(m) x_m``: each vector turned by its position (Definition 4), shape of ``x`` ``(..., n, d)``."""
    return rotate(x, np.asarray(positions, dtype=float)[:, None] * theta)  # angles (n, P)


def score(
    params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading = PLAIN, *, pairwise: bool = False
) -> np.ndarray:
    """The score ``<R(t) q, R(j) k> * logit_scale / tau + bias(t - j)`` of keys against queries.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (the scheme's bias reads its own: T5's ``beta``, Shaw's ``A``).
    cfg : HeadConfig
    q : ndarray, shape (..., Nq, d)
        Query vectors ``h W_Q``, not yet turned.
    q_pos : array_like, shape (Nq,)
        Their positions ``t``.
    k : ndarray, shape (..., Nk, d)
        Key vectors ``h W_K``, not yet turned.
    k_pos : array_like, shape (Nk,)
        Their positions ``j``.
    reading : Reading
        Frequencies and logit scale of a RoPE head (:data:`~poskernels.model.reading.PLAIN`: as trained).
    pairwise : bool
        Score query ``i`` against key ``i`` only: ``q`` and ``k`` of shape ``(R, d)`` (or ``(d,)``, one vector
        for every pair), positions ``(R,)``.

    Returns
    -------
    ndarray, shape (..., Nq, Nk), or (R,) with ``pairwise``
        No causal mask: every key given is scored (a relative bias reads offsets ``r < 0`` as ``0``).
    """
    scheme = HEAD_SCHEMES[cfg.scheme]
    theta = _theta(cfg, scheme, reading)  # (P,) or None
    q_pos, k_pos = np.asarray(q_pos, dtype=float), np.asarray(k_pos, dtype=float)
    if pairwise:
        q_pos, k_pos = np.broadcast_arrays(q_pos, k_pos)  # (R,) each
        shape = q_pos.shape + np.broadcast_shapes(np.shape(q)[-1:], np.shape(k)[-1:])
        q, k = np.broadcast_to(q, shape), np.broadcast_to(k, shape)  # (R, d) each
    scale = 1.0 / cfg.tau
    if theta is not None:
        scale *= reading.logit_scale
    if pairwise:  # Proposition 3 (i): <R(t) q, R(j) k> = <q, R(j - t) k>, one turn per pair (none at j = t)
        kt = k if theta is None else rotate(k, (k_pos - q_pos)[:, None] * theta)  # (R, d)
        z = np.einsum("rd,rd->r", q, kt) * scale  # (R,)
        bias = scheme.bias_at(params, cfg, q, (q_pos - k_pos)[:, None], q_pos[:, None])  # (R, 1): pair i's offset
        return z if bias is None else z + bias[..., 0]
    qt, kt = (q, k) if theta is None else (turn(q, q_pos, theta), turn(k, k_pos, theta))  # (..., Nq | Nk, d)
    z = (qt * scale) @ np.swapaxes(kt, -1, -2)  # (..., Nq, Nk) content scores
    if type(scheme).bias is HeadScheme.bias:  # no bias: skip the (Nq, Nk) offsets (a fresh array costs page faults)
        return z
    bias = scheme.bias_at(params, cfg, q, q_pos[:, None] - k_pos[None, :], q_pos[:, None])  # (..., Nq, Nk) or (Nq, Nk)
    return z if bias is None else z + bias
