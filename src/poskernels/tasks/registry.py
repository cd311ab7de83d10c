"""The tasks by name: one :class:`~poskernels.tasks.spec.TaskSpec` record each.

The trainer (:func:`poskernels.model.train.train`) draws a fresh batch from the stream of the task named by
``TrainConfig.task`` at every step; the tournament, the diagnostics and the sweep read the same record's layout
and held-out sets.  :data:`TASKS` is built here, explicitly (no module registers itself at import):

* ``cue``: the article's cue task (:mod:`poskernels.tasks.cue`), with its exact bag reader;
* ``recall``: associative recall, MQAR's single-query form (:mod:`poskernels.tasks.recall`), with its bag reader.

:func:`register_task` adds a record (or a bare training stream) at run time, and a caller can also pass a
sampler to ``train`` directly (the filings heads train so).
"""

from __future__ import annotations

import numpy as np

from ..errors import PosKernelsError, check_name
from .cue import N_SYMBOLS, bag_reader_score, cue_batch, cue_vocab, query_token, token_id
from .recall import N_KEYS, N_VALUES, recall_batch, recall_vocab
from .recall import bag_reader_score as recall_bag_reader
from .spec import Layout, Sampler, TaskSpec

__all__ = [
    "CUE",
    "RECALL",
    "TASKS",
    "Sampler",
    "get_spec",
    "get_task",
    "layout_of",
    "register_task",
    "tournament_tasks",
]


def _cue(rng: np.random.Generator, batch: int, n: int):
    """The article's cue task: 8 symbols, mark probability 0.1 (:func:`poskernels.tasks.cue.cue_batch`).

    Tokens come as ``uint8`` (the same ids as ``int64``; a training step reads them as indices only).
    """
    return cue_batch(rng, batch, n, dtype=np.uint8)


def _cue_test(rng: np.random.Generator, batch: int, n: int):
    """The cue task's held-out sequences, ``int64`` tokens."""
    return cue_batch(rng, batch, n)


def _recall(rng: np.random.Generator, batch: int, n: int):
    """Associative recall: 8 pairs of 16 keys and 16 values (:func:`poskernels.tasks.recall.recall_batch`)."""
    return recall_batch(rng, batch, n)


#: The article's cue task: ids ``s``, ``S + s`` (marked), ``2 S`` (the query); read at 32 to 256.
CUE = TaskSpec(
    name="cue",
    sampler=_cue,
    layout=Layout(
        vocab=cue_vocab(N_SYMBOLS),
        n_classes=N_SYMBOLS,
        queries=(query_token(N_SYMBOLS),),
        cues=tuple(token_id(np.arange(N_SYMBOLS), True).tolist()),
        embeddings=("factored", "table"),
    ),
    title="cue task",
    test_batch=_cue_test,
    lengths=(32, 64, 128, 256),
    exact_reader=bag_reader_score,
)

#: Associative recall: values ``0..V-1``, keys ``V..V+K-1`` (the query is one), the pad ``V + K``.
RECALL = TaskSpec(
    name="recall",
    sampler=_recall,
    layout=Layout(
        vocab=recall_vocab(N_KEYS, N_VALUES),
        n_classes=N_VALUES,
        queries=tuple(range(N_VALUES, N_VALUES + N_KEYS)),
        cues=tuple(range(N_VALUES)),
        embeddings=("table",),
    ),
    title="associative recall",
    lengths=(32, 64, 128, 256),
    exact_reader=recall_bag_reader,
)

#: Registered tasks.  The name is part of a trained head's cache key.
TASKS: dict[str, TaskSpec] = {spec.name: spec for spec in (CUE, RECALL)}


