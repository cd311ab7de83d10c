"""A task is one record: its training stream, its token layout, its held-out test sets, its exact reader.

A :class:`TaskSpec` holds all that the rest of the library knows of a task.  The trainer draws from its
``sampler``; :class:`poskernels.model.config.TrainConfig` checks a head's vocabulary, classes and embedding
against its :class:`Layout`; the tournament reads every head on its held-out sets (:meth:`TaskSpec.heldout`, at
its ``lengths``); the diagnostics read its query token and the tokens that carry an answer (``layout.cues``); and
``poskernels tournament --task NAME`` and a sweep's ``task`` run it.  The records are listed in
:data:`poskernels.tasks.registry.TASKS`; a new task is one record there and its test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import PosKernelsError, check_positive_int

__all__ = ["TEST_COUNT", "TEST_SEED", "Layout", "Sampler", "TaskSpec"]

#: A stream: ``sampler(rng, batch, n) -> (tokens (batch, n), targets (batch,))``.
Sampler = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]

#: Test sequences per length, and the seed of the held-out sets: length ``n`` is drawn from
#: ``SeedSequence([TEST_SEED, n])``, apart from any training seed.
TEST_COUNT = 2000
TEST_SEED = 31_415_926


@dataclass(frozen=True)
class Layout:
    """How a task spells its tokens.

    Attributes
    ----------
    vocab : int
        Number of token ids (a head's ``HeadConfig.vocab``).
    n_classes : int
        Number of targets (a head's ``HeadConfig.n_classes``).
    queries : tuple of int
        The ids the last token (the query) may take: one for the cue task, every key for recall.
    cues : tuple of int
        The ids that carry an answer (the cue task's marked symbols, recall's values): the keys the
        diagnostics score against the query.
    embeddings : tuple of str
        The embeddings of :data:`poskernels.model.embedding.EMBEDDINGS` that read these ids, the first the one
        its heads train with (the article's ``"factored"`` reads only the ``2 S + 1`` layout).

    Examples
    --------
    >>> Layout(17, 8, (16,), tuple(range(8, 16)), ("factored", "table")).query
    16
    """

    vocab: int
    n_classes: int
    queries: tuple
    cues: tuple
    embeddings: tuple = ("table",)

    def __post_init__(self):
        check_positive_int("vocab", self.vocab)
        check_positive_int("n_classes", self.n_classes)
        for name in ("queries", "cues"):
            ids = tuple(int(i) for i in getattr(self, name))
            if not ids or min(ids) < 0 or max(ids) >= self.vocab:
                raise PosKernelsError(f"a layout's {name} must be token ids in [0, {self.vocab - 1}]; got {ids}")
            object.__setattr__(self, name, ids)
        if not self.embeddings:
            raise PosKernelsError("a layout names at least one embedding")
        object.__setattr__(self, "embeddings", tuple(self.embeddings))

    @property
    def query(self) -> int:
        """The one query token; refused where the query varies (recall's query is a key)."""
        if len(self.queries) != 1:
            raise PosKernelsError(
                f"this task's query varies over {len(self.queries)} tokens ({self.queries[0]}..{self.queries[-1]}); "
                "pass the query token you mean"
            )
        return self.queries[0]


@dataclass(frozen=True)
class TaskSpec:
    """One task: what trains a head on it and what reads the head.

    Attributes
    ----------
    name : str
        Registry key, and part of a trained head's cache key (``TrainConfig.task``).
    sampler : Sampler
        The training stream, a fresh batch at every step.
    layout : Layout or None
        Its token ids; None for a bare training stream (a caller's own), which no tournament reads.
    title : str
        Its name in printed tables (``"cue task"``).
    test_batch : Sampler or None
        Draws held-out sequences (int64 tokens); default the ``sampler``.
    lengths : tuple of int
        The lengths its tournament reads.
    exact_reader : callable or None
        ``exact_reader(tokens, targets) -> (B,)`` expected score of a reader known in closed form (the cue
        task's bag reader, Proposition 1 (ii)); None where none is written.
    test_count, test_seed : int
        Size of a held-out set and its seed (:meth:`heldout`).
    """

    name: str
    sampler: Sampler
    layout: Layout | None = None
    title: str = ""
    test_batch: Sampler | None = None
    lengths: tuple = (32, 64, 128, 256)
    exact_reader: Callable | None = None
    test_count: int = TEST_COUNT
    test_seed: int = TEST_SEED

    def heldout(self, n: int, count: int | None = None, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The held-out sequences at length ``n``: ``count`` of them from ``SeedSequence([seed, n])``.

        Parameters
        ----------
        n : int
            Sequence length.
        count, seed : int, optional
            Default :attr:`test_count` and :attr:`test_seed`.

        Returns
        -------
        tokens : ndarray, shape (count, n)
        targets : ndarray of int64, shape (count,)
        """
        draw = self.test_batch if self.test_batch is not None else self.sampler
        if self.layout is None:
            raise PosKernelsError(f"task {self.name!r} is a training stream only: it has no layout and no test sets")
        count = self.test_count if count is None else count
        seed = self.test_seed if seed is None else seed
        return draw(np.random.default_rng(np.random.SeedSequence([seed, n])), count, n)
