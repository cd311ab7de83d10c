"""Train a head with Adam on a fresh batch each step, and cache it on disk.

``train(config, seed)`` is a pure function of its arguments (and the code version): the seed
splits, through :class:`numpy.random.SeedSequence`, into one stream for the initial weights and
one for the data, so the same seed gives the same weights bit for bit, and heads of different
schemes with the same seed see the same training sequences.  Heads train as a *stack*: the seeds
of one configuration advance together, one forward/backward/Adam call per step for all of them
(:func:`train_stack`); a single head is the stack of one, through the same code, and a head's
weights do not depend on what it was stacked with.  With a ``cache_dir`` each head is stored as
``.npz`` under a key of its full configuration and seed (:mod:`poskernels.model.trained`).
:func:`train_many` trains the heads missing from the cache in stacks, on a process pool.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..encodings.variants import training_positions
from ..errors import PosKernelsError, check_int, check_positive_int
from ..pool import available_cpus, run_jobs
from ..tasks.registry import Sampler, get_task
from .cache import cache_key
from .config import TrainConfig
from .engine.reductions import stack_cross_entropy, stack_params
from .engine.stack import stack_backward, stack_forward
from .head import init_params
from .optim import adam_init, adam_step, flatten
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
    "load_head",
    "stacks",
    "train",
    "train_many",
    "train_stack",
]


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    init_seq, data_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(init_seq), np.random.default_rng(data_seq)


def _position_rng(seed: int) -> np.random.Generator:
    """The stream of a head's random training positions: the seed's third child (the first two, :func:`_streams`,
    are the same whether or not it is drawn), so a seed reproduces its positions bit for bit."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])


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


#: Sequences drawn per call of the sampler (about 8k): the per-call overhead is paid once for many steps.
DRAW_SEQUENCES = 8192


def _check_stream(head, tokens, targets, count: int) -> None:
    tokens, targets = np.asarray(tokens), np.asarray(targets)
    if tokens.dtype.kind not in "iu" or targets.dtype.kind not in "iu":
        raise PosKernelsError(
            f"the sampler must return integer tokens and targets; got {tokens.dtype} and {targets.dtype}"
        )
    if tokens.shape != (count, head.n_train) or targets.shape != (count,):
        raise PosKernelsError(
            f"the sampler must return tokens ({count}, {head.n_train}) and targets ({count},); "
            f"got {tokens.shape} and {targets.shape}"
        )
    if tokens.min() < 0 or tokens.max() >= head.vocab or targets.min() < 0 or targets.max() >= head.n_classes:
        raise PosKernelsError(
            f"the sampler's token ids must lie in [0, {head.vocab - 1}] and targets in [0, {head.n_classes - 1}]; "
            f"got tokens {tokens.min()}..{tokens.max()}, targets {targets.min()}..{targets.max()}"
        )


def _draw(config: TrainConfig, sampler: Sampler, rngs, count: int):
    """``count`` steps' batches for every model, each from its own seed's stream.

    Returns tokens ``(count, M, B, n)`` and targets ``(count, M, B)``: step ``k`` reads one
    contiguous block per array.
    """
    head, B = config.head, config.batch
    tokens = targets = None
    for i, rng in enumerate(rngs):
        x, y = sampler(rng, count * B, head.n_train)
        _check_stream(head, x, y, count * B)
        if tokens is None:  # the sampler's integer type (a small one moves fewer bytes), int64 targets
            tokens = np.empty((count, len(rngs), B, head.n_train), dtype=np.asarray(x).dtype)
            targets = np.empty((count, len(rngs), B), dtype=np.int64)
        elif not np.can_cast(np.asarray(x).dtype, tokens.dtype):
            tokens = tokens.astype(np.int64)
        tokens[:, i] = np.asarray(x).reshape(count, B, head.n_train)
        targets[:, i] = np.asarray(y).reshape(count, B)
    return tokens, targets


#: A head has diverged when its loss is not finite or exceeds this many times a uniform guess's, ``ln C``
#: (the article's heads start at ``ln 8 = 2.08`` and end below it): it stops there, and is kept as diverged.
DIVERGED_FACTOR = 100.0


