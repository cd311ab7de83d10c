"""The training loop: a stack of heads stepped together by Adam, each on its own fresh batches.

:func:`_fit_bundle` is the only trainer: the seeds of one configuration advance together as a stack
(:class:`_Stack`), one forward/backward/Adam call per step for all of them, a single head is the stack of one, and
the stacks of one training stream (:func:`stream_signature`) step in lockstep on one draw of each seed's batches
(:func:`_fit` is the bundle of one stack).  Each seed splits, through
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
from .engine.reductions import cross_entropy_core, stack_params
from .engine.stack import stack_backward, stack_forward
from .head import init_params
from .optim import adam_init, adam_step, flatten
from .trained import Log

__all__ = ["DIVERGED_FACTOR", "DRAW_SEQUENCES", "stream_signature"]


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


def _draw(config: TrainConfig, heads, sampler: Sampler, rngs, count: int):
    """``count`` steps' batches for every model, each from its own seed's stream, checked against each of ``heads``
    (the head configurations that read them).

    Returns tokens ``(count, M, B, n)`` and targets ``(count, M, B)``: step ``k`` reads one
    contiguous block per array.
    """
    head, B = config.head, config.batch
    tokens = targets = None
    for i, rng in enumerate(rngs):
        x, y = sampler(rng, count * B, head.n_train)
        for checked in heads:
            _check_stream(checked, x, y, count * B)
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


def stream_signature(config: TrainConfig) -> tuple:
    """What a configuration's training stream depends on besides the seed and the sampler.

    The sampler draws ``steps`` batches of ``batch`` sequences of ``n_train`` tokens, :data:`DRAW_SEQUENCES` a call;
    configurations with one signature, on one sampler, see the same sequences seed by seed, so they can train in
    lockstep on one draw (:func:`_fit_bundle`).

    Parameters
    ----------
    config : TrainConfig
        A training run.

    Returns
    -------
    tuple
        ``(task, batch, n_train, steps)``.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> stream_signature(preset("tournament", "rope")) == stream_signature(preset("tournament", "alibi"))
    True
    >>> stream_signature(preset("quick", "rope")) == stream_signature(preset("tournament", "rope"))
    False
    """
    return (config.task, config.batch, config.head.n_train, config.steps)


class _Stack:
    """The heads of one configuration for ``seeds``, stepped together: weights, Adam's state, the losses, which
    seeds are still live (a diverged head stops and leaves the stack), and each live head's position stream."""

    def __init__(self, config: TrainConfig, seeds: Sequence[int], log: Log | None, progress_every: int):
        head = config.head
        self.config, self.seeds, self.log, self.progress_every = config, list(seeds), log, progress_every
        self.params = stack_params(init_params(head, _streams(seed)[0]) for seed in seeds)
        # randomized positions (the head's setting random_positions = L_max): each head draws its own ordered subset
        # of [0, L_max) every step, shared by the step's batch as Ruoss et al. draw it; otherwise 0..n-1
        self.pos_rngs = [_position_rng(seed) for seed in seeds] if getattr(head, "random_positions", 0) else None
        self.flat, self.views = flatten(self.params)  # parameter-major: each name's (M, ...) block is contiguous
        self.state = adam_init(self.flat.size)
        self.losses = np.full((len(self.seeds), config.steps), np.nan)
        self.live = list(range(len(self.seeds)))  # the stack's rows: which of the seeds each still is
        self.stopped: dict[int, dict] = {}  # index into seeds -> its weights when it stopped
        self.diverged: dict[int, int] = {}
        self.bound = DIVERGED_FACTOR * math.log(head.n_classes) if head.n_classes > 1 else DIVERGED_FACTOR
        self.start = time.perf_counter()

    def step(self, step: int, tokens: np.ndarray, targets: np.ndarray) -> None:
        """Adam step ``step`` of the live heads on this step's batches ``tokens (M, B, n)``, ``targets (M, B)`` of
        every seed of the stack (the rows of the stopped ones are skipped)."""
        if not self.live:
            return
        config, head, views, live = self.config, self.config.head, self.views, self.live
        if len(live) < len(self.seeds):
            tokens, targets = tokens[live], targets[live]
        positions = None  # (M, n) with randomized positions: each head its own, one call for the stack all the same
        if self.pos_rngs is not None:
            positions = np.stack([training_positions(head, r, head.n_train) for r in self.pos_rngs])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a diverging head: caught just below
            logits, cache = stack_forward(views, head, tokens, positions, validate=False)
            loss, dlogits = cross_entropy_core(logits, targets)  # the draw checked the targets
        self.losses[live, step] = loss
        bad = ~(loss <= self.bound)  # NaN compares False: not finite or too large
        if bad.any():
            if not self._stop(step, loss, bad):
                return
            keep = ~bad
            tokens, targets = tokens[keep], targets[keep]
            if positions is not None:
                positions = positions[keep]
            logits, cache = stack_forward(self.views, head, tokens, positions, validate=False)  # fewer rows
            loss, dlogits = cross_entropy_core(logits, targets)  # the draw checked the targets
        grads = stack_backward(self.views, head, cache, dlogits)
        g = np.concatenate([grads[name].ravel() for name in self.views])  # the layout of flat
        adam_step(self.flat, g, self.state, config.lr, config.beta1, config.beta2, config.eps)
        every = self.progress_every
        if self.log is not None and every and ((step + 1) % every == 0 or step + 1 == config.steps):
            tail = np.nanmean(self.losses[self.live, max(0, step - 49) : step + 1])
            self.log(
                f"[train] {config.task}/{head.scheme} seeds {_seed_list(self.seeds)}: step {step + 1}/{config.steps}, "
                f"loss {tail:.4f} ({time.perf_counter() - self.start:.1f} s)"
            )

    def _stop(self, step: int, loss: np.ndarray, bad: np.ndarray) -> bool:
        """Stop the rows of ``bad`` (their weights as they are, their later losses NaN); False when none is left."""
        for row in np.flatnonzero(bad):
            i = self.live[row]
            self.stopped[i], self.diverged[i] = {name: v[row].copy() for name, v in self.views.items()}, step + 1
            if self.log is not None:
                self.log(f"[train] {self.config.task}/{self.config.head.scheme} seed {self.seeds[i]}: diverged at "
                         f"step {step + 1} (loss {loss[row]:.4g}, past {self.bound:.4g}); stopped")  # fmt: skip
        if bad.all():
            self.live = []
            return False
        keep = ~bad
        self.flat, self.views, self.state = _drop_rows(self.views, self.state, keep)
        self.live = [i for i, ok in zip(self.live, keep) if ok]
        if self.pos_rngs is not None:
            self.pos_rngs = [r for r, ok in zip(self.pos_rngs, keep) if ok]
        return True

    def result(self):
        """``(params of each seed, losses (M, steps), {index into seeds: step it diverged at})``."""
        for row, i in enumerate(self.live):
            self.stopped[i] = {name: v[row].copy() for name, v in self.views.items()}
        return [self.stopped[i] for i in range(len(self.seeds))], self.losses, self.diverged


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
    return _fit_bundle([config], seeds, sampler, log, progress_every)[0]


