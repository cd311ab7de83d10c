"""The finance case study's results: heads trained on 32-token windows of filings, asked at every position of whole
filings.

Four schemes (no position, the sinusoidal code, RoPE, ALiBi), ten seeds each (a block the caller gives,
:func:`poskernels.seeds.seed_block`; the article trains three), are trained afresh with the tournament's head
and trainer on windows of the training filings (:mod:`poskernels.experiments.filing_heads`).  The RoPE heads are
re-read with PI, NTK-aware and YaRN, each question at its own ``kappa = max(1, (t + 2) / 32)``: the tournament's
rule for the ``t + 2`` tokens of the question at ``t`` (its prefix and the query;
:data:`~poskernels.experiments.kappa_rules.KAPPA_RULES`, where ``"filing"`` reads every question of a filing of
``n`` tokens at ``max(1, (n + 1) / 32)`` instead): seven readers.  Each reads the 100 held-out filings
in one pass per filing and answers "which company was named last?" at every position after the first mention
(:mod:`poskernels.experiments.filing_answers`).

Results (:func:`filings_results`, the ``filings`` key of ``numbers.json``, cached under a key of what they are a
function of):

- ``accuracy[reader].all / .far``: mean over seeds on all queries and on those whose answer is more than 32
  tokens back; ``stderr`` its standard error, ``per_seed`` the same per seed, ``first_three`` the mean of the
  first three seeds, ``seeds`` the seeds (:func:`~poskernels.experiments.filing_accuracy.reader_table`);
- ``horizon``: each ALiBi head's content width ``W`` (:func:`~poskernels.experiments.filings_reader.content_width`),
  horizon ``W / s``, and its accuracy on the queries whose answer lies at an offset ``r <= W / (2 s)`` from the
  query token (inside half the horizon) and ``r > W / s`` (beyond it), for the filing heads and for the
  tournament's ALiBi heads (trained on the cue stream), one row per head; ``horizon_stats[trained_on]`` the mean
  and standard error of each column over the seeds (:mod:`poskernels.experiments.filing_horizon`);
- ``by_distance``: each reader's accuracy per seed by the answer's distance
  (:data:`~poskernels.experiments.filing_accuracy.DISTANCE_BINS`), with the queries in each bin and the filer's
  share among their answers;
- ``case``: the laboratory's filing with every reader's answer at every position for the first three seeds, and
  per seed of the block the count of right answers (:func:`~poskernels.experiments.filing_case.case_study`).

The offset of an answer from the query token is ``r = back + 1``: the question at ``t`` puts the query at ``t + 1``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import check_name
from ..model.cache import CODE_VERSION, cache_key, cached_or_build
from ..model.train import head_key
from ..tasks.filings import case_corpus, corpus_digest, corpus_stats, encode_filing, laboratory_filing
from .filing_accuracy import reader_table
from .filing_answers import answer_all
from .filing_case import case_study
from .filing_heads import _alibi_jobs, _filing_jobs, tournament_alibi_heads, train_filing_heads
from .filing_horizon import horizon_row, horizon_stats
from .filing_maps import FILING_READERS
from .kappa_rules import DEFAULT_KAPPA_RULE, KAPPA_RULES

__all__ = ["RESULTS_VERSION", "filings_results", "prepare_filings"]


#: Bump when the readers or the results' layout change, so cached results are recomputed.
RESULTS_VERSION = "filings-8"  # 8: each cell's test-draw SD, resampled (experiments.bootstrap)
#: How the results name each rule of ``kappa`` (``numbers.json``'s ``filings.kappa``).
KAPPA_TEXT = {
    "question": "max(1, (t + 2) / 32) per question at t (its prefix and the query)",
    "filing": "max(1, (n + 1) / 32) per filing of n tokens",
}


def prepare_filings(cache_dir, log=None, *, seeds) -> None:
    """Train the filing heads into ``cache_dir`` ahead of :func:`filings_results`, unless its result is cached.

    They need nothing of the tournament, so ``poskernels reproduce`` trains them while the tournament trains.

    Parameters
    ----------
    cache_dir : str or Path
        The cache the heads go to.
    log : callable, optional
        Progress messages.
    seeds : iterable of int
        The seeds.

    Returns
    -------
    None
        The heads are in ``cache_dir`` (or the result already is).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as cache:
    ...     prepare_filings(cache, seeds=[])  # no seeds: nothing to train
    """
    seeds = tuple(seeds)
    if not _results_path(cache_dir, seeds).exists():
        train_filing_heads(cache_dir, log, seeds=seeds)


def _results_path(cache_dir, seeds, kappa: str = DEFAULT_KAPPA_RULE) -> Path:
    return Path(cache_dir) / "filings" / f"results-{cache_key(_results_description(seeds, kappa))}.json"


def _results_description(seeds, kappa: str = DEFAULT_KAPPA_RULE) -> dict:
    """What the results are a function of: the heads' and the tournament heads' keys, the filings read, the version.

    The keys come from the jobs (:func:`poskernels.model.train.head_key`), so a warm run finds its results without
    loading a head.
    """
    return {
        "version": RESULTS_VERSION,
        "kappa": kappa,
        "heads": sorted(head_key(c, s) for c, s in _filing_jobs(seeds)),
        "tournament": sorted(head_key(c, s) for c, s in _alibi_jobs(seeds)),
        "test": corpus_digest(case_corpus().test),
        "laboratory": corpus_digest([laboratory_filing()]),
    }


def filings_results(cache_dir=None, log=None, workers=None, *, seeds, kappa: str = DEFAULT_KAPPA_RULE) -> dict:
    """Every number of the case study (the ``filings`` key of ``numbers.json``).

    Trained heads come from (and go to) ``cache_dir``; the results themselves are cached there as verified JSON
    (:func:`poskernels.model.cache.save_json`: the data's SHA-256 and the key stored beside them) under a key of the
    heads' keys, the held-out filings' digest and :data:`RESULTS_VERSION`; a file that fails the check (truncated,
    altered, another key) is reported through ``log`` and recomputed.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Cache of the heads and of this result; None computes in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes training and reading (default: the CPUs available).
    seeds : iterable of int
        The seeds (a block of :func:`poskernels.seeds.seed_block`).
    kappa : str, optional
        A rule of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (default ``"question"``).

    Returns
    -------
    dict
        ``corpus``, ``accuracy``, ``stderr``, ``first_three``, ``per_seed``, ``seeds``, ``horizon`` (list of rows),
        ``horizon_stats``, ``case``, ``kappa`` (how it is chosen: ``kappa`` names a rule of
        :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES`, default per question).

    Raises
    ------
    PosKernelsError
        If ``kappa`` is not a rule of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (before training).

    Examples
    --------
    The results train and read forty heads in full; a refusal costs nothing:

    >>> filings_results(seeds=[0], kappa="longest")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown kappa rule 'longest'; accepted: filing, question
    """
    kappa = check_name("kappa rule", kappa, KAPPA_RULES)
    seeds = tuple(seeds)
    path = None if cache_dir is None else _results_path(cache_dir, seeds, kappa)
    build = lambda: _read_filings(cache_dir, log, workers, seeds, kappa)  # noqa: E731
    return cached_or_build(path, _results_description(seeds, kappa), build, log, "filings")


def _read_filings(cache_dir, log, workers, seeds, kappa) -> dict:
    heads = train_filing_heads(cache_dir, log, workers, seeds=seeds)
    tournament = tournament_alibi_heads(cache_dir, log, workers, seeds=seeds)
    corpus = case_corpus()
    docs = [encode_filing(f) for f in corpus.test]
    pairs = [(h, reader) for reader, (scheme, _) in FILING_READERS.items() for h in heads[scheme]]
    known = answer_all(pairs + [(h, "alibi") for h in tournament], docs, workers, kappa)  # on the pool
    out = {"corpus": corpus_stats(corpus), **reader_table(heads, docs, known)}
    out["horizon"] = [horizon_row(h, "filings", docs, known) for h in heads["alibi"]]
    out["horizon"] += [horizon_row(h, "synthetic", docs, known) for h in tournament]
    out["horizon_stats"] = horizon_stats(out["horizon"])
    out["seeds"] = list(seeds)
    out["case"] = case_study(heads, answer_all(pairs, [encode_filing(laboratory_filing())], workers, kappa))
    out["kappa"] = KAPPA_TEXT[kappa]
    out["code"] = CODE_VERSION
    return out
