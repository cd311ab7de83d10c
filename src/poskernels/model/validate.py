"""Checks at the model's public edges: positions and targets, refused before any arithmetic.

A NaN position turns every logit NaN, and ``argmax`` over NaN picks class 0, so ``accuracy`` would report the
share of targets equal to 0 as a score (0.115 for a head that reads 0.982).  An out-of-range target never equals
an argmax, so it scores 0 silently.  These validators refuse both with :class:`~poskernels.errors.PosKernelsError`.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import PosKernelsError, check_array, check_int, check_positive_int
from .config import TrainConfig
from .embedding import token_table

__all__ = [
    "check_jobs",
    "check_params",
    "check_positions",
    "check_sequence",
    "check_stack_targets",
    "check_targets",
    "check_train_options",
]


def check_positions(positions, n: int) -> np.ndarray:
    """Positions of ``n`` columns as finite float64, shape ``(n,)``; NaN and infinities refused.

    Parameters
    ----------
    positions : array_like
        One position per column.
    n : int
        Columns of the tokens.

    Returns
    -------
    ndarray of float64, shape (n,)
        The positions.

    Raises
    ------
    PosKernelsError
        If a position is not finite, or the shape is not ``(n,)``.

    Examples
    --------
    >>> check_positions([0, 1, 2.5], 3).tolist()
    [0.0, 1.0, 2.5]
    >>> check_positions([0, float("nan"), 2], 3)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: positions must be finite numbers; got [0, nan, 2] (nan at index 1)
    """
    pos = check_array("positions", positions)
    if pos.shape != (n,):
        raise PosKernelsError(f"positions must have shape ({n},) to match the tokens; got {pos.shape}")
    return pos


def check_targets(targets, n_classes: int, batch: int | None = None) -> np.ndarray:
    """Targets as int64 class ids in ``[0, n_classes)``, one per sequence (shape ``(batch,)`` when given).

    Parameters
    ----------
    targets : array_like of int
        Class ids.
    n_classes : int
        Classes of the head.
    batch : int, optional
        Sequences the targets must match.

    Returns
    -------
    ndarray of int64, shape (batch,)
        The targets.

    Raises
    ------
    PosKernelsError
        If a target is not a whole number in ``[0, n_classes)``, or the shape is wrong.

    Examples
    --------
    >>> check_targets([0, 7, 3], 8).tolist()
    [0, 7, 3]
    >>> check_targets([0, 8], 8)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: targets must be class ids in [0, 7]; got 8 at index 1
    """
    n_classes = check_positive_int("n_classes", n_classes)
    t = check_array("targets", targets, ndim=1, integer=True)  # (B,)
    if batch is not None and t.shape != (batch,):
        raise PosKernelsError(f"targets must have shape ({batch},), one per sequence; got {t.shape}")
    bad = np.flatnonzero((t < 0) | (t >= n_classes))
    if bad.size:
        raise PosKernelsError(f"targets must be class ids in [0, {n_classes - 1}]; got {t[bad[0]]} at index {bad[0]}")
    return t


def check_stack_targets(targets, shape: tuple[int, int], n_classes: int) -> np.ndarray:
    """Targets of a stack's cross-entropy: integer class ids in ``[0, n_classes)`` of shape ``(M, B)``.

    A target out of range would index another row's logits (the flat index ``row C + target``): a wrong loss and
    gradient, silently.  Integer arrays are checked by their extremes (cheap enough for every training step).

    Parameters
    ----------
    targets : array_like of int
        Class ids, one per model and sequence.
    shape : tuple of (int, int)
        ``(M, B)``.
    n_classes : int
        Classes of the heads.

    Returns
    -------
    ndarray of int, shape (M, B)
        The targets (an integer array as given).

    Raises
    ------
    PosKernelsError
        If a target is not a whole number in ``[0, n_classes)``, or the shape is wrong.

    Examples
    --------
    >>> check_stack_targets([[0, 3]], (1, 2), 4).tolist()
    [[0, 3]]
    >>> check_stack_targets([[0, 4]], (1, 2), 4)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: targets must be class ids in [0, 3]; got 4 at index (0, 1)
    """
    n_classes = check_positive_int("n_classes", n_classes)
    if not isinstance(shape, tuple) or len(shape) != 2 or not all(isinstance(k, int) and k >= 0 for k in shape):
        raise PosKernelsError(f"shape must be (models, batch), two whole numbers; got {shape!r:.80}")
    t = np.asarray(targets)
    if t.dtype.kind not in "iu":
        t = check_array("targets", t, integer=True)  # whole floats pass, 0.5, NaN, bools and strings do not
    if t.shape != shape:
        raise PosKernelsError(f"targets must have shape {tuple(shape)}, one per sequence; got {t.shape}")
    if t.size and (t.min() < 0 or t.max() >= n_classes):
        at = tuple(int(i) for i in np.argwhere((t < 0) | (t >= n_classes))[0])
        raise PosKernelsError(f"targets must be class ids in [0, {n_classes - 1}]; got {t[at]} at index {at}")
    return t


def check_params(params, cfg) -> dict:
    """One head's weights, checked against ``cfg`` before a reader multiplies them: the four maps' shapes and the
    embedding's token table ``(V, d)``; a wrong shape or a missing array is refused by name, not met as a
    broadcasting error inside a product.

    Parameters
    ----------
    params : dict
        The head's arrays (:func:`~poskernels.model.head.init_params`).
    cfg : HeadConfig
        The head they are checked against.

    Returns
    -------
    dict
        ``params`` itself.

    Raises
    ------
    PosKernelsError
        If ``params`` is not a dict, or an array is missing or of the wrong shape or kind.

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> from poskernels.model.head import init_params
    >>> cfg = HeadConfig()
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> check_params(p, cfg) is p
    True
    >>> check_params({**p, "W_O": p["W_O"][:, :3]}, cfg)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: params['W_O'] must be a float array of shape (16, 8) ...; got float64 ...
    """
    if not isinstance(params, dict):
        raise PosKernelsError(f"params must be a dict of arrays (init_params); got {type(params).__name__}")
    d, C, V = cfg.d, cfg.n_classes, cfg.vocab
    for name, shape in (("W_Q", (d, d)), ("W_K", (d, d)), ("W_V", (d, d)), ("W_O", (d, C))):
        a = params.get(name)
        if not isinstance(a, np.ndarray) or a.dtype.kind != "f" or a.shape != shape:
            got = f"{a.dtype} of shape {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
            raise PosKernelsError(
                f"params[{name!r}] must be a float array of shape {shape} for this head (d = {d}, {C} classes); "
                f"got {got}"
            )
    try:
        table = np.asarray(token_table(params, cfg))
    except (KeyError, IndexError, ValueError, TypeError) as err:
        raise PosKernelsError(
            f"params do not hold a {cfg.embedding!r} embedding of width {d} ({type(err).__name__}: {str(err)[:80]})"
        ) from None
    if table.shape != (V, d) or table.dtype.kind != "f":
        raise PosKernelsError(
            f"params' {cfg.embedding!r} embedding gives a token table of {table.dtype} {table.shape}; "
            f"this head needs float ({V}, {d})"
        )
    return params


def check_sequence(name: str, value) -> list:
    """``value`` as a list, if it is an iterable other than a string or a mapping, else raise naming ``name``.

    Parameters
    ----------
    name : str
        Its name in the message.
    value : iterable
        The sequence.

    Returns
    -------
    list
        Its items.

    Raises
    ------
    PosKernelsError
        If ``value`` is a string, bytes, a dict or not iterable.

    Examples
    --------
    >>> check_sequence("seeds", range(3))
    [0, 1, 2]
    >>> check_sequence("seeds", "012")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: seeds must be a sequence; got str '012'
    """
    if isinstance(value, str | bytes | dict) or not hasattr(value, "__iter__"):
        raise PosKernelsError(f"{name} must be a sequence; got {type(value).__name__} {value!r:.80}")
    return list(value)


def check_jobs(jobs) -> list[tuple[TrainConfig, int]]:
    """The trainer's jobs: ``(TrainConfig, seed)`` pairs, each checked, else an error naming the entry.

    Parameters
    ----------
    jobs : sequence
        ``(TrainConfig, seed)`` pairs.

    Returns
    -------
    list of (TrainConfig, int)
        The pairs, seeds as ints.

    Raises
    ------
    PosKernelsError
        If an entry is not such a pair, or its seed is not an integer >= 0.

    Examples
    --------
    >>> check_jobs([(TrainConfig(), 0)])[0][1]
    0
    >>> check_jobs([("cue", 0)])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: jobs[0] must be a (TrainConfig, seed) pair; got (str, int)
    """
    out = []
    for i, job in enumerate(check_sequence("jobs", jobs)):
        if not isinstance(job, tuple | list) or len(job) != 2 or not isinstance(job[0], TrainConfig):
            shown = f"({', '.join(type(j).__name__ for j in job)})" if isinstance(job, tuple | list) else repr(job)
            raise PosKernelsError(f"jobs[{i}] must be a (TrainConfig, seed) pair; got {shown:.120}")
        out.append((job[0], check_int("seed", job[1], 0, None)))
    return out


def check_train_options(cache_dir, sampler, log):
    """The trainer's optional arguments: a folder path (or None), a callable sampler and log (or None).

    Parameters
    ----------
    cache_dir : str, PathLike or None
        The cache of trained heads.
    sampler, log : callable or None
        The training stream and the log function.

    Returns
    -------
    tuple
        ``(cache_dir, sampler, log)`` as given.

    Raises
    ------
    PosKernelsError
        If ``cache_dir`` is not a path or None, or ``sampler`` or ``log`` is not callable or None.

    Examples
    --------
    >>> check_train_options(None, None, print)[2] is print
    True
    """
    if cache_dir is not None and not isinstance(cache_dir, str | os.PathLike):
        raise PosKernelsError(f"cache_dir must be a folder path (str or Path) or None; got {type(cache_dir).__name__}")
    for name, fn in (("sampler", sampler), ("log", log)):
        if fn is not None and not callable(fn):
            raise PosKernelsError(f"{name} must be a function or None; got {type(fn).__name__} {fn!r:.60}")
    return cache_dir, sampler, log