def _fit_bundle(configs: Sequence[TrainConfig], seeds: Sequence[int], sampler: Sampler, log: Log | None,
                progress_every: int) -> list:  # fmt: skip
    """Train the stacks of ``configs`` (one :func:`stream_signature`) for ``seeds`` in lockstep on one draw.

    Heads of different schemes with the same seed see the same sequences, so each seed's batches are drawn once for
    every stack of the bundle, where each stack alone would draw them again; the stacks step one after the other on
    each step's batches, each with its own weights, Adam state and stopped heads, so every head has the bits it has
    in a stack alone (:func:`_fit`, the bundle of one).

    Returns
    -------
    list of (params, losses, diverged)
        :func:`_fit`'s result for each configuration, in order.
    """
    if len({stream_signature(c) for c in configs}) != 1:
        raise PosKernelsError(f"a bundle's configurations must share one training stream (task, batch, n_train, "
                              f"steps); got {sorted({stream_signature(c) for c in configs})}")  # fmt: skip
    stacks = [_Stack(config, seeds, log, progress_every) for config in configs]
    first, data_rngs = configs[0], [_streams(seed)[1] for seed in seeds]
    per_draw = max(1, DRAW_SEQUENCES // first.batch)  # steps per call of the sampler
    heads = list({(c.head.vocab, c.head.n_classes, c.head.n_train): c.head for c in configs}.values())
    for step in range(first.steps):
        if not any(stack.live for stack in stacks):
            break
        k = step % per_draw
        if k == 0:  # one call per seed draws the fresh batches of the next steps (one per step, never reused)
            all_tokens, all_targets = _draw(first, heads, sampler, data_rngs, min(per_draw, first.steps - step))
        for stack in stacks:
            stack.step(step, all_tokens[k], all_targets[k])
    return [stack.result() for stack in stacks]


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
