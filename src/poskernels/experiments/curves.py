"""The tournament's heads read as curves for the laboratory: a marked key's score against query and offset.

The laboratory draws two curves from the weights of the tournament's heads (Figures A and B): the score of a
marked key ``r`` positions back as the query moves along the sequence (:func:`drift`), and the score of a marked
key against its offset from a query at the end of a 256-token sequence, for every scheme and for RoPE re-read
through each map of Definition 5 (:func:`scores_against_offset`).  They are computed here, from heads the
tournament trained and cached (:func:`cached_heads` loads them and trains nothing); the laboratory only rounds
and draws them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..encodings import SCHEMES
from ..model.config import preset
from ..model.head import PLAIN, score, token_table
from ..model.train import TrainedHead, load_head
from ..tasks.cue import N_SYMBOLS, query_token, token_id
from .readers import READERS
from .tournament import rescaled_reading

__all__ = [
    "DRIFT_OFFSET",
    "DRIFT_READERS",
    "SCORE_LENGTH",
    "cached_heads",
    "drift",
    "marked_key_scores",
    "scores_against_offset",
]

#: Figure A's drift view: the offset of the marked key whose score follows the query along the sequence.
DRIFT_OFFSET = 1
#: The schemes whose drift Figure A draws.
DRIFT_READERS = ("sinusoidal", "rope", "alibi")
#: Figure B's query sits at the end of a sequence this long (the tournament's longest test length).
SCORE_LENGTH = 256


def cached_heads(cache_dir, seed: int, schemes) -> dict[str, TrainedHead] | None:
    """The tournament's heads of ``seed`` for ``schemes``, read from the cache; None if one is not there.

    Trains nothing: the ``tournament`` section (:func:`poskernels.experiments.laboratory.run_laboratory`)
    trains and caches them.
    """
    heads = {s: load_head(Path(cache_dir), preset("tournament", s), seed) for s in schemes}
    return None if any(h is None for h in heads.values()) else heads


def marked_key_scores(head, t, j, reading=None, keys=None) -> np.ndarray:
    """The pre-softmax score of the query token at positions ``t`` against the mean marked key at ``j``.

    The head's one score (:func:`poskernels.model.head.score`, which training factors):
    ``z = <R(t) q_t, R(j) k_j> / tau + bias(t - j)``, with ``h = E[x] + p(position)`` for an additive code and
    the rotation for RoPE, read through ``reading`` (a rescaled RoPE).  The key is
    the mean of the eight marked symbols' keys: the score is linear in the key, so this is the mean of their
    scores, as :mod:`poskernels.experiments.rebound` reads it.

    Parameters
    ----------
    head : TrainedHead
    t, j : array_like, shape (R,)
        Query and key positions, ``j <= t``.
    reading : Reading, optional
    keys : sequence of int, optional
        Key tokens whose mean key is scored (default the eight marked symbols).

    Returns
    -------
    ndarray, shape (R,)
        The scores; NaN where the scheme has no code (a learned table past its length).
    """
    reading = PLAIN if reading is None else reading
    cfg, p = head.head, head.params
    scheme = SCHEMES[cfg.scheme]
    t, j = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(j, dtype=float))  # (R,) each
    out = np.full(t.shape, np.nan)  # (R,)
    ok = np.ones(t.shape, dtype=bool)
    if not SCHEMES[cfg.scheme].defined_everywhere:  # Definition 1: a learned table has rows 0..L-1 only
        ok = (t <= cfg.n_train - 1) & (j >= 0)
    t, j = t[ok], j[ok]
    keys = token_id(np.arange(N_SYMBOLS), True) if keys is None else np.asarray(keys)
    T = token_table(p, cfg)  # (V, d) the embedding of every token
    hq = np.tile(T[query_token(N_SYMBOLS)], (t.size, 1))  # (R, d)
    hk = np.tile(T[keys].mean(axis=0), (t.size, 1))  # (R, d) the mean marked embedding
    if scheme.code(p, cfg, np.zeros(1)) is not None:
        hq = hq + scheme.code(p, cfg, t)
        hk = hk + scheme.code(p, cfg, j)
    z = score(p, cfg, hq @ p["W_Q"], t, hk @ p["W_K"], j, reading, pairwise=True)  # (R,) the head's one score
    out[ok] = z
    return out


def drift(heads: dict[str, TrainedHead], r: int = DRIFT_OFFSET) -> dict:
    """Score of a marked key at offset ``r`` as the query moves (Figure A's drift view), one curve per head.

    Returns
    -------
    dict
        ``offset`` (r), ``positions`` (query positions ``r..255``) and ``scores[scheme]`` (one per position).
    """
    t = np.arange(r, SCORE_LENGTH)  # (T,) query positions; the key sits r before
    return {
        "offset": r,
        "positions": t.tolist(),
        "scores": {s: marked_key_scores(head, t, t - r) for s, head in heads.items()},
    }


def scores_against_offset(heads: dict[str, TrainedHead], readers) -> dict:
    """Each reader's learned score of a marked key against its offset r (Figure B).

    The query sits at the end of a 256-token sequence (position 255; the learned table's at its last row, L - 1),
    the key r before it; RoPE + PI / NTK / YaRN (readers ``rope_<map>``) read ``heads["rope"]`` through the map at
    kappa = 256 / 32, as the re-read table does at 256.

    Returns
    -------
    dict
        ``offsets`` (0..255), ``query_length`` (256) and ``scores[reader]`` (one per offset).
    """
    n = SCORE_LENGTH
    offsets = np.arange(n)  # (n,)
    t = np.full(n, n - 1)
    scores = {}
    for reader in readers:
        if not reader.startswith("rope_"):
            # Definition 1: a learned table has no row past L - 1, so its query sits at L - 1
            q = t if SCHEMES[reader].defined_everywhere else np.full(n, heads[reader].head.n_train - 1)
            scores[reader] = marked_key_scores(heads[reader], q, q - offsets)
        else:
            _, name = READERS[reader]  # read at kappa = n / L, as the re-read table does at n
            reading = rescaled_reading(heads["rope"], name, n)
            scores[reader] = marked_key_scores(heads["rope"], t, t - offsets, reading)
    return {"offsets": offsets.tolist(), "query_length": n, "scores": scores}
