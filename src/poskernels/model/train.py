"""Train a head with Adam on a fresh batch each step, and cache it on disk.

``train(config, seed)`` is a pure function of its arguments (and the code version): the seed
splits, through :class:`numpy.random.SeedSequence`, into one stream for the initial weights and
one for the data, so the same seed gives the same weights bit for bit, and heads of different
schemes with the same seed see the same training sequences.  With a ``cache_dir`` the result is
stored as ``.npz`` under a key of the full configuration (:mod:`poskernels.model.cache`).
:func:`train_many` trains the heads missing from the cache on a process pool.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import PosKernelsError
from ..tasks.registry import Sampler, get_task
from .cache import CODE_VERSION, CacheError, cache_key, load_arrays, save_arrays
from .config import TrainConfig
from .head import PLAIN, Reading, accuracy, cross_entropy, init_params, query_backward, query_forward
from .optim import adam_init, adam_step, flatten

__all__ = ["TrainedHead", "evaluate", "head_path", "initial_params", "load_head", "train", "train_many"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class TrainedHead:
    """A trained head.

    Attributes
    ----------
    config : TrainConfig
    seed : int
    params : dict of ndarray
        The weights (see :func:`poskernels.model.head.init_params`).
    losses : ndarray, shape (steps,)
        Training loss at each step.
    key : str
        Cache key of ``(config, seed)``.
    """

    config: TrainConfig
    seed: int
    params: dict
    losses: np.ndarray
    key: str

    @property
    def head(self):
        """The :class:`~poskernels.model.config.HeadConfig`."""
        return self.config.head


def _description(config: TrainConfig, seed: int) -> dict:
    return {"config": config.to_dict(), "seed": int(seed)}


def head_path(cache_dir: Path, config: TrainConfig, seed: int) -> Path:
    """Where ``(config, seed)`` is cached: ``cache_dir/heads/<task>-<scheme>-s<seed>-<key>.npz``.

    >>> head_path(Path("c"), TrainConfig(), 2).name.startswith("cue-nope-s2-")
    True
    """
    key = cache_key(_description(config, seed))
    return Path(cache_dir) / "heads" / f"{config.task}-{config.head.scheme}-s{seed}-{key}.npz"


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise PosKernelsError(f"seed must be a non-negative integer; got {seed!r}")
    return int(seed)


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    init_seq, data_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(init_seq), np.random.default_rng(data_seq)


def initial_params(config: TrainConfig, seed: int) -> dict:
    """The weights ``train(config, seed)`` starts from (the diagnostics compare before and after).

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


