"""The readers' accuracy on the held-out filings: per seed and over seeds, on all and far queries, by distance.

:func:`reader_table` scores each reader's answers (:mod:`poskernels.experiments.filing_answers`) against the
truth: the accuracy on all queries and on those whose answer is more than 32 tokens back (``far``), per seed, their
mean and standard error, the mean of the first three seeds (the article's), the test-draw SD of each mean (the
held-out filings resampled, :func:`~poskernels.experiments.bootstrap.draw_sd`), and the accuracy per seed in each
bin of the answer's distance (:data:`DISTANCE_BINS`, :func:`distance_bins`) with the queries in each bin and the
filer's share among their answers.
"""

from __future__ import annotations

import numpy as np

from ..model.train import TrainedHead
from ..seeds import ARTICLE_COUNT, mean_stderr, stat_table
from ..tasks.filings import FAR, FilingTokens
from .bootstrap import draw_sd
from .filing_answers import FILER, _answer, _truth
from .filing_maps import FILING_READERS

__all__ = ["reader_table"]


#: The answer distances ``back = r - 1`` (tokens between the asked position and the last mention) the accuracy is
#: broken down by: name -> ``[lo, hi]``, inclusive.
DISTANCE_BINS = {
    "0-3": (0, 3),
    "4-15": (4, 15),
    "16-32": (16, 32),
    "33-64": (33, 64),
    "65-128": (65, 128),
    "129+": (129, 10**9),
}


def reader_table(
    heads: dict[str, list[TrainedHead]], docs: list[FilingTokens], known: dict | None = None, readers=None
) -> dict:
    """Accuracy of the readers (default the seven of ``FILING_READERS``) on all and far queries: per seed, and the
    mean of seeds.

    ``known`` (:func:`~poskernels.experiments.filing_answers.answer_all`) holds answers already read; the others
    are read here.  ``readers``: name -> ``(trained scheme, map)``, as
    :func:`~poskernels.experiments.filing_maps.filing_readers` names them.

    Parameters
    ----------
    heads : dict of str to list of TrainedHead
        The heads of each scheme the readers read, in seed order.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    known : dict, optional
        Answers already read (:func:`~poskernels.experiments.filing_answers.answer_all`).
    readers : dict, optional
        ``name -> (trained scheme, map)`` (default :data:`~poskernels.experiments.filing_maps.FILING_READERS`).

    Returns
    -------
    dict
        ``{"accuracy": {reader: {"all": float, "far": float}}, "stderr": (same), "first_three": (same),
        "per_seed": {reader: {"all": [...], "far": [...]}}, "by_distance": ..., "draw_sd": (as accuracy)}``:
        ``draw_sd`` the test-draw SD of each mean, the filings resampled
        (:func:`~poskernels.experiments.bootstrap.draw_sd`).

    Examples
    --------
    >>> from poskernels.experiments.filing_heads import TRAINED_SCHEMES, filings_config
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.filings import encode_filing, laboratory_filing
    >>> def untrained(scheme):  # a filing head at its initial weights: no training, cheap
    ...     c = filings_config(scheme)
    ...     return TrainedHead(c, 0, init_params(c.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> doc = encode_filing(laboratory_filing())  # the laboratory's filing, 209 tokens
    >>> table = reader_table({s: [untrained(s)] for s in TRAINED_SCHEMES}, [doc])
    >>> sorted(table), sorted(table["accuracy"]) == sorted(FILING_READERS)
    (['accuracy', 'by_distance', 'draw_sd', 'first_three', 'per_seed', 'stderr'], True)
    >>> round(table["accuracy"]["alibi"]["all"], 4)
    0.1483
    """
    answers, r, filing = _truth(docs)
    far = r - 1 > FAR  # (Q,) the answer more than 32 tokens back from the asked position
    bins = distance_bins(r)  # (Q,) the bin of each query's answer distance
    per_seed, by_distance, draw = {}, {}, {}
    for reader, (scheme, _) in (FILING_READERS if readers is None else readers).items():
        rows, hits = [], []
        by_distance[reader] = {name: [] for name in DISTANCE_BINS}
        for head in heads[scheme]:
            ok = _answer(head, reader, docs, known) == answers  # (Q,)
            rows.append((float(ok.mean()), float(ok[far].mean())))
            hits.append(ok)
            for i, name in enumerate(DISTANCE_BINS):
                by_distance[reader][name].append(float(ok[bins == i].mean()) if np.any(bins == i) else None)
        per_seed[reader] = {"all": [a for a, _ in rows], "far": [f for _, f in rows]}
        # the test-draw SD: the held-out filings resampled, each with all its queries (a bootstrap, not more reads)
        fars = [h[far] for h in hits]
        draw[reader] = {"all": draw_sd(hits, filing, len(docs)), "far": draw_sd(fars, filing[far], len(docs))}
    accuracy, stderr = stat_table(per_seed)
    first = {r: {k: mean_stderr(v[:ARTICLE_COUNT])[0] for k, v in t.items()} for r, t in per_seed.items()}
    filer = answers == FILER  # (Q,) the answer is the filer, the first company named
    distance = {
        "bins": {name: [lo, hi] for name, (lo, hi) in DISTANCE_BINS.items()},
        "queries": {name: int(np.sum(bins == i)) for i, name in enumerate(DISTANCE_BINS)},
        "filer_share": {
            name: float(filer[bins == i].mean()) if np.any(bins == i) else None for i, name in enumerate(DISTANCE_BINS)
        },
        "per_seed": by_distance,
    }
    return {
        "accuracy": accuracy,
        "stderr": stderr,
        "first_three": first,
        "per_seed": per_seed,
        "by_distance": distance,
        "draw_sd": draw,
    }


def distance_bins(r: np.ndarray) -> np.ndarray:
    """The bin of :data:`DISTANCE_BINS` of each offset ``r = back + 1``, shape of ``r``.

    Parameters
    ----------
    r : array_like of int
        Offsets of the answers from the query token.

    Returns
    -------
    ndarray of int
        The index of each offset's bin in :data:`DISTANCE_BINS`.

    Examples
    --------
    >>> distance_bins(np.array([1, 4, 5, 17, 34, 200])).tolist()
    [0, 0, 1, 2, 3, 5]
    """
    back = np.asarray(r) - 1
    edges = np.array([hi for lo, hi in DISTANCE_BINS.values()][:-1])  # upper ends, inclusive
    return np.searchsorted(edges, back, side="left")