def register_task(task: TaskSpec | str, sampler: Sampler | None = None) -> TaskSpec:
    """Register a task record, or a bare training stream ``register_task(name, sampler)``.

    Re-registering the same record (or the same stream under its name) is a no-op.

    Parameters
    ----------
    task : TaskSpec or str
        The record, or a bare stream's name (then ``sampler`` is its sampler; a bare stream trains heads but has
        no layout or test sets for a tournament).
    sampler : callable, optional
        ``sampler(rng, batch, n) -> (tokens (batch, n), targets (batch,))``, with a name only.

    Returns
    -------
    TaskSpec
        The registered record.

    Raises
    ------
    PosKernelsError
        If the name is empty, the sampler is not callable, or the name is registered with another record.

    Examples
    --------
    >>> register_task(CUE) is TASKS["cue"]
    True
    >>> register_task("cue", TASKS["cue"].sampler) is TASKS["cue"]
    True
    """
    if isinstance(task, str):
        if not task:
            raise PosKernelsError(f"a task name must be a non-empty string; got {task!r}")
        if task in TASKS and TASKS[task].sampler is sampler:
            return TASKS[task]
        if not callable(sampler):
            raise PosKernelsError(f"a task's sampler must be callable (rng, batch, n); got {sampler!r}")
        task = TaskSpec(name=task, sampler=sampler)
    if not isinstance(task, TaskSpec) or not isinstance(task.name, str) or not task.name:
        raise PosKernelsError(f"a task must be a TaskSpec with a non-empty name, or a name and a sampler; got {task!r}")
    if task.name in TASKS and TASKS[task.name] != task:
        raise PosKernelsError(f"task {task.name!r} is already registered with another sampler; pick another name")
    TASKS[task.name] = task
    return task


def get_spec(name: str) -> TaskSpec:
    """The record registered under ``name``.

    Parameters
    ----------
    name : str
        A registered task's name (``cue``, ``recall``, or one :func:`register_task` added).

    Returns
    -------
    TaskSpec
        Its record.

    Raises
    ------
    PosKernelsError
        If no task has that name; the error lists the registered ones.

    Examples
    --------
    >>> get_spec("recall").layout.vocab, get_spec("cue").layout.query
    (33, 16)
    """
    return TASKS[check_name("task", name, TASKS)]


def get_task(name: str) -> Sampler:
    """The training stream of the task registered under ``name``.

    Parameters
    ----------
    name : str
        A registered task's name.

    Returns
    -------
    callable
        Its sampler, ``sampler(rng, batch, n) -> (tokens (batch, n), targets (batch,))``.

    Raises
    ------
    PosKernelsError
        If no task has that name.

    Examples
    --------
    >>> tokens, targets = get_task("cue")(np.random.default_rng(0), 2, 8)
    >>> tokens.shape, targets.shape
    ((2, 8), (2,))
    """
    return get_spec(name).sampler


def tournament_tasks() -> dict[str, TaskSpec]:
    """The registered tasks a tournament can read: those with a layout (a bare stream has no test sets).

    Returns
    -------
    dict of str to TaskSpec
        The records, by name, in the order they were registered.

    Examples
    --------
    >>> sorted(tournament_tasks())
    ['cue', 'recall']
    """
    return {name: spec for name, spec in TASKS.items() if spec.layout is not None}


def layout_of(task: str) -> Layout:
    """The layout of the task a head trained on, by the head's ``TrainConfig.task``.

    A stream outside the registry (the filings', named by their corpus digest) spells its tokens in the cue
    task's layout (:mod:`poskernels.tasks.filings`), and is read in it.

    Parameters
    ----------
    task : str
        The name a head's ``TrainConfig.task`` holds.

    Returns
    -------
    Layout
        The vocabulary layout its tokens are spelled in.

    Raises
    ------
    PosKernelsError
        If the task is a registered training stream without a layout.

    Examples
    --------
    >>> layout_of("cue").query, layout_of("filings-s7-0123").vocab, layout_of("recall").cues[:3]
    (16, 17, (0, 1, 2))
    """
    spec = TASKS.get(task)
    if spec is None:
        return CUE.layout
    if spec.layout is None:
        raise PosKernelsError(f"task {task!r} is a training stream only: it has no layout to read a head in")
    return spec.layout
