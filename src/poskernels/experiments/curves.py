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
from ..model.engine.scores import pair_scores
from ..model.head import PLAIN, token_table
from ..model.train import TrainedHead, load_head
from ..tasks.registry import layout_of
from .readers import all_readers
from .rescaled import rescaled_reading

__all__ = [
    "DRIFT_OFFSET",
    "DRIFT_READERS",
    "SCORE_LENGTH",
    "cached_heads",
    "drift",
    "marked_key_scores",
    "reader_heads",
    "reader_of",
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

    Parameters
    ----------
    cache_dir : str or Path
        The cache the tournament's heads were saved in.
    seed : int
        The seed of the heads.
    schemes : iterable of str
        Schemes of :data:`poskernels.encodings.SCHEMES`; each head is the tournament preset's
        (:func:`poskernels.model.config.preset`).

    Returns
    -------
    dict of str to TrainedHead, or None
        ``scheme -> head``; None when any of them is not in the cache.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as empty:
    ...     cached_heads(empty, 0, ["rope"]) is None, cached_heads(empty, 0, [])
    (True, {})
    """
    heads = {s: load_head(Path(cache_dir), preset("tournament", s), seed) for s in schemes}
    return None if any(h is None for h in heads.values()) else heads


def marked_key_scores(head, t, j, reading=None, keys=None) -> np.ndarray:
    """The pre-softmax score of the query token at positions ``t`` against the mean marked key at ``j``.

    The head's one score (:func:`poskernels.model.score.score`, which training factors; pair by pair,
    :func:`poskernels.model.engine.scores.pair_scores`):
    ``z = <R(t) q_t, R(j) k_j> / tau + bias(t - j)``, with ``h = E[x] + p(position)`` for an additive code and
    the rotation for RoPE, read through ``reading`` (a rescaled RoPE).  The key is
    the mean of the eight marked symbols' keys: the score is linear in the key, so this is the mean of their
    scores, as :mod:`poskernels.experiments.rebound` reads it.

    Parameters
    ----------
    head : TrainedHead
        A trained head of any scheme.
    t, j : array_like, shape (R,)
        Query and key positions, ``j <= t``.
    reading : Reading, optional
        Frequencies to read a rotary head with (default :data:`poskernels.model.reading.PLAIN`, as trained).
    keys : sequence of int, optional
        Key tokens whose mean key is scored (default the cues of the head's task: the cue task's eight marked
        symbols, :attr:`poskernels.tasks.spec.Layout.cues`).

    Returns
    -------
    ndarray, shape (R,)
        The scores; NaN where the scheme has no code (a learned table past its length).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> z = marked_key_scores(head, [5.0, 9.0], [4.0, 8.0])  # RoPE's score depends on the offset only
    >>> z.shape, bool(np.isclose(z[0], z[1]))
    ((2,), True)
    >>> learned = train(TrainConfig(head=HeadConfig(scheme="learned"), steps=1, batch=8), seed=0)
    >>> np.isnan(marked_key_scores(learned, [10.0, 40.0], [9.0, 39.0])).tolist()  # no row 40 of a 32-row table
    [False, True]
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
    layout = layout_of(head.config.task)  # the cue task's: query 16, the eight marked symbols
    keys = np.asarray(layout.cues if keys is None else keys)
    T = token_table(p, cfg)  # (V, d) the embedding of every token
    hq = np.tile(T[layout.query], (t.size, 1))  # (R, d)
    hk = np.tile(T[keys].mean(axis=0), (t.size, 1))  # (R, d) the mean marked embedding
    if scheme.code(p, cfg, np.zeros(1)) is not None:
        hq = hq + scheme.code(p, cfg, t)
        hk = hk + scheme.code(p, cfg, j)
    z = pair_scores(p, cfg, hq @ p["W_Q"], t, hk @ p["W_K"], j, reading)  # (R,) the head's one score
    out[ok] = z
    return out


