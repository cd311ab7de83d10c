"""The finance case study: heads trained on 32-token windows of filings, asked at every position of whole filings.

Four schemes (no position, the sinusoidal code, RoPE, ALiBi), ten seeds each (a block the caller gives,
:func:`poskernels.seeds.seed_block`; the article trains three), are trained afresh with the tournament's head
and trainer (:func:`poskernels.model.config.preset`, 1,500 Adam steps at length 32) on windows of the training
filings (:func:`poskernels.tasks.filings.filings_sampler`).  The RoPE heads are re-read with PI,
NTK-aware and YaRN, each question at its own ``kappa = max(1, (t + 2) / 32)``: the tournament's rule for the
``t + 2`` tokens of the question at ``t`` (its prefix and the query;
:data:`~poskernels.experiments.filings_reader.KAPPA_RULES`, where ``"filing"`` reads every question of a filing of
``n`` tokens at ``max(1, (n + 1) / 32)`` instead): seven readers.  Each reads the 100 held-out filings
in one pass per filing and answers "which company was named last?" at every position after the first mention.

Results (:func:`filings_results`, the ``filings`` key of ``numbers.json``):

- ``accuracy[reader].all / .far``: mean over seeds on all queries and on those whose answer is more than 32
  tokens back; ``stderr`` its standard error, ``per_seed`` the same per seed, ``first_three`` the mean of the
  first three seeds, ``seeds`` the seeds;
- ``horizon``: each ALiBi head's content width ``W`` (:func:`~poskernels.experiments.filings_reader.content_width`),
  horizon ``W / s``, and its accuracy on the queries whose answer lies at an offset ``r <= W / (2 s)`` from the
  query token (inside half the horizon) and ``r > W / s`` (beyond it), for the filing heads and for the
  tournament's ALiBi heads (trained on the cue stream), one row per head; ``horizon_stats[trained_on]`` the mean
  and standard error of each column over the seeds;
- ``by_distance``: each reader's accuracy per seed by the answer's distance (:data:`DISTANCE_BINS`), with the
  queries in each bin and the filer's share among their answers;
- ``case``: the laboratory's filing with every reader's answer at every position for the first three seeds, and
  per seed of the block the count of right answers.

The offset of an answer from the query token is ``r = back + 1``: the question at ``t`` puts the query at ``t + 1``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import check_name
from ..model.cache import CODE_VERSION, cache_key, cached_or_build
from ..model.config import TrainConfig, preset
from ..model.train import TrainedHead, head_key, train_many
from ..pool import available_cpus, run_jobs
from ..seeds import ARTICLE_COUNT, mean_stderr, stat_table
from ..tasks.filings import (
    FAR,
    FilingTokens,
    case_corpus,
    corpus_digest,
    corpus_stats,
    encode_filing,
    filing_queries,
    filings_sampler,
    filings_task_name,
    laboratory_filing,
)
from .bootstrap import draw_sd
from .filings_reader import DEFAULT_KAPPA_RULE, FILING_READERS, KAPPA_RULES, content_width, read_filing_as
from .tournament import tournament_jobs

__all__ = [
    "RESULTS_VERSION",
    "TRAINED_SCHEMES",
    "answer_all",
    "answer_filings",
    "case_study",
    "filings_config",
    "filings_results",
    "horizon_stats",
    "horizon_row",
    "prepare_filings",
    "reader_table",
    "train_filing_heads",
    "tournament_alibi_heads",
]

#: The schemes trained on filings; the seven readers are these and RoPE's three re-readings.
TRAINED_SCHEMES = ("nope", "sinusoidal", "rope", "alibi")
#: Bump when the readers or the results' layout change, so cached results are recomputed.
RESULTS_VERSION = "filings-8"  # 8: each cell's test-draw SD, resampled (experiments.bootstrap)
#: How the results name each rule of ``kappa`` (``numbers.json``'s ``filings.kappa``).
KAPPA_TEXT = {
    "question": "max(1, (t + 2) / 32) per question at t (its prefix and the query)",
    "filing": "max(1, (n + 1) / 32) per filing of n tokens",
}


def filings_config(scheme: str) -> TrainConfig:
    """The tournament's run with the filings' training stream.

    Parameters
    ----------
    scheme : str
        A key of :data:`poskernels.encodings.SCHEMES`.

    Returns
    -------
    TrainConfig
        ``preset("tournament", scheme)`` with the task of the filings' stream
        (:func:`poskernels.tasks.filings.filings_task_name`).

    Examples
    --------
    >>> c = filings_config("alibi")
    >>> (c.head.scheme, c.steps, c.batch, c.head.n_train, c.task.startswith("filings-s0-"))
    ('alibi', 1500, 128, 32, True)
    """
    return replace(preset("tournament", scheme), task=filings_task_name())


def train_filing_heads(cache_dir=None, log=None, workers=None, *, seeds) -> dict[str, list[TrainedHead]]:
    """The filing heads (four schemes x ``seeds``, a block of :func:`~poskernels.seeds.seed_block`), trained or loaded.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Cache of the heads (``heads/*.npz``); None trains in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes training (default: the CPUs available).
    seeds : iterable of int
        The seeds (a block of :func:`poskernels.seeds.seed_block`).

    Returns
    -------
    dict
        ``{scheme: [head of each seed, in order]}``.

    Examples
    --------
    Each head is the full run (1,500 steps on filings); with no seeds nothing is trained:

    >>> train_filing_heads(seeds=[])
    {'nope': [], 'sinusoidal': [], 'rope': [], 'alibi': []}
    """
    jobs = _filing_jobs(seeds)
    heads = train_many(jobs, cache_dir=cache_dir, log=log, workers=workers, sampler=filings_sampler)
    return {s: [h for h in heads if h.head.scheme == s] for s in TRAINED_SCHEMES}


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


def tournament_alibi_heads(cache_dir=None, log=None, workers=None, *, seeds) -> list[TrainedHead]:
    """The tournament's ALiBi heads of the seeds, the same jobs and cache entries as the tournament's.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Cache of the heads (``heads/*.npz``); None trains in memory.
    log : callable, optional
        Progress messages.
    workers : int, optional
        Processes training (default: the CPUs available).
    seeds : iterable of int
        The seeds (a block of :func:`poskernels.seeds.seed_block`).

    Returns
    -------
    list of TrainedHead
        The ALiBi head of each seed, in order.

    Examples
    --------
    >>> tournament_alibi_heads(seeds=[])  # each head is the tournament's full run; no seeds, nothing trained
    []
    """
    return train_many(_alibi_jobs(seeds), cache_dir=cache_dir, log=log, workers=workers)


def _filing_jobs(seeds) -> list:
    return [(filings_config(s), seed) for s in TRAINED_SCHEMES for seed in seeds]


def _alibi_jobs(seeds) -> list:
    return [(c, s) for c, s in tournament_jobs(extra=False, seeds=seeds) if c.head.scheme == "alibi"]


def answer_filings(
    head: TrainedHead, reader: str, docs: list[FilingTokens], kappa: str = DEFAULT_KAPPA_RULE
) -> np.ndarray:
    """The reader's answer at every query position of every filing, concatenated in order, shape (Q,).

    ``kappa`` is the rule of :data:`~poskernels.experiments.filings_reader.KAPPA_RULES` a map reads with.

    Parameters
    ----------
    head : TrainedHead
        A head of the reader's scheme.
    reader : str
        A key of :func:`~poskernels.experiments.filings_reader.filing_readers`.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    kappa : str, optional
        A rule of :data:`~poskernels.experiments.filings_reader.KAPPA_RULES` (default ``"question"``).

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
    >>> from poskernels.model.head import init_params
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
        A rule of :data:`~poskernels.experiments.filings_reader.KAPPA_RULES` (default ``"question"``).

    Returns
    -------
    dict
        ``{(config, seed, reader): answers (Q,)}``, the same arrays as :func:`answer_filings` gives one by one.

    Examples
    --------
    >>> from poskernels.model.head import init_params
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


def reader_table(
    heads: dict[str, list[TrainedHead]], docs: list[FilingTokens], known: dict | None = None, readers=None
) -> dict:
    """Accuracy of the readers (default the seven of ``FILING_READERS``) on all and far queries: per seed, and the
    mean of seeds.

    ``known`` (:func:`answer_all`) holds answers already read; the others are read here.  ``readers``: name ->
    ``(trained scheme, map)``, as :func:`~poskernels.experiments.filings_reader.filing_readers` names them.

    Parameters
    ----------
    heads : dict of str to list of TrainedHead
        The heads of each scheme the readers read, in seed order.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    known : dict, optional
        Answers already read (:func:`answer_all`).
    readers : dict, optional
        ``name -> (trained scheme, map)`` (default :data:`~poskernels.experiments.filings_reader.FILING_READERS`).

    Returns
    -------
    dict
        ``{"accuracy": {reader: {"all": float, "far": float}}, "stderr": (same), "first_three": (same),
        "per_seed": {reader: {"all": [...], "far": [...]}}, "by_distance": ..., "draw_sd": (as accuracy)}``:
        ``draw_sd`` the test-draw SD of each mean, the filings resampled
        (:func:`~poskernels.experiments.bootstrap.draw_sd`).

    Examples
    --------
    >>> from poskernels.model.head import init_params
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
#: The label of the filer, the first company a filing names (labels are orders of first appearance).
FILER = 0


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


#: Columns of the horizon table summarized over seeds.
HORIZON_COLUMNS = ("W", "horizon", "inside_half", "between", "beyond", "beyond_not_filer")


def horizon_stats(rows: list[dict]) -> dict:
    """Mean, standard error and per-seed values of each horizon column, per training stream.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`horizon_row` (each with ``trained_on``, ``seed`` and the columns of :data:`HORIZON_COLUMNS`;
        a missing or None value is left out of its column's statistic).

    Returns
    -------
    dict
        ``{trained_on: {"mean", "stderr", "per_seed", "seeds"}}``, the first three by column.

    Examples
    --------
    >>> rows = [{"trained_on": "filings", "seed": s, "W": 20.0 + s, "horizon": 40.0 + 2 * s, "inside_half": 1.0,
    ...          "between": 0.9, "beyond": None if s else 0.5} for s in (0, 1)]
    >>> st = horizon_stats(rows)["filings"]
    >>> st["mean"]["horizon"], st["stderr"]["horizon"], st["mean"]["beyond"], st["seeds"]
    (41.0, 1.0, 0.5, [0, 1])
    """
    out = {}
    for trained_on in dict.fromkeys(r["trained_on"] for r in rows):
        mine = [r for r in rows if r["trained_on"] == trained_on]
        per_seed = {c: [r.get(c) for r in mine] for c in HORIZON_COLUMNS}
        # a head with no query beyond its horizon reads None there: the statistic is over those that have one
        present = {c: [v for v in vs if v is not None] for c, vs in per_seed.items()}
        stats = {c: mean_stderr(vs) for c, vs in present.items()}
        out[trained_on] = {
            "mean": {c: m for c, (m, _) in stats.items()},
            "stderr": {c: se for c, (_, se) in stats.items()},
            "per_seed": per_seed,
            "seeds": [int(r["seed"]) for r in mine],
        }
    return out


def horizon_row(head: TrainedHead, trained_on: str, docs: list[FilingTokens], known: dict | None = None) -> dict:
    """One row of the ALiBi horizon table (Theorem 3 (iii)): ``W``, ``W / s``, accuracy inside half of it and beyond.

    Parameters
    ----------
    head : TrainedHead
        An ALiBi head.
    trained_on : str
        What it was trained on (``"filings"``, ``"synthetic"``), kept in the row.
    docs : list of FilingTokens
        Encoded filings (:func:`poskernels.tasks.filings.tokens.encode_filing`).
    known : dict, optional
        Answers already read (:func:`answer_all`).

    Returns
    -------
    dict
        ``trained_on``, ``seed``, ``W``, ``horizon``, ``inside_half``, ``beyond``, ``inside_queries``,
        ``beyond_queries``, ``between`` (accuracy for ``W / (2 s) < r <= W / s``), ``beyond_not_filer`` (beyond the
        horizon, on the queries whose answer is not the filer: a head that falls back on the filer scores 0 there).

    Raises
    ------
    PosKernelsError
        If the head has a code or a rotation (it has no content width).

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> def untrained(scheme):  # a filing head at its initial weights: no training, cheap
    ...     c = filings_config(scheme)
    ...     return TrainedHead(c, 0, init_params(c.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> doc = encode_filing(laboratory_filing())  # the laboratory's filing, 209 tokens
    >>> row = horizon_row(untrained("alibi"), "filings", [doc])
    >>> row["inside_queries"], row["beyond_queries"], row["inside_half"]  # untrained: W tiny, every answer beyond
    (0, 209, None)
    """
    W = content_width(head.params, head.head)
    horizon = W / head.head.alibi_slope  # Theorem 3 (iii): past W / s a key weighs less than the query itself
    answers, r, _ = _truth(docs)
    ok = _answer(head, "alibi", docs, known) == answers  # (Q,)
    inside, beyond = r <= horizon / 2, r > horizon
    between = ~inside & ~beyond
    not_filer = answers != FILER  # (Q,) queries a head that falls back on the filer cannot answer that way

    def acc(mask):
        return float(ok[mask].mean()) if mask.any() else None

    return {
        "trained_on": trained_on,
        "seed": int(head.seed),
        "W": W,
        "horizon": horizon,
        "inside_half": acc(inside),
        "beyond": acc(beyond),
        "between": acc(between),
        "beyond_not_filer": acc(beyond & not_filer),
        "inside_queries": int(inside.sum()),
        "beyond_queries": int(beyond.sum()),
    }


def case_study(heads: dict[str, list[TrainedHead]], known: dict | None = None) -> dict:
    """The laboratory's filing: its tokens, the truth and every reader's answer at every position, per seed.

    Answers are symbols (first-appearance labels; ``companies`` names them), ``None`` before the first mention, for
    the first three seeds.  ``right[reader]`` counts the positions each seed of the block answers right,
    ``right_from_last[reader]`` those from the last mention on, ``at_the_company[reader]`` each seed's answer at
    ``the_company``; ``known`` (:func:`answer_all` on the laboratory's filing) holds answers already read;
    ``last_mention`` is the position of the last
    company named (Fenwick Logistics) and ``the_company`` that of "the company" after it.

    Parameters
    ----------
    heads : dict of str to list of TrainedHead
        The heads of every scheme of :data:`TRAINED_SCHEMES`, in seed order.
    known : dict, optional
        Answers already read on the laboratory's filing (:func:`answer_all`).

    Returns
    -------
    dict
        ``doc_id``, ``tokens``, ``marked``, ``companies``, ``truth``, ``answers``, ``right``, ``right_from_last``,
        ``at_the_company``, ``seeds``, ``queries``, ``last_mention``, ``the_company``.

    Examples
    --------
    >>> from poskernels.model.head import init_params
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
        A rule of :data:`~poskernels.experiments.filings_reader.KAPPA_RULES` (default ``"question"``).

    Returns
    -------
    dict
        ``corpus``, ``accuracy``, ``stderr``, ``first_three``, ``per_seed``, ``seeds``, ``horizon`` (list of rows),
        ``horizon_stats``, ``case``, ``kappa`` (how it is chosen: ``kappa`` names a rule of
        :data:`~poskernels.experiments.filings_reader.KAPPA_RULES`, default per question).

    Raises
    ------
    PosKernelsError
        If ``kappa`` is not a rule of :data:`~poskernels.experiments.filings_reader.KAPPA_RULES` (before training).

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
