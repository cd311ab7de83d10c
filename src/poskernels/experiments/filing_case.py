"""The laboratory's filing read by every reader: its tokens, the truth and each reader's answer at every position.

:func:`case_study` reads the one filing the laboratory draws (:func:`poskernels.tasks.filings.laboratory_filing`,
209 tokens, Fenwick Logistics named last at token 64 and "the company" at 109) with the seven readers, keeps the
answers of the first three seeds position by position (the article's), and counts per seed of the block the right
answers, those from the last mention on, and the answer at "the company".
"""

from __future__ import annotations

import numpy as np

from ..model.train import TrainedHead
from ..seeds import ARTICLE_COUNT
from ..tasks.filings import encode_filing, filing_queries, laboratory_filing
from .filing_answers import _answer
from .filing_heads import TRAINED_SCHEMES
from .filing_maps import FILING_READERS

__all__ = ["case_study"]


def case_study(heads: dict[str, list[TrainedHead]], known: dict | None = None) -> dict:
    """The laboratory's filing: its tokens, the truth and every reader's answer at every position, per seed.

    Answers are symbols (first-appearance labels; ``companies`` names them), ``None`` before the first mention, for
    the first three seeds.  ``right[reader]`` counts the positions each seed of the block answers right,
    ``right_from_last[reader]`` those from the last mention on, ``at_the_company[reader]`` each seed's answer at
    ``the_company``; ``known`` (:func:`~poskernels.experiments.filing_answers.answer_all` on the laboratory's filing)
    holds answers already read; ``last_mention`` is the position of the last company named (Fenwick Logistics) and
    ``the_company`` that of "the company" after it.

    Parameters
    ----------
    heads : dict of str to list of TrainedHead
        The heads of every scheme of :data:`~poskernels.experiments.filing_heads.TRAINED_SCHEMES`, in seed order.
    known : dict, optional
        Answers already read on the laboratory's filing (:func:`~poskernels.experiments.filing_answers.answer_all`).

    Returns
    -------
    dict
        ``doc_id``, ``tokens``, ``marked``, ``companies``, ``truth``, ``answers``, ``right``, ``right_from_last``,
        ``at_the_company``, ``seeds``, ``queries``, ``last_mention``, ``the_company``.

    Examples
    --------
    >>> from poskernels.experiments.filing_heads import filings_config
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.filings import encode_filing, laboratory_filing
    >>> def untrained(scheme):  # a filing head at its initial weights: no training, cheap
    ...     c = filings_config(scheme)
    ...     return TrainedHead(c, 0, init_params(c.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> doc = encode_filing(laboratory_filing())  # the laboratory's filing, 209 tokens
    >>> case = case_study({s: [untrained(s)] for s in TRAINED_SCHEMES})
    >>> case["queries"], case["last_mention"], case["the_company"], case["seeds"]
    (209, 64, 109, [0])
    """
    doc = encode_filing(laboratory_filing())
    q = filing_queries(doc)
    n = len(doc)
    truth = [None] * n
    for t, a in zip(q.positions, q.answers):
        truth[int(t)] = int(a)
    last = int(np.flatnonzero(doc.marked)[-1])
    lower = [w.lower() for w in doc.words]
    the_company = next((t for t in range(last + 1, n - 1) if lower[t] == "the" and lower[t + 1] == "company"), None)
    after_last = q.positions >= last  # (q,)
    answers, right, from_last, at_the_company = {}, {}, {}, {}
    for reader, (scheme, _) in FILING_READERS.items():
        answers[reader], right[reader], from_last[reader], at_the_company[reader] = {}, [], [], []
        for i, head in enumerate(heads[scheme]):
            pred = _answer(head, reader, [doc], known)  # (q,)
            right[reader].append(int((pred == q.answers).sum()))
            from_last[reader].append(int((pred[after_last] == q.answers[after_last]).sum()))
            at = np.flatnonzero(q.positions == the_company)
            at_the_company[reader].append(int(pred[at[0]]) if at.size else None)
            if i < ARTICLE_COUNT:  # the laboratory draws the article's three
                row = [None] * n
                for t, a in zip(q.positions, pred):
                    row[int(t)] = int(a)
                answers[reader][str(head.seed)] = row
    return {
        "doc_id": doc.doc_id,
        "tokens": list(doc.words),
        "marked": [bool(m) for m in doc.marked],
        "companies": list(doc.companies),
        "truth": truth,
        "answers": answers,
        "right": right,
        "right_from_last": from_last,
        "at_the_company": at_the_company,
        "seeds": [int(h.seed) for h in heads[TRAINED_SCHEMES[0]]],
        "queries": int(len(q.positions)),
        "last_mention": last,
        "the_company": the_company,
    }
