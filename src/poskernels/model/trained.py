"""A trained head: its record, where the cache keeps it, how it is loaded back, its accuracy.

A head is identified by its full configuration and seed: :func:`head_key` is the cache key of the pair, known
before training, and :func:`head_path` the ``.npz`` file under ``cache_dir/heads`` (:mod:`poskernels.model.cache`
writes and verifies it).  :func:`load_head` trusts a file only when its stored description, code version and
arrays are this head's; anything else is reported, removed and retrained.  The trainer is
:mod:`poskernels.model.train`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import PosKernelsError, check_int
from .cache import CODE_VERSION, cache_key
from .cache_arrays import load_arrays, save_arrays
from .cache_entry import CacheError, discard
from .config import TrainConfig
from .engine.one_head import accuracy
from .head import PLAIN, Reading, init_params
from .scheme_identity import scheme_digest

__all__ = ["TrainedHead", "check_trained", "evaluate", "head_key", "head_path", "load_head"]

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
    diverged : int or None
        The step ``k`` (1-based) whose loss was not finite or past the trainer's bound: training stopped there,
        ``params`` are the weights at that step and the losses after it NaN.  None for a head trained to the end.
        A diverged head is a result (cached as such, so it is not retrained), but it has no accuracy.
    """

    config: TrainConfig
    seed: int
    params: dict
    losses: np.ndarray
    key: str
    diverged: int | None = None

    @property
    def head(self):
        """The :class:`~poskernels.model.config.HeadConfig`."""
        return self.config.head


def _description(config: TrainConfig, seed: int) -> dict:
    out = {"config": config.to_dict(), "seed": int(seed)}
    digest = scheme_digest(config.head.scheme)  # an outside scheme's heads are keyed by its source too
    return out if digest is None else {**out, "scheme_source": digest}


def head_key(config: TrainConfig, seed: int) -> str:
    """The cache key of ``(config, seed)``: :attr:`TrainedHead.key` of the head it trains, known without training.

    Parameters
    ----------
    config : TrainConfig
        What is trained.
    seed : int
        The seed, >= 0.

    Returns
    -------
    str
        The key (an outside scheme's digest is part of it).

    Raises
    ------
    PosKernelsError
        If ``seed`` is not an integer >= 0.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> from poskernels.model.train import train
    >>> head_key(preset("quick", "nope"), 0) == train(preset("quick", "nope"), 0).key
    True
    """
    return cache_key(_description(config, _check_seed(seed)))


def head_path(cache_dir: Path, config: TrainConfig, seed: int) -> Path:
    """Where ``(config, seed)`` is cached: ``cache_dir/heads/<task>-<scheme>-s<seed>-<key>.npz``.

    Parameters
    ----------
    cache_dir : Path
        The cache of trained heads.
    config : TrainConfig
        What is trained.
    seed : int
        The seed.

    Returns
    -------
    Path
        The file (which may not exist).

    Examples
    --------
    >>> head_path(Path("c"), TrainConfig(), 2).name.startswith("cue-nope-s2-")
    True
    """
    key = cache_key(_description(config, seed))
    return Path(cache_dir) / "heads" / f"{config.task}-{config.head.scheme}-s{seed}-{key}.npz"


def _check_seed(seed) -> int:
    return check_int("seed", seed, 0, None)  # a bool, a float, a string or a negative seed refused, quoted


def load_head(cache_dir: Path, config: TrainConfig, seed: int, log: Log | None = None) -> TrainedHead | None:
    """The cached head of ``(config, seed)``, or None if absent or untrustworthy (reported, then removed).

    Parameters
    ----------
    cache_dir : Path
        The cache of trained heads.
    config : TrainConfig
        What was trained.
    seed : int
        The seed, >= 0.
    log : callable, optional
        ``log(message)``, told when a cached file is discarded (a :class:`RuntimeWarning` is raised too).

    Returns
    -------
    TrainedHead or None
        The head as trained, or None (train it then).

    Raises
    ------
    PosKernelsError
        If ``seed`` is not an integer >= 0.

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.model.config import preset
    >>> from poskernels.model.train import train
    >>> cache = Path(tempfile.mkdtemp())
    >>> load_head(cache, preset("quick", "nope"), 0) is None  # nothing trained yet
    True
    >>> h = train(preset("quick", "nope"), 0, cache_dir=cache)
    >>> load_head(cache, preset("quick", "nope"), 0).key == h.key
    True
    """
    seed = _check_seed(seed)
    path = head_path(cache_dir, config, seed)
    description = _description(config, seed)
    try:
        arrays, meta = load_arrays(path, expect={**description, "code": CODE_VERSION})
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
        discard(path)
        return None
    diverged = meta.get("diverged")
    if diverged is not None and (not isinstance(diverged, int) or isinstance(diverged, bool) or diverged < 1):
        message = f"[cache] discarding {path.name}: its diverged step {diverged!r} is not a step; retraining"
        if log is not None:
            log(message)
        discard(path)
        return None
    return TrainedHead(config, seed, arrays, losses, cache_key(description), diverged)


def _save(cache_dir, head: TrainedHead) -> None:
    description = _description(head.config, head.seed)
    path = head_path(cache_dir, head.config, head.seed)
    meta = {**description, "code": CODE_VERSION, **({"diverged": head.diverged} if head.diverged else {})}
    save_arrays(path, {**head.params, "__losses__": head.losses}, meta)


def evaluate(head: TrainedHead, tokens, targets, positions=None, reading: Reading = PLAIN) -> float:
    """Accuracy of a trained head read at the last position (see :func:`poskernels.model.engine.one_head.accuracy`).

    Parameters
    ----------
    head : TrainedHead
        A head that trained to the end.
    tokens : array_like of int, shape (B, n)
        Sequences.
    targets : array_like of int, shape (B,)
        Their targets.
    positions : array_like, shape (n,), optional
        Their positions; ``0..n-1`` by default.
    reading : Reading
        How the head is read; :data:`~poskernels.model.reading.PLAIN` by default.

    Returns
    -------
    float
        The share of sequences whose argmax logit is the target.

    Raises
    ------
    PosKernelsError
        If the head diverged, or the tokens, targets or positions are refused.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> from poskernels.model.train import train
    >>> from poskernels.tasks.cue import cue_batch
    >>> h = train(preset("quick", "nope"), seed=0)
    >>> 0.3 < evaluate(h, *cue_batch(np.random.default_rng(1), 400, 32)) < 0.8
    True
    """
    check_trained(head)
    return accuracy(head.params, head.head, tokens, targets, positions, reading)


def check_trained(head: TrainedHead) -> TrainedHead:
    """``head`` if it trained to the end; a diverged head is refused (its weights give no accuracy, only NaN).

    Parameters
    ----------
    head : TrainedHead
        The head.

    Returns
    -------
    TrainedHead
        ``head`` itself.

    Raises
    ------
    PosKernelsError
        If ``head`` is not a :class:`TrainedHead`, or diverged.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> h = TrainedHead(preset("quick"), 0, {}, np.zeros(3), "", diverged=2)
    >>> check_trained(h)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the nope head of seed 0 diverged at step 2 (of 200; lr 0.01): it has no accuracy
    """
    if not isinstance(head, TrainedHead):
        raise PosKernelsError(f"head must be a TrainedHead; got {type(head).__name__}")
    if head.diverged is not None:
        raise PosKernelsError(
            f"the {head.head.scheme} head of seed {head.seed} diverged at step {head.diverged} "
            f"(of {head.config.steps}; lr {head.config.lr:g}): it has no accuracy"
        )
    return head