def _fit(config: TrainConfig, seeds: Sequence[int], sampler: Sampler, log: Log | None, progress_every: int):
    """Train the heads of ``seeds`` as one stack: the only trainer (a single head is the stack of one).

    Each seed has its own initialization and data streams (:func:`_streams`), every per-head
    quantity of the step is its own (:func:`~poskernels.model.engine.stack.stack_forward`), and Adam is
    elementwise, so a head's weights do not depend on the heads stacked with it.  A head whose loss at step ``k``
    is not finite or past :data:`DIVERGED_FACTOR` ``ln C`` stops there (its weights as they were at that step, its
    later losses NaN) and leaves the stack; the others go on, with the same bits they have alone.

    Returns
    -------
    params : list of dict, one per seed
    losses : ndarray, shape (len(seeds), steps)
    diverged : dict
        ``{index into seeds: step k (1-based)}`` for the heads that diverged.
    """
    streams = [_streams(seed) for seed in seeds]
    head, M = config.head, len(seeds)
    params = stack_params(init_params(head, init_rng) for init_rng, _ in streams)
    data_rngs = [data_rng for _, data_rng in streams]
    # randomized positions (the head's setting random_positions = L_max): each head draws its own ordered subset of
    # [0, L_max) every step, shared by the step's batch as Ruoss et al. draw it; otherwise 0..n-1
    pos_rngs = [_position_rng(seed) for seed in seeds] if getattr(head, "random_positions", 0) else None
    flat, views = flatten(params)  # parameter-major: each name's (M, ...) block is contiguous
    state = adam_init(flat.size)
    losses = np.full((M, config.steps), np.nan)
    live = list(range(M))  # the stack's rows: which of the seeds each still is
    stopped: dict[int, dict] = {}  # index into seeds -> its weights when it stopped
    diverged: dict[int, int] = {}
    bound = DIVERGED_FACTOR * math.log(head.n_classes) if head.n_classes > 1 else DIVERGED_FACTOR
    start = time.perf_counter()
    per_draw = max(1, DRAW_SEQUENCES // config.batch)  # steps per call of the sampler
    for step in range(config.steps):
        k = step % per_draw
        if k == 0:  # one call per head draws the fresh batches of the next steps (one per step, never reused)
            all_tokens, all_targets = _draw(config, sampler, data_rngs, min(per_draw, config.steps - step))
        positions = None  # (M, n) with randomized positions: each head its own, one call for the stack all the same
        if pos_rngs is not None:
            positions = np.stack([training_positions(head, r, head.n_train) for r in pos_rngs])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a diverging head: caught just below
            logits, cache = stack_forward(views, head, all_tokens[k], positions, validate=False)
            loss, dlogits = stack_cross_entropy(logits, all_targets[k], finite=False)
        losses[live, step] = loss
        bad = ~(loss <= bound)  # NaN compares False: not finite or too large
        if bad.any():
            for row in np.flatnonzero(bad):
                i = live[row]
                stopped[i], diverged[i] = {name: v[row].copy() for name, v in views.items()}, step + 1
                if log is not None:
                    log(f"[train] {config.task}/{head.scheme} seed {seeds[i]}: diverged at step {step + 1} "
                        f"(loss {loss[row]:.4g}, past {bound:.4g}); stopped")  # fmt: skip
            if bad.all():
                live = []
                break
            keep = ~bad
            flat, views, state = _drop_rows(views, state, keep)
            live = [i for i, ok in zip(live, keep) if ok]
            data_rngs = [r for r, ok in zip(data_rngs, keep) if ok]
            if pos_rngs is not None:
                pos_rngs = [r for r, ok in zip(pos_rngs, keep) if ok]
                positions = positions[keep]
            all_tokens, all_targets = all_tokens[:, keep], all_targets[:, keep]
            logits, cache = stack_forward(views, head, all_tokens[k], positions, validate=False)  # fewer rows
            loss, dlogits = stack_cross_entropy(logits, all_targets[k], finite=False)
        grads = stack_backward(views, head, cache, dlogits)
        g = np.concatenate([grads[name].ravel() for name in views])  # the layout of flat
        adam_step(flat, g, state, config.lr, config.beta1, config.beta2, config.eps)
        if log is not None and progress_every and ((step + 1) % progress_every == 0 or step + 1 == config.steps):
            tail = np.nanmean(losses[live, max(0, step - 49) : step + 1])
            log(
                f"[train] {config.task}/{head.scheme} seeds {_seed_list(seeds)}: step {step + 1}/{config.steps}, "
                f"loss {tail:.4f} ({time.perf_counter() - start:.1f} s)"
            )
    for row, i in enumerate(live):
        stopped[i] = {name: v[row].copy() for name, v in views.items()}
    return [stopped[i] for i in range(M)], losses, diverged


def _drop_rows(views: dict, state, keep: np.ndarray):
    """The stack without its rows where ``keep`` is False: weights and Adam's moments sliced alike (same step count)."""
    flat, new_views = flatten({name: v[keep] for name, v in views.items()})
    mask = np.concatenate([np.repeat(keep, v[0].size) for v in views.values()])  # each name's block is row-major
    new_state = adam_init(flat.size)
    new_state.m[:], new_state.v[:], new_state.t = state.m[mask], state.v[mask], state.t
    return flat, new_views, new_state


def _seed_list(seeds) -> str:
    seeds = list(seeds)
    contiguous = len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds)))
    return f"{seeds[0]}..{seeds[-1]}" if contiguous else ",".join(map(str, seeds))


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
    seeds = [_check_seed(seed) for seed in check_sequence("seeds", seeds)]
    cache_dir, sampler, log = check_train_options(cache_dir, sampler, log)
    check_int("progress_every", progress_every, 0, None)
    if len(set(seeds)) != len(seeds):
        raise PosKernelsError(f"the seeds of a stack must be distinct; got {seeds!r}")
    out = {seed: None if cache_dir is None else load_head(cache_dir, config, seed, log) for seed in seeds}
    todo = [seed for seed in seeds if out[seed] is None]
    if todo:
        sampler = get_task(config.task) if sampler is None else sampler
        params, losses, diverged = _fit(config, todo, sampler, log, progress_every)
        for i, (seed, p, loss) in enumerate(zip(todo, params, losses)):
            out[seed] = TrainedHead(config, seed, p, loss, cache_key(_description(config, seed)), diverged.get(i))
            if cache_dir is not None:
                _save(cache_dir, out[seed])
    return [out[seed] for seed in seeds]


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
    config, seeds, cache_dir, sampler = args
    start = time.perf_counter()
    heads = train_stack(config, seeds, cache_dir, sampler)
    return heads, time.perf_counter() - start