def _fit(config: TrainConfig, seed: int, sampler: Sampler, log: Log | None, progress_every: int):
    init_rng, data_rng = _streams(seed)
    head = config.head
    params = init_params(head, init_rng)
    flat, views = flatten(params)
    state = adam_init(flat.size)
    losses = np.empty(config.steps)
    start = time.perf_counter()
    per_draw = max(1, DRAW_SEQUENCES // config.batch)  # steps per call of the sampler
    for step in range(config.steps):
        k = step % per_draw
        if k == 0:  # one call draws the fresh batches of the next steps (one per step, never reused)
            count = min(per_draw, config.steps - step)
            all_tokens, all_targets = sampler(data_rng, count * config.batch, head.n_train)
            _check_stream(head, all_tokens, all_targets, count * config.batch)
        tokens = all_tokens[k * config.batch : (k + 1) * config.batch]
        targets = all_targets[k * config.batch : (k + 1) * config.batch]
        logits, cache = query_forward(views, head, tokens, validate=False)
        losses[step], dlogits = cross_entropy(logits, targets)
        grads = query_backward(views, head, cache, dlogits)
        g = np.concatenate([grads[k].ravel() for k in views])
        adam_step(flat, g, state, config.lr, config.beta1, config.beta2, config.eps)
        if log is not None and progress_every and ((step + 1) % progress_every == 0 or step + 1 == config.steps):
            log(
                f"[train] {config.task}/{head.scheme} seed {seed}: step {step + 1}/{config.steps}, "
                f"loss {losses[max(0, step - 49) : step + 1].mean():.4f} ({time.perf_counter() - start:.1f} s)"
            )
    return {k: v.copy() for k, v in views.items()}, losses


def load_head(cache_dir: Path, config: TrainConfig, seed: int, log: Log | None = None) -> TrainedHead | None:
    """The cached head of ``(config, seed)``, or None if absent or untrustworthy (reported, then removed)."""
    seed = _check_seed(seed)
    path = head_path(cache_dir, config, seed)
    description = _description(config, seed)
    try:
        arrays, _ = load_arrays(path, expect={**description, "code": CODE_VERSION})
        losses = arrays.pop("__losses__", None)
        if losses is None or set(arrays) != set(init_params(config.head, np.random.default_rng(0))):
            raise CacheError(f"{path.name}: the stored arrays are not this head's")
    except FileNotFoundError:
        return None
    except CacheError as err:
        message = f"[cache] discarding {err}; retraining"
        if log is not None:
            log(message)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
        path.unlink(missing_ok=True)
        return None
    return TrainedHead(config, seed, arrays, losses, cache_key(description))


def train(
    config: TrainConfig,
    seed: int,
    cache_dir: Path | None = None,
    sampler: Sampler | None = None,
    log: Log | None = None,
    progress_every: int = 500,
) -> TrainedHead:
    """Train one head (or load it from the cache).

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
    >>> from poskernels.model.head import accuracy
    >>> from poskernels.tasks.cue import cue_batch
    >>> h = train(preset("quick", "alibi"), seed=0)
    >>> acc = accuracy(h.params, h.head, *cue_batch(np.random.default_rng(9), 500, 32))
    >>> acc > 0.5
    True
    """
    seed = _check_seed(seed)
    if not isinstance(config, TrainConfig):
        raise PosKernelsError(f"config must be a TrainConfig; got {type(config).__name__}")
    if cache_dir is not None:
        cached = load_head(cache_dir, config, seed, log)
        if cached is not None:
            return cached
    sampler = get_task(config.task) if sampler is None else sampler
    params, losses = _fit(config, seed, sampler, log, progress_every)
    description = _description(config, seed)
    if cache_dir is not None:
        save_arrays(
            head_path(cache_dir, config, seed), {**params, "__losses__": losses}, {**description, "code": CODE_VERSION}
        )
    return TrainedHead(config, seed, params, losses, cache_key(description))


def _train_job(args):
    config, seed, cache_dir, sampler = args
    start = time.perf_counter()
    head = train(config, seed, cache_dir, sampler)
    return head, time.perf_counter() - start


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one), the default pool size.

    >>> available_cpus() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def train_many(
    jobs: Sequence[tuple[TrainConfig, int]],
    cache_dir: Path | None = None,
    log: Log | None = None,
    workers: int | None = None,
    sampler: Sampler | None = None,
) -> list[TrainedHead]:
    """Train (or load) every ``(config, seed)`` of ``jobs``, the missing ones on a process pool.

    Parameters
    ----------
    jobs : sequence of (TrainConfig, int)
    cache_dir : Path, optional
    log : callable, optional
        Reports each head as it finishes.
    workers : int, optional
        Processes (default: the CPUs available, at most the number of heads to train); 1 trains
        in this process.
    sampler : callable, optional
        A module-level function (it is sent to the workers), as in :func:`train`.

    Returns
    -------
    list of TrainedHead, in the order of ``jobs``.
    """
    out: list[TrainedHead | None] = [None] * len(jobs)
    todo = []
    for i, (config, seed) in enumerate(jobs):
        cached = None if cache_dir is None else load_head(cache_dir, config, seed, log)
        if cached is None:
            todo.append(i)
        else:
            out[i] = cached
    if todo:
        workers = min(len(todo), workers or available_cpus())
        if log is not None:
            log(f"[train] {len(todo)} head(s) to train on {workers} process(es); {len(jobs) - len(todo)} cached")
        args = [(jobs[i][0], jobs[i][1], cache_dir, sampler) for i in todo]
        if workers <= 1:
            results = map(_train_job, args)
            for i, (head, seconds) in zip(todo, results):
                out[i] = head
                _report(log, head, seconds)
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for i, (head, seconds) in zip(todo, pool.map(_train_job, args)):
                    out[i] = head
                    _report(log, head, seconds)
    return out


def _report(log, head: TrainedHead, seconds: float) -> None:
    if log is not None:
        tail = head.losses[-50:].mean()
        log(f"[train] {head.config.task}/{head.head.scheme} seed {head.seed}: loss {tail:.4f} in {seconds:.1f} s")


def evaluate(head: TrainedHead, tokens, targets, positions=None, reading: Reading = PLAIN) -> float:
    """Accuracy of a trained head read at the last position (see :func:`poskernels.model.head.accuracy`).

    >>> from poskernels.model.config import preset
    >>> from poskernels.tasks.cue import cue_batch
    >>> h = train(preset("quick", "nope"), seed=0)
    >>> 0.3 < evaluate(h, *cue_batch(np.random.default_rng(1), 400, 32)) < 0.8
    True
    """
    return accuracy(head.params, head.head, tokens, targets, positions, reading)
