"""The finance case study for every scheme beyond the article: trained on filings, read on whole filings.

The case study (:mod:`poskernels.experiments.filings`) trains the article's four schemes.  This module trains
every registered scheme the article does not (:attr:`poskernels.encodings.Scheme.in_article` false: T5 and Shaw,
Kerple's two biases, FIRE, xPos, p-RoPE, partial rotary, and any scheme registered later) the same way: the
tournament's head and trainer on 32-token windows of the training filings
(:func:`~poskernels.experiments.filing_heads.filings_config`, the stacked engine through
:func:`~poskernels.model.train.train_many` and its cache), ten seeds from the block the caller gives.  Each head is
read as trained on the 100 held-out filings, in one pass per filing
(:func:`~poskernels.experiments.filing_maps.read_filing_as`, whose score is the head's one definition: a
complex frequency, a bias that reads the query's position, a logit scale that grows with the keys a question sees
all go through the scheme's hooks).

A scheme whose code is not defined at every position (``defined_everywhere`` false: a learned table has no row past
its window, and a filing runs to hundreds of tokens) has no filing reader: it is not trained and is listed under
``not_read`` with the reason.

Results (:func:`beyond_results`, ``numbers.json``'s ``filings.beyond``): ``schemes`` (those read, in the
registry's order), ``accuracy[scheme].all / .far``, ``stderr``, ``per_seed``, ``first_three``, ``by_distance``
(the layout of :func:`~poskernels.experiments.filing_accuracy.reader_table`), ``seeds``, ``not_read``.
"""

from __future__ import annotations

from pathlib import Path

from ..encodings import SCHEMES
from ..errors import check_name
from ..model.cache import CODE_VERSION, cache_key, cached_or_build
from ..model.train import TrainedHead, head_key, train_many
from ..tasks.filings import case_corpus, corpus_digest, encode_filing, filings_sampler
from .filing_accuracy import reader_table
from .filing_answers import answer_all
from .filing_heads import filings_config
from .kappa_rules import DEFAULT_KAPPA_RULE, KAPPA_RULES

__all__ = [
    "BEYOND_VERSION",
    "beyond_results",
    "beyond_schemes",
    "not_read",
    "prepare_beyond",
    "train_beyond_heads",
]

#: Bump when the reading or the results' layout change, so cached results are recomputed.
BEYOND_VERSION = "filings-beyond-3"  # 3: reader_table gives each cell its test-draw SD (experiments.bootstrap)

#: Why a scheme beyond the article has no filing reader, by the field of :class:`~poskernels.encodings.Scheme`.
_UNREAD = "its code is not defined at every position (a learned table has no row past its window)"


def beyond_schemes() -> tuple[str, ...]:
    """The schemes registered now that the article does not train and a filing can be read with, in order.

    Returns
    -------
    tuple of str
        Schemes of :data:`poskernels.encodings.SCHEMES` not ``in_article`` and ``defined_everywhere``, in the
        registry's order.

    Examples
    --------
    >>> beyond_schemes()[:5]
    ('t5', 'shaw', 'kerple_log', 'kerple_power', 'fire')
    """
    return tuple(s for s, scheme in SCHEMES.items() if not scheme.in_article and scheme.defined_everywhere)


def not_read() -> dict[str, str]:
    """The schemes beyond the article with no filing reader, each with the reason (none of the built-in ones).

    Returns
    -------
    dict of str to str
        ``scheme -> why it has no filing reader``.

    Examples
    --------
    >>> not_read()
    {}
    """
    return {s: _UNREAD for s, scheme in SCHEMES.items() if not scheme.in_article and not scheme.defined_everywhere}


def _jobs(seeds) -> list:
    return [(filings_config(s), seed) for s in beyond_schemes() for seed in seeds]