def stacks(jobs: Sequence[tuple[TrainConfig, int]], parts: int = 1) -> list[tuple[TrainConfig, list[int]]]:
    """Group ``(config, seed)`` jobs into stacks: the seeds of one configuration, in first appearance order.

    With ``parts > 1`` the stacks are split, as evenly as their sizes allow, until there are at
    least ``parts`` of them (so a pool of ``parts`` processes has work for each); stacking never
    changes a head, so the split is free to choose.

    Parameters
    ----------
    jobs : sequence of (TrainConfig, int)
        The ``(config, seed)`` pairs (a repeated pair counts once).
    parts : int
        Stacks wanted at least, where the seeds allow.

    Returns
    -------
    list of (TrainConfig, list of int)
        Each stack's configuration and seeds.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> a, b = preset("quick", "nope"), preset("quick", "rope")
    >>> [(c.head.scheme, s) for c, s in stacks([(a, 0), (b, 0), (a, 1), (a, 2)])]
    [('nope', [0, 1, 2]), ('rope', [0])]
    >>> [(c.head.scheme, s) for c, s in stacks([(a, 0), (b, 0), (a, 1), (a, 2)], parts=3)]
    [('nope', [0, 1]), ('nope', [2]), ('rope', [0])]
    """
    groups: dict[TrainConfig, list[int]] = {}
    for config, seed in jobs:
        seeds = groups.setdefault(config, [])
        if seed not in seeds:
            seeds.append(seed)
    out = [(config, seeds) for config, seeds in groups.items()]
    while len(out) < parts:
        i = max(range(len(out)), key=lambda j: len(out[j][1]), default=None)
        if i is None or len(out[i][1]) < 2:
            break
        config, seeds = out[i]
        half = (len(seeds) + 1) // 2
        out[i : i + 1] = [(config, seeds[:half]), (config, seeds[half:])]
    return out


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
        args = [(config, seeds, cache_dir, sampler) for config, seeds in todo]
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
