"""Train a head with Adam on a fresh batch each step, and cache it on disk: the trainer's front doors.

``train(config, seed)`` is a pure function of its arguments (and the code version): the seed
splits, through :class:`numpy.random.SeedSequence`, into one stream for the initial weights and
one for the data, so the same seed gives the same weights bit for bit, and heads of different
schemes with the same seed see the same training sequences.  Heads train as a *stack*: the seeds
of one configuration advance together, one forward/backward/Adam call per step for all of them
(:func:`train_stack`, stepping the loop of :mod:`poskernels.model.train_loop`); a single head is the stack of one,
through the same code, and a head's weights do not depend on what it was stacked with.  With a ``cache_dir`` each
head is stored as ``.npz`` under a key of its full configuration and seed (:mod:`poskernels.model.trained`).
:func:`train_many` trains the heads missing from the cache in stacks, on a process pool.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import PosKernelsError, check_int, check_positive_int
from ..pool import available_cpus, run_jobs
from ..tasks.registry import Sampler, get_task
from .cache import cache_key
from .config import TrainConfig
from .grouping import BUNDLE_SIZE, bundles, stacks
from .head import init_params
from .train_loop import _fit_bundle, _seed_list, _streams
from .trained import (  # the trained head and its cache file, importable from here as before
    Log,
    TrainedHead,
    _check_seed,
    _description,
    _save,
    evaluate,
    head_key,
    head_path,
    load_head,
)
from .validate import check_jobs, check_sequence, check_train_options

__all__ = [
    "TrainedHead",
    "evaluate",
    "head_key",
    "head_path",
    "initial_params",
    "BUNDLE_SIZE",
    "bundles",
    "load_head",
    "stacks",
    "train",
    "train_bundle",
    "train_many",
    "train_stack",
]


def initial_params(config: TrainConfig, seed: int) -> dict:
    """The weights ``train(config, seed)`` starts from (the diagnostics compare before and after).

    Parameters
    ----------
    config : TrainConfig
        What is trained.
    seed : int
        The seed, >= 0.

    Returns
    -------
    dict of ndarray
        The head's parameters before the first step.

    Raises
    ------
    PosKernelsError
        If ``seed`` is not an integer >= 0.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> p0 = initial_params(preset("quick", "nope"), 0)
    >>> h = train(preset("quick", "nope"), 0)
    >>> bool(np.abs(h.params["E"] - p0["E"]).max() > 0)
    True
    """
    return init_params(config.head, _streams(_check_seed(seed))[0])


def train_stack(
    config: TrainConfig,
    seeds: Sequence[int],
    cache_dir: Path | None = None,
    sampler: Sampler | None = None,
    log: Log | None = None,
    progress_every: int = 500,
) -> list[TrainedHead]:
    """Train the heads of ``config`` for every seed of ``seeds`` as one stack (or load them from the cache).

    The heads found in the cache are loaded; the missing ones train together, one
    forward/backward/Adam call advancing all of them, and each is stored in its own file, keyed
    as if trained alone: a head's weights are the same bit for bit whatever it is stacked with.

    Parameters
    ----------
    config : TrainConfig
    seeds : sequence of int
        Distinct non-negative seeds.
    cache_dir, sampler, log, progress_every
        As in :func:`train`.

    Returns
    -------
    list of TrainedHead, in the order of ``seeds``.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> heads = train_stack(preset("quick", "alibi"), [0, 1, 2])
    >>> alone = train(preset("quick", "alibi"), 1)
    >>> bool(np.array_equal(heads[1].params["W_Q"], alone.params["W_Q"]))
    True
    """
    if not isinstance(config, TrainConfig):
        raise PosKernelsError(f"config must be a TrainConfig; got {type(config).__name__}")
    return train_bundle([(config, seeds)], cache_dir, sampler, log, progress_every)[0]  # the bundle of one stack


def _train_bundle(configs, seeds, cache_dir, sampler, log, progress_every) -> list[list[TrainedHead]]:
    """The heads of every configuration of ``configs`` (one training stream, :func:`stream_signature`) for the
    checked ``seeds``, each list in the order of ``seeds``: the cached ones loaded, the missing ones trained, the
    configurations missing the same seeds in lockstep on one draw (:func:`~poskernels.model.train_loop._fit_bundle`),
    each head stored in its own file as if trained alone."""
    out = [{seed: None if cache_dir is None else load_head(cache_dir, c, seed, log) for seed in seeds} for c in configs]
    by_todo: dict[tuple, list[int]] = {}  # the configurations missing the same seeds train together
    for i, found in enumerate(out):
        todo = tuple(seed for seed in seeds if found[seed] is None)
        if todo:
            by_todo.setdefault(todo, []).append(i)
    for todo, members in by_todo.items():
        group = [configs[i] for i in members]
        stream = get_task(group[0].task) if sampler is None else sampler
        for i, config, (params, losses, diverged) in zip(members, group, _fit_bundle(group, todo, stream, log,
                                                                                      progress_every)):  # fmt: skip
            for j, (seed, p, loss) in enumerate(zip(todo, params, losses)):
                head = TrainedHead(config, seed, p, loss, cache_key(_description(config, seed)), diverged.get(j))
                out[i][seed] = head
                if cache_dir is not None:
                    _save(cache_dir, head)
    return [[found[seed] for seed in seeds] for found in out]


def train(
    config: TrainConfig,
    seed: int,
    cache_dir: Path | None = None,
    sampler: Sampler | None = None,
    log: Log | None = None,
    progress_every: int = 500,
) -> TrainedHead:
    """Train one head (or load it from the cache): the stack of one (:func:`train_stack`).

    Parameters
    ----------
    config : TrainConfig
    seed : int
        Non-negative; splits into the initialization stream and the data stream.
    cache_dir : Path, optional
        Cache folder; None trains without caching.
    sampler : callable, optional
        ``sampler(rng, batch, n) -> (tokens, targets)``; defaults to the stream registered as
        ``config.task``.  A custom sampler must come with a ``config.task`` name that identifies it.
    log : callable, optional
        ``log(message)`` for progress every ``progress_every`` steps and for cache problems.

    Returns
    -------
    TrainedHead

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> from poskernels.model.engine.one_head import accuracy
    >>> from poskernels.tasks.cue import cue_batch
    >>> h = train(preset("quick", "alibi"), seed=0)
    >>> acc = accuracy(h.params, h.head, *cue_batch(np.random.default_rng(9), 500, 32))
    >>> acc > 0.5
    True
    """
    return train_stack(config, [_check_seed(seed)], cache_dir, sampler, log, progress_every)[0]


def _train_job(args):
    bundle, cache_dir, sampler = args
    start = time.perf_counter()
    heads = train_bundle(bundle, cache_dir, sampler)
    return [h for stack in heads for h in stack], time.perf_counter() - start


def train_bundle(bundle: Sequence[tuple[TrainConfig, Sequence[int]]], cache_dir: Path | None = None,
                 sampler: Sampler | None = None, log: Log | None = None,
                 progress_every: int = 500) -> list[list[TrainedHead]]:  # fmt: skip
    """Train (or load) the stacks of ``bundle`` in lockstep on one draw: stacks of one training stream and seeds.

    Heads of different schemes with the same seed see the same training sequences, so the bundle draws each seed's
    batches once for all its stacks; each head has the bits it has alone (:func:`train_stack`) and is cached as if
    trained alone.

    Parameters
    ----------
    bundle : sequence of (TrainConfig, sequence of int)
        Stacks with the same seeds and the same task, batch, length and steps (:func:`bundles` makes them).
    cache_dir, sampler, log, progress_every
        As in :func:`train`.

    Returns
    -------
    list of list of TrainedHead
        Each stack's heads, in the order of its seeds.

    Raises
    ------
    PosKernelsError
        If the stacks differ in seeds or training stream, or an argument is refused.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> nope, alibi = train_bundle([(preset("quick", "nope"), [0, 1]), (preset("quick", "alibi"), [0, 1])])
    >>> bool(np.array_equal(alibi[1].params["W_Q"], train(preset("quick", "alibi"), 1).params["W_Q"]))
    True
    >>> train_bundle([(preset("quick", "nope"), [0]), (preset("quick", "alibi"), [1])])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the stacks of a bundle must share their seeds; got [0] and [1]
    """
    bundle = list(check_sequence("bundle", bundle))
    pairs = all(isinstance(s, (tuple, list)) and len(s) == 2 and isinstance(s[0], TrainConfig) for s in bundle)
    if not bundle or not pairs:
        raise PosKernelsError(f"a bundle is a non-empty list of (TrainConfig, seeds); got {bundle!r:.200}")
    seeds = [_check_seed(seed) for seed in check_sequence("seeds", bundle[0][1])]
    if len(set(seeds)) != len(seeds):
        raise PosKernelsError(f"the seeds of a stack must be distinct; got {seeds!r}")
    for _, other in bundle[1:]:
        if [_check_seed(seed) for seed in check_sequence("seeds", other)] != seeds:
            raise PosKernelsError(f"the stacks of a bundle must share their seeds; got {seeds!r} and {list(other)!r}")
    cache_dir, sampler, log = check_train_options(cache_dir, sampler, log)
    check_int("progress_every", progress_every, 0, None)
    return _train_bundle([c for c, _ in bundle], seeds, cache_dir, sampler, log, progress_every)


def train_many(
    jobs: Sequence[tuple[TrainConfig, int]],
    cache_dir: Path | None = None,
    log: Log | None = None,
    workers: int | None = None,
    sampler: Sampler | None = None,
) -> list[TrainedHead]:
    """Train (or load) every ``(config, seed)`` of ``jobs``: the missing ones in stacks, on a process pool.

    The missing heads of one configuration train as one stack (:func:`train_stack`, split by
    :func:`stacks` when there are fewer stacks than processes); the pool distributes stacks.

    Parameters
    ----------
    jobs : sequence of (TrainConfig, int)
    cache_dir : Path, optional
    log : callable, optional
        Reports each stack as it finishes.
    workers : int, optional
        Processes (default: the CPUs available, at most the number of stacks to train); 1 trains
        in this process.
    sampler : callable, optional
        A module-level function (it is sent to the workers), as in :func:`train`.

    Returns
    -------
    list of TrainedHead
        In the order of ``jobs`` (a repeated job gives the same head).

    Raises
    ------
    PosKernelsError
        If a job, ``workers``, ``cache_dir``, ``sampler`` or ``log`` is refused.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> quick = preset("quick", "nope")
    >>> heads = train_many([(quick, 0), (quick, 1), (quick, 0)], workers=1)
    >>> [h.seed for h in heads], heads[0] is heads[2], heads[0].key == train(quick, 0).key
    ([0, 1, 0], True, True)
    >>> train_many([(quick, 0)], workers=0)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: workers must be a positive integer; got 0
    """
    jobs = check_jobs(jobs)
    cache_dir, sampler, log = check_train_options(cache_dir, sampler, log)
    if workers is not None:
        check_positive_int("workers", workers)
    found: dict[tuple[TrainConfig, int], TrainedHead] = {}
    missing = []
    for config, seed in jobs:
        key = (config, _check_seed(seed))
        if key in found or key in missing:
            continue
        cached = None if cache_dir is None else load_head(cache_dir, config, seed, log)
        if cached is None:
            missing.append(key)
        else:
            found[key] = cached
    if missing:
        workers = workers or available_cpus()
        todo = stacks(missing, parts=workers)
        workers = min(len(todo), workers)
        if log is not None:
            log(
                f"[train] {len(missing)} head(s) to train in {len(todo)} stack(s) on {workers} process(es); "
                f"{len(found)} cached"
            )
        args = [(bundle, cache_dir, sampler) for bundle in bundles(todo, parts=workers)]
        for _, (heads, seconds) in run_jobs(_train_job, args, workers):
            _collect(found, heads, seconds, log)
    return [found[(config, int(seed))] for config, seed in jobs]


def _collect(found: dict, heads: list[TrainedHead], seconds: float, log) -> None:
    for head in heads:
        found[(head.config, head.seed)] = head
    if log is not None:
        tail = np.mean([head.losses[-50:].mean() for head in heads])
        first = heads[0]
        log(
            f"[train] {first.config.task}/{first.head.scheme} seeds {_seed_list([h.seed for h in heads])}: "
            f"mean loss {tail:.4f} in {seconds:.1f} s"
        )