def drift(heads: dict[str, TrainedHead], r: int = DRIFT_OFFSET) -> dict:
    """Score of a marked key at offset ``r`` as the query moves (Figure A's drift view), one curve per head.

    Parameters
    ----------
    heads : dict of str to TrainedHead
        The heads to read, by scheme.
    r : int, optional
        The key's offset behind the query (default :data:`DRIFT_OFFSET`, 1).

    Returns
    -------
    dict
        ``offset`` (r), ``positions`` (query positions ``r..255``) and ``scores[scheme]`` (one per position).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> d = drift({"rope": head})
    >>> d["offset"], d["positions"][:3], d["scores"]["rope"].shape
    (1, [1, 2, 3], (255,))
    """
    t = np.arange(r, SCORE_LENGTH)  # (T,) query positions; the key sits r before
    return {
        "offset": r,
        "positions": t.tolist(),
        "scores": {s: marked_key_scores(head, t, t - r) for s, head in heads.items()},
    }


def reader_of(reader: str) -> tuple[str, str]:
    """The head a reader reads and the map it reads it through: ``(scheme, map)``, from the readers' one table.

    A reader is a scheme's head read through a context-extension map (Definition 5; ``"none"``: as trained),
    named once in :func:`poskernels.experiments.readers.all_readers`.  Its name is only a key: ``rope_ssmax`` is
    RoPE + SSMax's own head read as trained, ``rope_pi`` RoPE's head read through PI.

    Parameters
    ----------
    reader : str
        A key of :func:`poskernels.experiments.readers.all_readers`.

    Returns
    -------
    tuple of str
        The scheme whose head is read and the map of :data:`poskernels.extension.MAPS` it is read through.

    Examples
    --------
    >>> reader_of("rope_pi"), reader_of("rope_ssmax"), reader_of("rope_randpos")
    (('rope', 'pi'), ('rope_ssmax', 'none'), ('rope_randpos', 'none'))
    """
    table = all_readers()
    if reader not in table:
        raise KeyError(f"reader {reader!r} is not one of the readers {sorted(table)}")
    return table[reader]


def reader_heads(readers) -> list[str]:
    """The schemes whose heads ``readers`` read, each once, in the readers' order.

    Parameters
    ----------
    readers : iterable of str
        Keys of :func:`poskernels.experiments.readers.all_readers`.

    Returns
    -------
    list of str
        The scheme of each reader's head (:func:`reader_of`), without repeats.

    Examples
    --------
    >>> reader_heads(["rope_ssmax", "rope_pi", "rope", "rope_randpos"])
    ['rope_ssmax', 'rope', 'rope_randpos']
    """
    return list(dict.fromkeys(reader_of(r)[0] for r in readers))


def scores_against_offset(heads: dict[str, TrainedHead], readers) -> dict:
    """Each reader's learned score of a marked key against its offset r (Figure B).

    The query sits at the end of a 256-token sequence (position 255; the learned table's at its last row, L - 1),
    the key r before it.  Each reader reads its own head (:func:`reader_of`): a scheme as trained, or a head
    through a map of Definition 5 at kappa = 256 / 32, as the re-read table does at 256 (RoPE + PI / NTK / YaRN
    read ``heads["rope"]``).

    Parameters
    ----------
    heads : dict of str to TrainedHead
        The trained head of every scheme the readers read (:func:`reader_heads`).
    readers : sequence of str
        Keys of :func:`poskernels.experiments.readers.all_readers`.

    Returns
    -------
    dict
        ``offsets`` (0..255), ``query_length`` (256) and ``scores[reader]`` (one per offset).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> s = scores_against_offset({"rope": head}, ["rope", "rope_pi"])
    >>> s["query_length"], len(s["offsets"]), {r: v.shape for r, v in s["scores"].items()}
    (256, 256, {'rope': (256,), 'rope_pi': (256,)})
    """
    n = SCORE_LENGTH
    offsets = np.arange(n)  # (n,)
    t = np.full(n, n - 1)
    scores = {}
    for reader in readers:
        scheme, name = reader_of(reader)
        head = heads[scheme]
        if name == "none":
            # Definition 1: a learned table has no row past L - 1, so its query sits at L - 1
            q = t if SCHEMES[scheme].defined_everywhere else np.full(n, head.head.n_train - 1)
            scores[reader] = marked_key_scores(head, q, q - offsets)
        else:  # read at kappa = n / L, as the re-read table does at n
            scores[reader] = marked_key_scores(head, t, t - offsets, rescaled_reading(head, name, n))
    return {"offsets": offsets.tolist(), "query_length": n, "scores": scores}
