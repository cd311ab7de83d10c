"""The finance case study's task: synthetic filings and the question "which company was named last?".

This module is the public face of four small ones:

- :mod:`~poskernels.tasks.filings_corpus` draws the corpus (MD&A sections, earnings-call excerpts, 8-K reports)
  from a seed, and holds the laboratory's hand-written filing;
- :mod:`~poskernels.tasks.filings_text` holds the names and sentence templates;
- :mod:`~poskernels.tasks.filings_jsonl` writes and reads filings as JSON Lines (text plus entity spans);
- :mod:`~poskernels.tasks.filings_tokens` turns a filing into the cue task's tokens, asks the question at every
  position, and cuts 32-token training windows.

Examples
--------
>>> stats = corpus_stats(synthetic_corpus(seed=0))
>>> stats["train_docs"], stats["test_docs"], stats["median_tokens"], stats["median_mentions"]
(300, 100, 198.0, 8.0)
>>> stats["queries"], stats["far_queries"], round(stats["far_fraction"], 3)
(19034, 7828, 0.411)
"""

from __future__ import annotations

import numpy as np

from .filings_corpus import (
    LABORATORY_COMPANIES,
    LABORATORY_TEXT,
    MAX_COMPANIES,
    Filing,
    FilingPlan,
    FilingsCorpus,
    Mention,
    generate_filing,
    laboratory_filing,
    synthetic_corpus,
)
from .filings_jsonl import read_filings, write_filings
from .filings_tokens import (
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
    "corpus_stats",
    "encode_filing",
    "filing_queries",
    "generate_filing",
    "laboratory_filing",
    "read_filings",
    "synthetic_corpus",
    "word_symbol",
    "write_filings",
]


def corpus_stats(corpus: FilingsCorpus) -> dict:
    """The corpus's shape, in the article's terms (``filings.corpus`` of ``numbers.json``).

    Lengths and mention counts are medians over all filings (training and held out); queries are counted on the
    held-out filings, one per position at or after the first mention.  ``first_named_all`` / ``first_named_far``
    are the accuracies of always answering the first company named (the article: 0.766 and 0.739).

    Returns
    -------
    dict
        ``train_docs``, ``test_docs``, ``median_tokens``, ``median_mentions``, ``queries``, ``far_queries``,
        ``far_fraction``, ``first_named_all``, ``first_named_far`` (plain ints and floats).
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
