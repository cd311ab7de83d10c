"""How much a trained figure moves with the draw of its test set, measured directly: the same heads re-read on other
test draws.

A printed accuracy is a mean over seeds of heads read on one fixed test set (the tournament's 2,000 sequences per
length, the case study's 100 held-out filings).  Against the article's figure, its error has several parts: the
seeds' spread (the standard error), the article's own (three seeds), the binomial error of the article's test count,
and the draw of the test set, which every seed shares and which the standard error over seeds therefore does not
see.  The page estimates the last from the reads it already made (:mod:`poskernels.experiments.bootstrap`, a
bootstrap over the test items); this module measures it the long way, the check of that estimate
(``benchmarks/bench_draw_error.py`` prints the two side by side): the heads of the seed block are re-read on
``draws`` other test sets (the tournament's sequences from ``SeedSequence([TEST_SEED + i, n])``, held-out filings
of the corpora with seeds ``CORPUS_SEED + i``), and the standard deviation over those draws of the mean over seeds
is the test-draw error of each cell.  It reads every head ``draws`` more times (59 s of a cold ``reproduce`` at
three draws, when the page computed it so).

:func:`redraw_sd` returns ``{"draws", "tournament": {scheme: {n: sd}}, "rescaled": {reader: {n: sd}},
"filings": {reader: {"all": sd, "far": sd}}}`` (None where a head has no reading), cached as verified JSON.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.cache import cache_key, cached_json, save_json
from ..model.engine.one_head import accuracy
from ..model.train import head_key, train_many
from ..pool import available_cpus, run_jobs
from ..tasks.filings import CORPUS_SEED, FAR, encode_filing, filing_queries
from ..tasks.filings.corpus import synthetic_corpus
from .filing_answers import answer_all
from .filing_heads import TRAINED_SCHEMES, _filing_jobs, train_filing_heads
from .filing_maps import FILING_READERS
from .held_out import TEST_COUNT, TEST_SEED, defined_at, heldout
from .rescaled import RESCALED_LENGTHS, RESCALED_READERS, rescaled_reading
from .tournament import TEST_LENGTHS, tournament_jobs

__all__ = ["DRAWS", "REDRAWS_VERSION", "redraw_sd"]

#: Test draws besides the one the page prints (the standard deviation of four draws' means has 3 degrees of freedom).
DRAWS = 3
REDRAWS_VERSION = "redraws-1"


def _read_tournament_head(args) -> dict:
    """One head's accuracy on each other draw: ``{reader: {n: [acc per draw]}}``."""
    head, draws = args
    out = {}
    readers = {head.head.scheme: None}
    if head.head.scheme == "rope":
        readers.update({r: m for r, m in RESCALED_READERS.items() if m != "none"})
    for reader, name in readers.items():
        lengths = TEST_LENGTHS if name is None else RESCALED_LENGTHS
        out[reader] = {}
        for n in lengths:
            if not defined_at(head.head.scheme, head.head.n_train, n):
                out[reader][str(n)] = None
                continue
            reading = {} if name is None else {"reading": rescaled_reading(head, name, n)}
            out[reader][str(n)] = [
                accuracy(head.params, head.head, *heldout(n, TEST_COUNT, TEST_SEED + 1 + i), **reading)
                for i in range(draws)
            ]
    return out


def _sd_of_means(per_head: list) -> float | None:
    """SD over draws of the mean over heads; ``per_head``: one list of per-draw values per head."""
    if any(v is None for v in per_head):
        return None
    means = np.asarray(per_head, dtype=float).mean(axis=0)  # (draws,)
    return float(means.std(ddof=1))


def _tournament(cache_dir, seeds, draws, workers) -> tuple[dict, dict]:
    heads = train_many(tournament_jobs(extra=True, seeds=seeds), cache_dir=cache_dir, workers=workers)
    read = dict(run_jobs(_read_tournament_head, [(h, draws) for h in heads], workers))
    per: dict = {}
    for i in range(len(heads)):
        for reader, by_n in read[i].items():
            for n, values in by_n.items():
                per.setdefault(reader, {}).setdefault(n, []).append(values)
    table = {reader: {n: _sd_of_means(v) for n, v in by_n.items()} for reader, by_n in per.items()}
    plain = {k: v for k, v in table.items() if k not in RESCALED_READERS or k == "rope"}
    rescaled = {k: v for k, v in table.items() if k in RESCALED_READERS and k != "rope"}
    rescaled["rope"] = {n: plain["rope"][n] for n in map(str, RESCALED_LENGTHS)}
    return plain, rescaled


def _filings(cache_dir, seeds, draws, workers) -> dict:
    heads = train_filing_heads(cache_dir, seeds=seeds, workers=workers)
    pairs = [(h, reader) for reader, (scheme, _) in FILING_READERS.items() for h in heads[scheme]]
    means: dict = {r: {"all": [], "far": []} for r in FILING_READERS}
    for i in range(draws):
        docs = [encode_filing(f) for f in synthetic_corpus(seed=CORPUS_SEED + 1 + i).test]
        qs = [filing_queries(d) for d in docs]
        answers = np.concatenate([q.answers for q in qs])
        far = np.concatenate([q.back for q in qs]) > FAR
        known = answer_all(pairs, docs, workers)
        for reader, (scheme, _) in FILING_READERS.items():
            ok = [known[h.config, h.seed, reader] == answers for h in heads[scheme]]
            means[reader]["all"].append(float(np.mean([o.mean() for o in ok])))
            means[reader]["far"].append(float(np.mean([o[far].mean() for o in ok])))
    return {r: {p: float(np.std(v, ddof=1)) for p, v in parts.items()} for r, parts in means.items()}


def redraw_sd(cache_dir=None, log=None, workers=None, *, seeds, draws: int = DRAWS) -> dict:
    """The test-draw error of every trained cell of the tournament, its re-reads and the case study.

    Heads come from (and go to) ``cache_dir``; the result is cached there under a key of the heads, the draws and
    :data:`REDRAWS_VERSION`.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Cache of the heads and of this result; None computes in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes training and reading (default: the CPUs available).
    seeds : iterable of int
        The seeds of every head (a block of :func:`poskernels.seeds.seed_block`).
    draws : int, optional
        Other test draws each head is re-read on (default :data:`DRAWS`, 3).

    Returns
    -------
    dict
        ``draws``, ``tournament`` (``{scheme: {str(n): SD or None}}``), ``rescaled`` (``{reader: {str(n): SD}}``),
        ``filings`` (``{reader: {"all": SD, "far": SD}}``) and ``seeds``: each SD the standard deviation over the
        draws of the mean over seeds.
    """
    seeds = tuple(seeds)
    workers = workers or available_cpus()
    description = {
        "version": REDRAWS_VERSION,
        "draws": int(draws),
        "tournament": sorted(head_key(c, s) for c, s in tournament_jobs(extra=True, seeds=seeds)),
        "filings": sorted(head_key(c, s) for c, s in _filing_jobs(seeds)),
        "schemes": list(TRAINED_SCHEMES),
    }
    key = cache_key(description)
    path = None if cache_dir is None else Path(cache_dir) / "redraws" / f"redraws-{key}.json"
    cached = cached_json(path, key, log, "redraws")
    if cached is not None:
        return cached
    tournament, rescaled = _tournament(cache_dir, seeds, draws, workers)
    out = {
        "draws": int(draws),
        "tournament": tournament,
        "rescaled": rescaled,
        "filings": _filings(cache_dir, seeds, draws, workers),
        "seeds": list(seeds),
    }
    if path is not None:
        save_json(path, out, {"key": key, **description})
    return out