def train_beyond_heads(cache_dir=None, log=None, workers=None, *, seeds) -> dict[str, list[TrainedHead]]:
    """The heads of :func:`beyond_schemes` x ``seeds`` trained on filings (or loaded from ``cache_dir``).

    Parameters
    ----------
    cache_dir : str or Path, optional
        Cache of the heads (``heads/*.npz``); None trains in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes training (default: the CPUs available).
    seeds : iterable of int
        The seeds of every scheme (a block of :func:`poskernels.seeds.seed_block`).

    Returns
    -------
    dict
        ``{scheme: [head of each seed, in order]}``.

    Examples
    --------
    Each head is the case study's full run (1,500 steps on filings); with no seeds nothing is trained:

    >>> heads = train_beyond_heads(seeds=[])
    >>> list(heads)[:3], {len(v) for v in heads.values()}
    (['t5', 'shaw', 'kerple_log'], {0})
    """
    heads = train_many(_jobs(tuple(seeds)), cache_dir=cache_dir, log=log, workers=workers, sampler=filings_sampler)
    return {s: [h for h in heads if h.head.scheme == s] for s in beyond_schemes()}


def _description(seeds, kappa: str) -> dict:
    """What the results are a function of: the heads' keys, the held-out filings, the version."""
    return {
        "version": BEYOND_VERSION,
        "kappa": kappa,
        "heads": sorted(head_key(c, s) for c, s in _jobs(seeds)),
        "test": corpus_digest(case_corpus().test),
        "not_read": not_read(),
    }


def _results_path(cache_dir, seeds, kappa: str) -> Path:
    return Path(cache_dir) / "filings" / f"beyond-{cache_key(_description(seeds, kappa))}.json"


def prepare_beyond(cache_dir, log=None, *, seeds) -> None:
    """Train the heads into ``cache_dir`` ahead of :func:`beyond_results`, unless its result is cached.

    Parameters
    ----------
    cache_dir : str or Path
        The cache the heads go to.
    log : callable, optional
        Progress messages.
    seeds : iterable of int
        The seeds of every scheme.

    Returns
    -------
    None
        The heads are in ``cache_dir`` (or the result already is).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as cache:
    ...     prepare_beyond(cache, seeds=[])  # no seeds: nothing to train
    """
    seeds = tuple(seeds)
    if not _results_path(cache_dir, seeds, DEFAULT_KAPPA_RULE).exists():
        train_beyond_heads(cache_dir, log, seeds=seeds)


def beyond_results(cache_dir=None, log=None, workers=None, *, seeds, kappa: str = DEFAULT_KAPPA_RULE) -> dict:
    """Every scheme beyond the article on the held-out filings (``numbers.json``'s ``filings.beyond``).

    Cached in ``cache_dir`` as verified JSON under a key of the heads' keys, the held-out filings' digest and
    :data:`BEYOND_VERSION`, as :func:`~poskernels.experiments.filings.filings_results` is.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Cache of the heads and of this result; None computes in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes training and reading (default: the CPUs available).
    seeds : iterable of int
        The seeds of every scheme (a block of :func:`poskernels.seeds.seed_block`).
    kappa : str, optional
        A rule of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (default ``"question"``).

    Returns
    -------
    dict
        ``schemes``, ``accuracy``, ``stderr``, ``per_seed``, ``first_three``, ``by_distance``, ``seeds``,
        ``not_read`` (scheme -> why it has no filing reader), ``code``.

    Raises
    ------
    PosKernelsError
        If ``kappa`` is not a rule of :data:`poskernels.experiments.kappa_rules.KAPPA_RULES` (before training).

    Examples
    --------
    Each result trains and reads every scheme's heads in full; a refusal costs nothing:

    >>> beyond_results(seeds=[0], kappa="longest")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown kappa rule 'longest'; accepted: filing, question
    """
    kappa = check_name("kappa rule", kappa, KAPPA_RULES)
    seeds = tuple(seeds)
    path = None if cache_dir is None else _results_path(cache_dir, seeds, kappa)
    build = lambda: _read(cache_dir, log, workers, seeds, kappa)  # noqa: E731
    return cached_or_build(path, _description(seeds, kappa), build, log, "filings beyond")


def _read(cache_dir, log, workers, seeds, kappa) -> dict:
    heads = train_beyond_heads(cache_dir, log, workers, seeds=seeds)
    docs = [encode_filing(f) for f in case_corpus().test]
    readers = {s: (s, "none") for s in heads}  # each head as trained: its own reader of filing_readers()
    known = answer_all([(h, s) for s in heads for h in heads[s]], docs, workers, kappa)  # on the pool
    out = {"schemes": list(heads), **reader_table(heads, docs, known, readers)}
    out["seeds"] = list(seeds)
    out["not_read"] = not_read()
    out["code"] = CODE_VERSION
    return out
