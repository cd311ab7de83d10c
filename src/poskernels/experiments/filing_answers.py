"""A filing head's answers: a reader asked at every position of the held-out filings, and the truth it is scored by.

:func:`answer_filings` reads one head with one reader (:func:`~poskernels.experiments.filing_maps.read_filing_as`,
each question at its ``kappa``) and keeps its answer at each query position of each filing; :func:`answer_all`
reads many on the process pool, one job per head (its readers together), into ``{(config, seed, reader):
answers}``, the answers the accuracy table, the horizon table and the laboratory's filing read instead of reading
again.  The truth of each query is the company named last before it (a first-appearance label: :data:`FILER`, 0,
is the filer); the offset of an answer from the query token is ``r = back + 1``: the question at ``t`` puts the
query at ``t + 1``.
"""

from __future__ import annotations

import numpy as np

from ..model.train import TrainedHead
from ..pool import available_cpus, run_jobs
from ..tasks.filings import FilingTokens, filing_queries
from .filing_maps import read_filing_as
from .kappa_rules import DEFAULT_KAPPA_RULE

__all__ = ["answer_all", "answer_filings"]


#: The label of the filer, the first company a filing names (labels are orders of first appearance).
FILER = 0


def answer_filings(
    head: TrainedHead, reader: str, docs: list[FilingTokens], kappa: str = DEFAULT_KAPPA_RULE
) -> np.ndarray:
    """The reader's answer at every query position of every filing, concatenated in order, shape (Q,).

    ``kappa`` is the rule of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` a map reads with.

    Parameters
    ----------
    head : TrainedHead
        A head of the reader's scheme.
    reader : str
        A key of :func:`~poskernels.experiments.filing_maps.filing_readers`.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    kappa : str, optional
        A rule of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (default ``"question"``).

    Returns
    -------
    ndarray of int, shape (Q,)
        The answer (a first-appearance label) at each query position of each filing.

    Raises
    ------
    PosKernelsError
        If ``reader`` is not a filing reader or reads another scheme's heads, or ``kappa`` is unknown.

    Examples
    --------
    >>> from poskernels.experiments.filing_heads import filings_config
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.filings import encode_filing, laboratory_filing
    >>> def untrained(scheme):  # a filing head at its initial weights: no training, cheap
    ...     c = filings_config(scheme)
    ...     return TrainedHead(c, 0, init_params(c.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> doc = encode_filing(laboratory_filing())  # the laboratory's filing, 209 tokens
    >>> answer_filings(untrained("alibi"), "alibi", [doc]).shape
    (209,)
    >>> answer_filings(untrained("alibi"), "rope", [doc])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: reader 'rope' reads 'rope' heads; got a 'alibi' head
    """
    out = []
    for doc in docs:
        q = filing_queries(doc)
        logits = read_filing_as(head.params, head.head, doc.ids, reader, kappa)  # (n, C)
        out.append(np.argmax(logits, axis=1)[q.positions])  # (q,)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _answers_job(args) -> list[np.ndarray]:
    head, readers, docs, kappa = args
    return [answer_filings(head, reader, docs, kappa) for reader in readers]


def answer_all(pairs, docs: list[FilingTokens], workers: int | None = None, kappa: str = DEFAULT_KAPPA_RULE) -> dict:
    """:func:`answer_filings` for every ``(head, reader)`` of ``pairs``, one pool job per head (its readers together).

    Parameters
    ----------
    pairs : iterable of (TrainedHead, str)
        Heads and the readers to read each with.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    workers : int, optional
        Processes (default: the CPUs available).
    kappa : str, optional
        A rule of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (default ``"question"``).

    Returns
    -------
    dict
        ``{(config, seed, reader): answers (Q,)}``, the same arrays as :func:`answer_filings` gives one by one.

    Examples
    --------
    >>> from poskernels.experiments.filing_heads import filings_config
    >>> from poskernels.model.head import init_params
    >>> from poskernels.tasks.filings import encode_filing, laboratory_filing
    >>> def untrained(scheme):  # a filing head at its initial weights: no training, cheap
    ...     c = filings_config(scheme)
    ...     return TrainedHead(c, 0, init_params(c.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> doc = encode_filing(laboratory_filing())  # the laboratory's filing, 209 tokens
    >>> alibi, rope = untrained("alibi"), untrained("rope")
    >>> known = answer_all([(alibi, "alibi"), (rope, "rope"), (rope, "rope_pi")], [doc], workers=1)
    >>> sorted(r for _, _, r in known), bool(np.array_equal(known[alibi.config, 0, "alibi"],
    ...                                                     answer_filings(alibi, "alibi", [doc])))
    (['alibi', 'rope', 'rope_pi'], True)
    """
    by_head: dict = {}
    for head, reader in pairs:
        by_head.setdefault((head.config, head.seed), (head, []))[1].append(reader)
    jobs = list(by_head.values())
    out = {}
    for i, answers in run_jobs(_answers_job, [(h, rs, docs, kappa) for h, rs in jobs], workers or available_cpus()):
        head, readers = jobs[i]
        out.update({(head.config, head.seed, r): a for r, a in zip(readers, answers)})
    return out


def _answer(head: TrainedHead, reader: str, docs: list[FilingTokens], answers: dict | None) -> np.ndarray:
    known = None if answers is None else answers.get((head.config, head.seed, reader))
    return answer_filings(head, reader, docs) if known is None else known


def _truth(docs: list[FilingTokens]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Answers, offsets ``r = back + 1`` and the filing of every query of ``docs``, concatenated, shapes (Q,)."""
    qs = [filing_queries(d) for d in docs]
    filing = np.repeat(np.arange(len(qs)), [len(q.answers) for q in qs])
    return np.concatenate([q.answers for q in qs]), np.concatenate([q.back + 1 for q in qs]), filing
