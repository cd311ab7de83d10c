"""The training loop: a stack of heads stepped together by Adam, each on its own fresh batches.

:func:`_fit` is the only trainer: the seeds of one configuration advance together, one forward/backward/Adam call
per step for all of them, and a single head is the stack of one.  Each seed splits, through
:class:`numpy.random.SeedSequence`, into one stream for the initial weights and one for the data (:func:`_streams`),
and a third for randomized training positions (:func:`_position_rng`), so the same seed gives the same weights bit
for bit, heads of different schemes with the same seed see the same training sequences, and a head's weights do not
depend on what it was stacked with.  The batches of many steps are drawn in one call of the sampler per head
(:func:`_draw`, :data:`DRAW_SEQUENCES`); a head whose loss runs past :data:`DIVERGED_FACTOR` ``ln C`` stops and
leaves the stack (:func:`_drop_rows`).  The front doors, which check their arguments, read and write the cache and
run stacks on a pool, are :mod:`poskernels.model.train`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from ..encodings.variants import training_positions
from ..errors import PosKernelsError
from ..tasks.registry import Sampler
from .config import TrainConfig
from .engine.reductions import stack_cross_entropy, stack_params
from .engine.stack import stack_backward, stack_forward
from .head import init_params
from .optim import adam_init, adam_step, flatten
from .trained import Log

__all__ = ["DIVERGED_FACTOR", "DRAW_SEQUENCES"]


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    init_seq, data_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(init_seq), np.random.default_rng(data_seq)


def _position_rng(seed: int) -> np.random.Generator:
    """The stream of a head's random training positions: the seed's third child (the first two, :func:`_streams`,
    are the same whether or not it is drawn), so a seed reproduces its positions bit for bit."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])


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
