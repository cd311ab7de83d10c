"""The turns of a filing read in bands: what a band reading shares across the heads of one configuration.

A reader that asks a turning head (RoPE) the question at every position of a filing, each question at its own
``kappa`` (:func:`poskernels.experiments.filings_reader.read_filing_as`), cuts the questions into bands
``(kappa, a, b)``: the questions ``a .. b - 1`` read the prefix ``0 .. b - 1`` at the band's frequencies
``theta_k``.  Everything such a reading computes before a head's weights enter (which band each question is in,
where each band's keys start, the cosines and sines of every turn, which keys each question sees) depends only on
the frequencies, the bands and the filing's length, so the seeds of one head configuration, read on the same
filing, compute it once: :func:`band_turns`, kept per process (a pure result keyed by all it is computed from).
The cosines and sines are computed on the same angles, in the same shapes, as turning each head would
(:func:`poskernels.encodings.rotations.rotate`), so the turned vectors are the same bits.

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
    """The shared arrays of ``n`` questions read in ``bands`` at the frequencies ``theta``, kept per process.

    Parameters
    ----------
    theta : ndarray, shape (bands, P)
        Each band's frequencies (complex: a rotation with decay).
    bands : sequence of (kappa, a, b)
        The bands (:func:`poskernels.experiments.filings_reader.kappa_bands`), in order, covering ``0 .. n - 1``.
    n : int
        Questions (the filing's length).

    Returns
    -------
    BandTurns
        Read-only arrays, the same object for the same arguments.

    Examples
    --------
    >>> theta = np.array([[1.0], [0.5]])
    >>> band_turns(theta, [(1.0, 0, 1), (2.0, 1, 2)], 2) is band_turns(theta.copy(), [(1.0, 0, 1), (2.0, 1, 2)], 2)
    True
    """
    theta = np.asarray(theta)
    key = tuple((float(kappa), int(a), int(b)) for kappa, a, b in bands)
    return _band_turns(theta.tobytes(), theta.dtype.str, theta.shape, key, int(n))


@lru_cache(maxsize=512)  # a filing's bands for each map: every filing of a corpus, for the heads that follow
def _band_turns(raw: bytes, dtype: str, shape: tuple, bands: tuple, n: int) -> BandTurns:
    theta = np.frombuffer(raw, dtype=dtype).reshape(shape)  # (bands, P)
    pos = default_positions(n + 1)  # (n + 1,) the filing at 0..n-1, the queries at 1..n
    band = np.repeat(np.arange(len(bands)), [b - a for _, a, b in bands])  # (n,) the band of each question
    stops = np.array([b for _, _, b in bands])  # (bands,) each band's prefix: its keys are 0 .. b - 1
    first = np.concatenate([[0], np.cumsum(stops)])  # (bands + 1,) where each band's keys start
    key_pos = pos[np.arange(first[-1]) - np.repeat(first[:-1], stops)]  # (sum of the prefixes,) each key's j
    # phi as content_score turns them: query t + 1 at its band's conjugate rate, each band's keys at its rate
    query = _turn_factors(pos[1:, None] * np.conj(theta)[band])  # (n, P) each
    keys = _turn_factors(key_pos[:, None] * np.repeat(theta, stops, axis=0))  # (sum of the prefixes, P) each
    own = _turn_factors(np.zeros((n, 1)) * theta[band])  # (n, P) each: pair_scores' turn of the own key, by 0
    hidden = np.arange(n)[None, :] > np.arange(n)[:, None]  # (n, n) key j after question t
    for a in (band, stops, first, hidden, *query, *keys, *own):
        a.setflags(write=False)  # shared by every head that follows
    return BandTurns(band, stops, first, query, keys, own, hidden)


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
