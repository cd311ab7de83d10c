"""Training streams by name: ``sampler(rng, batch, n) -> (tokens (batch, n), targets (batch,))``.

The trainer (:func:`poskernels.model.train.train`) draws a fresh batch from the stream named by
``TrainConfig.task`` at every step.  :data:`TASKS` is built here, explicitly (no module registers itself at
import); :func:`register_task` adds a stream at run time, and a caller can also pass a sampler to ``train``
directly (the filings heads train so).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import PosKernelsError, check_name
from .cue import cue_batch

__all__ = ["TASKS", "Sampler", "get_task", "register_task"]

Sampler = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]


def _cue(rng: np.random.Generator, batch: int, n: int):
    """The article's cue task: 8 symbols, mark probability 0.1 (:func:`poskernels.tasks.cue.cue_batch`).

    Tokens come as ``uint8`` (the same ids as ``int64``; a training step reads them as indices only).
    """
    return cue_batch(rng, batch, n, dtype=np.uint8)


#: Registered streams.  The name is part of a trained head's cache key.
TASKS: dict[str, Sampler] = {"cue": _cue}


def register_task(name: str, sampler: Sampler) -> Sampler:
    """Register ``sampler`` under ``name`` (re-registering the same function is a no-op).

    Parameters
    ----------
    name : str
        The stream's name, as ``TrainConfig.task`` gives it (part of a trained head's cache key).
    sampler : callable
        ``sampler(rng, batch, n) -> (tokens (batch, n), targets (batch,))``.

    Returns
    -------
    callable
        ``sampler``, so that the function can decorate one.

    Raises
    ------
    PosKernelsError
        If ``name`` is not a non-empty string, or is registered with another sampler.

    Examples
    --------
    >>> register_task("cue", TASKS["cue"]) is TASKS["cue"]
    True
    >>> register_task("cue", lambda rng, batch, n: None)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: task 'cue' is already registered with another sampler; pick another name
    """
    if not isinstance(name, str) or not name:
        raise PosKernelsError(f"a task name must be a non-empty string; got {name!r}")
    if name in TASKS and TASKS[name] is not sampler:
        raise PosKernelsError(f"task {name!r} is already registered with another sampler; pick another name")
    TASKS[name] = sampler
    return sampler


def get_task(name: str) -> Sampler:
    """The sampler registered under ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`TASKS`.

    Returns
    -------
    callable
        ``sampler(rng, batch, n) -> (tokens (batch, n), targets (batch,))``.

    Raises
    ------
    PosKernelsError
        If no stream has that name.

    Examples
    --------
    >>> tokens, targets = get_task("cue")(np.random.default_rng(0), 2, 8)
    >>> tokens.shape, targets.shape
    ((2, 8), (2,))
    >>> get_task("cu")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown task 'cu' (did you mean 'cue'?); accepted: cue
    """
    return TASKS[check_name("task", name, TASKS)]
