"""The turns of a filing read in bands: what a band reading shares across the heads of one configuration.

A reader that asks a turning head (RoPE) the question at every position of a filing, each question at its own
``kappa`` (:func:`poskernels.experiments.filing_maps.read_filing_as`), cuts the questions into bands
``(kappa, a, b)``: the questions ``a .. b - 1`` read the prefix ``0 .. b - 1`` at the band's frequencies
``theta_k``.  Everything such a reading computes before a head's weights enter (which band each question is in,
where each band's keys start, the cosines and sines of every turn, which keys each question sees) depends only on
the frequencies, the bands and the filing's length, so the seeds of one head configuration, read on the same
filing, need not compute it again: :func:`band_turns` reads the cosines and sines from one table a rate, kept per
process (a pure result keyed by the rate), each entry the turn of the same angle that turning each head would
compute (:func:`poskernels.encodings.rotations.rotate`), so the turned vectors are the same bits.

Examples
--------
>>> theta = np.array([[1.0, 0.5], [0.5, 0.25]])  # (bands, P): two bands' frequencies
>>> layout = band_turns(theta, ((1.0, 0, 2), (2.0, 2, 3)), 3)
>>> layout.band.tolist(), layout.stops.tolist(), layout.first.tolist()
([0, 0, 1], [2, 3], [0, 2, 5])
>>> layout.key[0].shape, layout.query[0].shape, int(layout.hidden.sum())  # (2 + 3, P), (n, P), j > t
((5, 2), (3, 2), 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...encodings import default_positions
from ...encodings.rotations import _turn, _turn_factors

__all__ = ["BandTurns", "band_turns", "turn"]


@dataclass(frozen=True)
class BandTurns:
    """A filing of ``n`` questions read in bands: the arrays every head of one configuration shares.

    Attributes
    ----------
    band : ndarray of int, shape (n,)
        The band of each question.
    stops : ndarray of int, shape (bands,)
        Each band's prefix: its keys are ``0 .. stops[k] - 1``.
    first : ndarray of int, shape (bands + 1,)
        Where each band's keys start in the keys of every band laid one after the other.
    query, key, own : tuple of two ndarrays
        ``(cos, sin)`` of the turns of the queries ``(n, P)`` (question ``t`` at position ``t + 1``, at its band's
        conjugate rate), of every band's keys ``(sum of the prefixes, P)`` (key ``j`` at its band's rate) and of
        each query's own key ``(n, P)`` (by offset 0, as the pair score turns it).
    hidden : ndarray of bool, shape (n, n)
        ``j > t``: the keys question ``t`` does not see.
    """

    band: np.ndarray
    stops: np.ndarray
    first: np.ndarray
    query: tuple[np.ndarray, np.ndarray]
    key: tuple[np.ndarray, np.ndarray]
    own: tuple[np.ndarray, np.ndarray]
    hidden: np.ndarray


def band_turns(theta: np.ndarray, bands, n: int) -> BandTurns:
    """The shared arrays of ``n`` questions read in ``bands`` at the frequencies ``theta``.

    The cosines and sines come from one table a rate (:func:`_rate_turns`, kept per process): row ``j`` of the table
    of ``theta_k`` is the turn by ``j theta_k``, so a band's keys are its first ``b`` rows and question ``t`` reads
    row ``t + 1``; the filings of a corpus share their bands' rates, so a table is computed once for all of them and
    every head.

    Parameters
    ----------
    theta : ndarray, shape (bands, P)
        Each band's frequencies (complex: a rotation with decay).
    bands : sequence of (kappa, a, b)
        The bands (:func:`poskernels.experiments.kappa_rules.kappa_bands`), in order, covering ``0 .. n - 1``.
    n : int
        Questions (the filing's length).

    Returns
    -------
    BandTurns
        Read-only arrays.

    Examples
    --------
    >>> theta = np.array([[1.0], [0.5]])
    >>> layout = band_turns(theta, [(1.0, 0, 1), (2.0, 1, 2)], 2)
    >>> bool(np.array_equal(layout.key[0][:, 0], np.cos([0.0, 0.0, 0.5])))  # band 0's key 0, band 1's keys 0, 1
    True
    """
    theta = np.asarray(theta)
    stops = np.array([b for _, _, b in bands])  # (bands,) each band's prefix: its keys are 0 .. b - 1
    band = np.repeat(np.arange(len(bands)), [b - a for _, a, b in bands])  # (n,) the band of each question
    first = np.concatenate([[0], np.cumsum(stops)])  # (bands + 1,) where each band's keys start
    rows = n + 1  # positions 0 .. n: the keys at 0 .. n - 1, the queries at 1 .. n
    keys = [_rate_turns(row, rows) for row in theta]  # each band's table at its rate
    queries = keys if not np.iscomplexobj(theta) else [_rate_turns(row, rows) for row in np.conj(theta)]
    # phi as content_score turns them: each band's keys at its rate, query t + 1 at its band's conjugate rate, and
    # each query's own key by offset 0 (row 0: the angles 0 theta_k)
    key = tuple(np.concatenate([table[i][:b] for table, b in zip(keys, stops)]) for i in (0, 1))  # (sum b, P)
    # (n, P) each: question t of band k at row t + 1 of its table; its own key at row 0
    query = tuple(np.concatenate([q[i][a + 1 : b + 1] for q, (_, a, b) in zip(queries, bands)]) for i in (0, 1))
    own = tuple(
        np.concatenate([np.repeat(k[i][:1], b - a, axis=0) for k, (_, a, b) in zip(keys, bands)]) for i in (0, 1)
    )
    hidden = _hidden(n)  # (n, n) key j after question t
    return BandTurns(band, stops, first, query, key, own, hidden)


_RATES: dict = {}  # (theta_k's bytes, dtype) -> (cos, sin) of j theta_k for j = 0 .. rows - 1, the most rows asked


def _rate_turns(theta_k: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of ``j theta_k``, ``j = 0 .. rows - 1`` (``(rows, P)`` each, read-only), as
    :func:`poskernels.encodings.rotations.rotate` turns by them: kept per rate, grown when more rows are asked."""
    key = (theta_k.tobytes(), theta_k.dtype.str)
    table = _RATES.get(key)
    if table is None or table[0].shape[0] < rows:
        if len(_RATES) >= 4096:  # a bound on what a process keeps: the rates of many corpora
            _RATES.clear()
        size = max(rows, 0 if table is None else 2 * table[0].shape[0])
        table = _turn_factors(default_positions(size)[:, None] * theta_k)  # (size, P) each
        for a in table:
            a.setflags(write=False)
        _RATES[key] = table
    return table


@lru_cache(maxsize=4)
def _hidden_upto(size: int) -> np.ndarray:
    mask = np.arange(size)[None, :] > np.arange(size)[:, None]  # (size, size) key j after question t
    mask.setflags(write=False)
    return mask


def _hidden(n: int) -> np.ndarray:
    """``(n, n)`` key ``j`` after question ``t``: a corner of one mask kept for the longest filings."""
    return _hidden_upto(1 << max(0, n - 1).bit_length())[:n, :n]


def turn(x: np.ndarray, factors: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``x (..., d)`` turned by the ``(cos, sin)`` of :class:`BandTurns` (the bits of
    :func:`poskernels.encodings.rotations.rotate` by the same angles).

    Parameters
    ----------
    x : ndarray, shape (m, d)
        Vectors, planes as consecutive pairs.
    factors : tuple of two ndarrays, shape (m, P) each
        The cosines and sines of the turns.

    Returns
    -------
    ndarray, shape (m, d)

    Examples
    --------
    >>> from poskernels.encodings import rotate
    >>> x, angles = np.arange(8.0).reshape(2, 4), np.array([[0.3, 1.0], [2.0, -1.0]])
    >>> bool(np.array_equal(turn(x, (np.cos(angles), np.sin(angles))), rotate(x, angles)))
    True
    """
    return _turn(x, *factors)
