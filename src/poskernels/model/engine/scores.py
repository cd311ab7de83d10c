"""The head's score in the forms its readers ask for: pairs, and a head without a bias read without offsets.

:func:`poskernels.model.score.score` is the one definition, queries against keys.  Readers ask two things more:

* :func:`pair_scores`: query ``i`` against key ``i`` only (a curve over offsets, a query's own key), one turn per
  pair by Proposition 3 (i), ``<phi_t(q), phi_j(k)> = <q, phi_{j - t}(k)>``;
* :func:`scores`: the definition's numbers, bit for bit, without the ``(Nq, Nk)`` offsets when the scheme has no
  bias (a fresh array of that size costs page faults on a long filing), and with the bias read off one grid of the
  head's when it reads no query vector (:attr:`~poskernels.encodings.Scheme.bias_reads_query` False) and the
  positions are runs of integers: every filing asks a head the same ``(t, j)`` pairs, a corner of its largest
  filing's, and FIRE's MLP cost a fifth of the filings' reading when it was evaluated afresh for each.  A turning
  head's queries and keys at such positions, and a pair's turn by an integer offset, take the cosines and sines of
  ``m theta`` from the table of their rate kept per process (:mod:`poskernels.model.engine.bands`), the turns
  :func:`~poskernels.model.head.phi` computes, where every head of a scheme and every filing computed them again.

``tests/test_score.py`` checks both against the definition.
"""

from __future__ import annotations

import threading

import numpy as np

from ...encodings import SCHEMES, Scheme
from ...encodings.rotations import _turn
from ..config import HeadConfig
from ..head import phi
from ..reading import PLAIN, Reading, frequencies
from ..score import _query_scales, content_score, score, score_scale
from .bands import _rate_turns

__all__ = ["pair_scores", "scores"]

#: The largest grid side kept (8 MiB of float64): a longer run of positions is scored by the definition itself.
GRID_MAX = 1024


def scores(params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading = PLAIN, n=None) -> np.ndarray:
    """:func:`~poskernels.model.score.score`, the same bits, skipping the offsets of a head with no bias and reading a
    bias of no query vector off the head's grid.

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
    >>> fire = HeadConfig(scheme="fire")  # a bias of the offset and the query's position: a corner of one grid
    >>> p = init_params(fire, np.random.default_rng(0))
    >>> bool(np.array_equal(scores(p, fire, q, [5, 6, 7], k, j), score(p, fire, q, [5, 6, 7], k, j)))
    True
    """
    scheme = SCHEMES[cfg.scheme]
    if type(scheme).bias is Scheme.bias:  # no bias: the content term is the score
        return _content(params, cfg, q, q_pos, k, k_pos, reading, n)
    corner = None if scheme.bias_reads_query else _bias_corner(params, cfg, scheme, q_pos, k_pos)
    if corner is None:
        return score(params, cfg, q, q_pos, k, k_pos, reading, n)
    return _content(params, cfg, q, q_pos, k, k_pos, reading, n) + corner  # score's z + b(t - j)


def _content(params: dict, cfg: HeadConfig, q, q_pos, k, k_pos, reading: Reading, n) -> np.ndarray:
    """:func:`~poskernels.model.score.content_score`'s lines, its turns read from the table of their rate
    (:func:`_turns`) when the positions are runs of integers (else content_score itself)."""
    theta = frequencies(cfg, reading)  # (P,) or None
    t0, j0 = _run_start(q_pos), _run_start(k_pos)
    if theta is None or t0 is None or j0 is None:
        return content_score(params, cfg, q, q_pos, k, k_pos, reading, n)
    q_pos, k_pos = np.asarray(q_pos, dtype=float), np.asarray(k_pos, dtype=float)
    scale = _query_scales(params, cfg, reading, q_pos, k_pos, n)  # a number, or (Nq, 1)
    qt = _turn(q, *_turns(np.conj(theta), t0 + np.arange(q_pos.size)))  # (..., Nq, d) phi_t(q)
    kt = _turn(k, *_turns(theta, j0 + np.arange(k_pos.size)))  # (..., Nk, d) phi_j(k)
    return (qt * scale) @ np.swapaxes(kt, -1, -2)  # (..., Nq, Nk)


