"""The finance case study's task: synthetic filings and the question "which company was named last?".

Its public names come from five modules:

- :mod:`~poskernels.tasks.filings.corpus` draws the corpus (MD&A sections, earnings-call excerpts, 8-K reports)
  from a seed;
- :mod:`~poskernels.tasks.filings.laboratory` holds the laboratory's hand-written filing;
- :mod:`~poskernels.tasks.filings.text` holds the names and sentence templates;
- :mod:`~poskernels.tasks.filings.jsonl` writes and reads filings as JSON Lines (text plus entity spans);
- :mod:`~poskernels.tasks.filings.tokens` turns a filing into the cue task's tokens, asks the question at every
  position, and cuts 32-token training windows.

Examples
--------
>>> stats = corpus_stats(synthetic_corpus(seed=0))
>>> stats["train_docs"], stats["test_docs"], stats["median_tokens"], stats["median_mentions"]
(300, 100, 196.5, 8.0)
>>> stats["queries"], stats["far_queries"], round(stats["far_fraction"], 3)
(19332, 7854, 0.406)
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache

import numpy as np

from .corpus import (
    MAX_COMPANIES,
    Filing,
    FilingPlan,
    FilingsCorpus,
    Mention,
    generate_filing,
    synthetic_corpus,
)
from .jsonl import filing_to_json, read_filings, write_filings
from .laboratory import LABORATORY_COMPANIES, LABORATORY_TEXT, laboratory_filing
from .tokens import (
    FAR,
    N_SYMBOLS,
    QUERY,
    VOCAB,
    FilingTokens,
    FilingWindows,
    Queries,
    encode_filing,
    filing_queries,
    word_symbol,
)

__all__ = [
    "CORPUS_SEED",
    "FAR",
    "LABORATORY_COMPANIES",
    "LABORATORY_TEXT",
    "MAX_COMPANIES",
    "N_SYMBOLS",
    "QUERY",
    "VOCAB",
    "Filing",
    "FilingPlan",
    "FilingTokens",
    "FilingWindows",
    "FilingsCorpus",
    "Mention",
    "Queries",
    "case_corpus",
    "corpus_digest",
    "corpus_stats",
    "encode_filing",
    "filing_queries",
    "filings_sampler",
    "filings_task_name",
    "generate_filing",
    "laboratory_filing",
    "read_filings",
    "synthetic_corpus",
    "training_windows",
    "word_symbol",
    "write_filings",
]


def corpus_stats(corpus: FilingsCorpus) -> dict:
    """The corpus's shape, in the article's terms (``filings.corpus`` of ``numbers.json``).

    Lengths and mention counts are medians over all filings (training and held out); queries are counted on the
    held-out filings, one per position at or after the first mention.  ``first_named_all`` / ``first_named_far``
    are the accuracies of always answering the first company named (the article: 0.766 and 0.739).

    Parameters
    ----------
    corpus : FilingsCorpus
        The training and held-out filings.

    Returns
    -------
    dict
        ``train_docs``, ``test_docs``, ``median_tokens``, ``median_mentions``, ``queries``, ``far_queries``,
        ``far_fraction``, ``first_named_all``, ``first_named_far`` (plain ints and floats).

    Examples
    --------
    >>> s = corpus_stats(synthetic_corpus(0, 3, 1))
    >>> s["train_docs"], s["test_docs"], s["median_tokens"], s["queries"], s["far_queries"]
    (3, 1, 161.0, 150, 69)
    """
    docs = [encode_filing(f) for f in corpus.train + corpus.test]
    test = [filing_queries(encode_filing(f)) for f in corpus.test]
    answers = np.concatenate([q.answers for q in test])  # (Q,)
    far = np.concatenate([q.far for q in test])  # (Q,)
    return {
        "train_docs": len(corpus.train),
        "test_docs": len(corpus.test),
        "median_tokens": float(np.median([len(d) for d in docs])),
        "median_mentions": float(np.median([int(d.marked.sum()) for d in docs])),
        "queries": int(len(answers)),
        "far_queries": int(far.sum()),
        "far_fraction": float(far.mean()) if len(far) else 0.0,
        "first_named_all": float((answers == 0).mean()) if len(answers) else 0.0,
        "first_named_far": float((answers[far] == 0).mean()) if far.any() else 0.0,
    }


#: The seed of the case study's corpus.
CORPUS_SEED = 0


def case_corpus(seed: int = CORPUS_SEED) -> FilingsCorpus:
    """The case study's corpus (300 training and 100 held-out filings), built once per process.

    ``case_corpus()`` and ``case_corpus(0)`` are one corpus, built once (an ``lru_cache`` on this function keyed
    them apart and built it twice, 0.25 s of every warm ``reproduce``).

    Parameters
    ----------
    seed : int, optional
        The corpus's seed, at least 0; default 0 (:data:`CORPUS_SEED`, the article's).

    Returns
    -------
    FilingsCorpus
        The training and held-out filings.

    Raises
    ------
    PosKernelsError
        If `seed` is not an integer >= 0.

    Examples
    --------
    >>> c = case_corpus()
    >>> len(c.train), len(c.test), c is case_corpus(0)
    (300, 100, True)
    """
    return _case_corpus(int(seed))


@lru_cache(maxsize=4)
def _case_corpus(seed: int) -> FilingsCorpus:
    return synthetic_corpus(seed=seed)


def corpus_digest(filings) -> str:
    """SHA-256 (hex) of the filings' JSONL form: it changes whenever a word, a span or the order changes.

    Parameters
    ----------
    filings : iterable of Filing
        The filings, in order.

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> d = corpus_digest(synthetic_corpus(0, 3, 1).train)
    >>> len(d), d == corpus_digest(synthetic_corpus(0, 3, 1).train), d == corpus_digest(synthetic_corpus(1, 3, 1).train)
    (64, True, False)
    """
    h = hashlib.sha256()
    for f in filings:
        h.update(json.dumps(filing_to_json(f), sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


@lru_cache(maxsize=8)
def training_windows(seed: int = CORPUS_SEED, length: int = FAR) -> FilingWindows:
    """Every training window of the case study's training filings, indexed once per process."""
    return FilingWindows.from_docs([encode_filing(f) for f in case_corpus(seed).train], length)


def filings_sampler(rng: np.random.Generator, batch: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The training stream of the filing heads: ``batch`` windows of ``n`` tokens (query last) from the training
    filings of the corpus with seed :data:`CORPUS_SEED`; the signature of a trainer's sampler.

    Parameters
    ----------
    rng : numpy.random.Generator
        The draws' only source.
    batch : int
        Windows per step.
    n : int
        Tokens per window, the query last.

    Returns
    -------
    tuple of ndarray
        The tokens, shape ``(batch, n)``, and the target company labels, shape ``(batch,)``.

    Raises
    ------
    PosKernelsError
        If `batch` or `n` is not a positive integer.

    Examples
    --------
    >>> tokens, targets = filings_sampler(np.random.default_rng(0), 3, 32)
    >>> tokens.shape, targets.shape, bool((tokens[:, -1] == QUERY).all())
    ((3, 32), (3,), True)
    """
    return training_windows(CORPUS_SEED, n).sample(batch, rng)


@lru_cache(maxsize=8)
def filings_task_name(seed: int = CORPUS_SEED) -> str:
    """The name of the training stream, part of a trained head's cache key: ``filings-s<seed>-<digest>``.

    The digest of the training filings is in the name, so a change to the generator retrains the heads instead
    of reading stale ones.
    """
    return f"filings-s{seed}-{corpus_digest(case_corpus(seed).train)[:12]}"
