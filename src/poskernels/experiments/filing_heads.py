"""The filing heads: the four schemes trained on 32-token windows of filings, and the tournament's ALiBi heads.

Four schemes (:data:`TRAINED_SCHEMES`: no position, the sinusoidal code, RoPE, ALiBi), over a block of seeds the
caller gives (:func:`poskernels.seeds.seed_block`; the article trains three), are trained afresh with the
tournament's head and trainer (:func:`poskernels.model.config.preset`, 1,500 Adam steps at length 32) on windows of
the training filings (:func:`poskernels.tasks.filings.filings_sampler`): :func:`filings_config` is the run,
:func:`train_filing_heads` trains them or loads them from the heads' cache.  The horizon table sets the ALiBi heads
beside the tournament's, trained on the cue stream: :func:`tournament_alibi_heads`, the same jobs and cache entries
as the tournament's.
"""

from __future__ import annotations

from dataclasses import replace

from ..model.config import TrainConfig, preset
from ..model.train import TrainedHead, train_many
from ..tasks.filings import filings_sampler, filings_task_name
from .tournament import tournament_jobs

__all__ = ["TRAINED_SCHEMES", "filings_config", "train_filing_heads", "tournament_alibi_heads"]


#: The schemes trained on filings; the seven readers are these and RoPE's three re-readings.
TRAINED_SCHEMES = ("nope", "sinusoidal", "rope", "alibi")


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