def _turns(rate: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of ``m rate`` at the integer positions ``rows``, ``(R, P)`` each, from the table of the rate
    kept per process (:func:`~poskernels.model.engine.bands._rate_turns`): the turns of ``phi``'s angles."""
    table = _rate_turns(rate, int(rows.max()) + 1)  # (>= max + 1, P) each
    if rows.size and rows[-1] - rows[0] == rows.size - 1:  # a run: a view
        return table[0][rows[0] : rows[-1] + 1], table[1][rows[0] : rows[-1] + 1]
    return table[0][rows], table[1][rows]


def _run_start(pos) -> int | None:
    """``p0`` when ``pos`` is ``p0, p0 + 1, ..`` (integers ``p0 >= 0``), else None."""
    pos = np.asarray(pos, dtype=float)
    if pos.ndim != 1 or pos.size == 0 or not 0 <= pos[0] < GRID_MAX or pos[0] != int(pos[0]):
        return None
    return int(pos[0]) if np.array_equal(pos, pos[0] + np.arange(pos.size)) else None


def _bias_corner(params: dict, cfg: HeadConfig, scheme: Scheme, q_pos, k_pos) -> np.ndarray | None:
    """``b`` of queries at ``q_pos`` against keys at ``k_pos``, ``(Nq, Nk)``, read off the head's grid
    (:func:`_bias_grid`); None when the positions are not runs of integers inside :data:`GRID_MAX`."""
    t0, j0 = _run_start(q_pos), _run_start(k_pos)
    if t0 is None or j0 is None:
        return None
    nq, nk = np.size(q_pos), np.size(k_pos)
    grid = _bias_grid(params, cfg, scheme, max(t0 + nq, j0 + nk))
    return None if grid is None else grid[t0 : t0 + nq, j0 : j0 + nk]  # (Nq, Nk) a read-only view


#: ``(key, grid)`` of the last head whose bias grid was asked for: one head's at a time (a reader reads a head's
#: filings in turn), so a process holds at most one grid, :data:`GRID_MAX` square.
_GRID: tuple = (None, None)
_GRID_LOCK = threading.Lock()


def _arrays(params: dict):
    return ((name, np.asarray(a)) for name, a in params.items())


def _bias_grid(params: dict, cfg: HeadConfig, scheme: Scheme, size: int) -> np.ndarray | None:
    """The head's bias ``G[t, j] = b(t - j)`` of a query at ``t`` (its position passed as ``t``) for ``t, j`` in
    ``0 .. T - 1``, ``T >= size`` a power of two, read-only; None past :data:`GRID_MAX` or when the hook does not
    return ``(T, T)``.

    Each entry is the hook's arithmetic on the same offset and position as :func:`~poskernels.model.score.score`
    gives it (the hooks are elementwise in ``r`` and ``t``), so a corner of the grid is that score's bias bit for bit;
    the hook is given ``q = None``, which a bias that reads no query never touches.  Kept per process under the full
    description of the head (its scheme, its configuration and every parameter's bytes), grown on demand.
    """
    global _GRID
    side = 1 << max(0, size - 1).bit_length()
    if side > GRID_MAX:
        return None
    key = (type(scheme), cfg, tuple((name, a.dtype.str, a.shape, a.tobytes()) for name, a in sorted(_arrays(params))))
    with _GRID_LOCK:
        kept, grid = _GRID
        if kept == key and grid.shape[0] >= side:
            return grid
    t = np.arange(side, dtype=float)  # (T,) positions 0..T-1, of queries and of keys
    grid = scheme.bias_at(params, cfg, None, t[:, None] - t[None, :], t[:, None])  # (T, T) b(t - j) at t
    if not isinstance(grid, np.ndarray) or grid.shape != (side, side):
        return None
    grid.setflags(write=False)  # every corner handed out is a view
    with _GRID_LOCK:
        _GRID = (key, grid)
    return grid


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
    r = k_pos - q_pos  # (R,) each pair's offset
    if theta is None:
        kt = k  # (R, d)
    elif r.size and (r == np.round(r)).all() and 0 <= r.min() and r.max() < GRID_MAX:
        kt = _turn(k, *_turns(theta, r.astype(np.intp)))  # (R, d): phi's turn by each offset, from the rate's table
    else:
        kt = phi(k, r, theta)  # (R, d): one turn per pair
    z = np.einsum("rd,rd->r", q, kt) * scale  # (R,)
    bias = SCHEMES[cfg.scheme].bias_at(params, cfg, q, (q_pos - k_pos)[:, None], q_pos[:, None])  # (R, 1)
    return z if bias is None else z + bias[..., 0]
