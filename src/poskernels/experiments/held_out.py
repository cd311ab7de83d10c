"""A trained head read on its task's held-out test sets: which sequences it answers right, and its accuracy.

Every head is read on the same fixed test sequences per length (:func:`heldout`: 2,000 from
``SeedSequence([TEST_SEED, n])``, seeded apart from training, the same for every scheme and seed).
:func:`head_hits` says which of them a head answers right (the vector the test-draw error is resampled from,
:mod:`poskernels.experiments.bootstrap`), :func:`head_accuracy` their share; a learned table has no code past its
training length (:func:`defined_at`, the article's dash), and a head trained at randomized positions is read as
Ruoss et al. read it.  :func:`read_hits` and :func:`read_accuracies` read one head at every test length.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encodings import SCHEMES
from ..errors import check_name
from ..model.engine.one_head import query_logits
from ..model.head import PLAIN, Reading
from ..model.random_reading import randomized_hits
from ..model.trained import TrainedHead, check_trained
from ..tasks.registry import CUE, TASKS, get_spec, layout_of
from ..tasks.spec import TEST_COUNT, TEST_SEED

__all__ = [
    "TEST_COUNT",
    "TEST_SEED",
    "defined_at",
    "head_accuracy",
    "head_hits",
    "heldout",
    "hit_rate",
    "read_accuracies",
    "read_hits",
]

# TEST_COUNT, TEST_SEED (poskernels.tasks.spec): 2,000 sequences a length from SeedSequence([TEST_SEED, n])


def heldout(n: int, count: int | None = None, seed: int | None = None, task: str = "cue"):
    """The fixed test sequences of ``task`` at length ``n``: the same for every scheme and seed (read-only arrays).

    ``count`` and ``seed`` default to the task's (:meth:`poskernels.tasks.spec.TaskSpec.heldout`: 2,000 sequences
    from ``SeedSequence([TEST_SEED, n])``).

    Parameters
    ----------
    n : int
        Sequence length.
    count : int, optional
        How many sequences (default the task's, 2,000).
    seed : int, optional
        The test set's seed (default the task's, :data:`TEST_SEED`).
    task : str, optional
        A task of :data:`poskernels.tasks.registry.TASKS` (default ``"cue"``).

    Returns
    -------
    tokens : ndarray of int, shape (count, n)
        The sequences (read-only).
    targets : ndarray of int, shape (count,)
        The answer of each (read-only).

    Raises
    ------
    PosKernelsError
        If ``task`` is not a registered task.

    Examples
    --------
    >>> x, y = heldout(64)
    >>> x.shape, y.shape, bool(np.array_equal(x, heldout(64)[0]))
    ((2000, 64), (2000,), True)
    >>> heldout(32, task="recall")[0].shape
    (2000, 32)
    >>> heldout(32, task="nosuch")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown task 'nosuch'; accepted: cue, recall
    """
    spec = get_spec(task)
    return _heldout(n, spec.test_count if count is None else count, spec.test_seed if seed is None else seed, task)


@lru_cache(maxsize=16)
def _heldout(n: int, count: int, seed: int, task: str) -> tuple[np.ndarray, np.ndarray]:
    tokens, targets = get_spec(task).heldout(n, count, seed)
    tokens.setflags(write=False)
    targets.setflags(write=False)
    return tokens, targets


def defined_at(scheme: str, n_train: int, n: int) -> bool:
    """Whether a head of ``scheme`` trained at length ``L = n_train`` has a code at every position ``0..n-1``.

    Definition 1: a learned table has rows ``0..L-1`` only (its :class:`poskernels.encodings.Scheme` is not
    ``defined_everywhere``), so it reads no sequence longer than ``L``; every other scheme reads any length.

    Parameters
    ----------
    scheme : str
        A key of :data:`poskernels.encodings.SCHEMES`.
    n_train : int
        The training length ``L``.
    n : int
        The length read.

    Returns
    -------
    bool
        True unless the scheme is a table (not ``defined_everywhere``) and ``n > L``.

    Raises
    ------
    PosKernelsError
        If ``scheme`` is not a registered scheme.

    Examples
    --------
    >>> defined_at("learned", 32, 32), defined_at("learned", 32, 64), defined_at("rope", 32, 64)
    (True, False, True)
    >>> defined_at("nope_x", 32, 64)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'nope_x' (did you mean 'nope'?); accepted: alibi, ...
    """
    return SCHEMES[check_name("scheme", scheme, SCHEMES)].defined_everywhere or n <= n_train


def head_hits(head: TrainedHead, n: int, reading: Reading = PLAIN, consecutive: bool = False,
              **change) -> np.ndarray | None:
    """Whether ``head`` answers each of the :func:`heldout` sequences at length ``n`` right, shape ``(2000,)`` bool.

    None where its code is undefined (:func:`defined_at`).  ``change``: ``positions`` or ``score_shift``, as
    :func:`poskernels.model.engine.one_head.query_logits` takes them (the sinusoidal diagnostics' re-reads).  A head
    trained at randomized positions (setting ``random_positions = L_max``) is read as Ruoss et al. read it, each test
    sequence at its own ordered random subset of ``[0, L_max)`` drawn from the test set's seed
    (:func:`poskernels.model.random_reading.randomized_hits`); ``consecutive=True`` reads it at ``0..n-1``.  Its
    mean is :func:`head_accuracy`; the vector itself is what the test-draw error is resampled from
    (:mod:`poskernels.experiments.bootstrap`).

    Parameters
    ----------
    head : TrainedHead
        A trained head (not diverged: :func:`poskernels.model.trained.check_trained`).
    n : int
        The test length.
    reading : Reading, optional
        Frequencies to read a rotary head with (default :data:`poskernels.model.reading.PLAIN`, as trained).
    consecutive : bool, optional
        Read a head trained at randomized positions at ``0..n-1`` (default False).
    **change
        ``positions`` or ``score_shift``, passed to :func:`poskernels.model.engine.one_head.query_logits`.

    Returns
    -------
    ndarray of bool, shape (2000,), or None
        Whether each held-out sequence is answered right; None where the code is undefined at ``n``.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training (it has no accuracy).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> hits = head_hits(head, 64)
    >>> hits.shape, hits.dtype
    ((2000,), dtype('bool'))
    >>> learned = train(TrainConfig(head=HeadConfig(scheme="learned"), steps=1, batch=8), seed=0)
    >>> head_hits(learned, 64) is None  # a 32-row table has no code at 64
    True
    """
    if not defined_at(check_trained(head).head.scheme, head.head.n_train, n):  # a diverged head has no accuracy
        return None
    spec = _task_read(head)
    tokens, targets = heldout(n, task=spec.name)
    L_max = getattr(head.head, "random_positions", 0)
    if L_max and not consecutive and not change:
        return randomized_hits(head.params, head.head, tokens, targets, L_max, spec.test_seed)
    return np.argmax(query_logits(head.params, head.head, tokens, reading=reading, **change), axis=1) == targets


def _task_read(head: TrainedHead):
    """The task whose held-out sets read ``head``: its training task's (the cue task's for a stream outside the
    registry, whose tokens keep its layout, :func:`poskernels.tasks.registry.layout_of`)."""
    name = head.config.task
    layout_of(name)  # a bare stream (no layout) is refused here, naming the task
    return TASKS.get(name, CUE)


def hit_rate(hits: np.ndarray | None) -> float | None:
    """The accuracy of a :func:`head_hits` vector (None stays None), as
    :func:`poskernels.model.engine.one_head.accuracy`.

    Parameters
    ----------
    hits : ndarray of bool or None
        Right (True) or wrong on each sequence.

    Returns
    -------
    float or None
        The share of True; None for None.

    Examples
    --------
    >>> hit_rate(np.array([True, False, True, True])), hit_rate(None)
    (0.75, None)
    """
    return None if hits is None else float(np.mean(hits))


def head_accuracy(head: TrainedHead, n: int, reading: Reading = PLAIN, consecutive: bool = False) -> float | None:
    """Accuracy of ``head`` on :func:`heldout` at length ``n``; None where its code is undefined.

    A learned table has no row past its training length, so a learned head has no reading at
    ``n > L`` (the article's dash), rather than a wrapped or clipped one (:func:`defined_at`).  A head trained at
    randomized positions (setting ``random_positions = L_max``) is read as Ruoss et al. read it, each test sequence
    at its own ordered random subset of ``[0, L_max)`` drawn from the test set's seed
    (:func:`poskernels.model.random_reading.randomized_accuracy`); ``consecutive=True`` reads it at ``0..n-1``.

    Parameters
    ----------
    head : TrainedHead
        A trained head (not diverged: :func:`poskernels.model.trained.check_trained`).
    n : int
        The test length.
    reading : Reading, optional
        Frequencies to read a rotary head with (default :data:`poskernels.model.reading.PLAIN`, as trained).
    consecutive : bool, optional
        Read a head trained at randomized positions at ``0..n-1`` (default False).

    Returns
    -------
    float or None
        The mean of :func:`head_hits`; None where the code is undefined at ``n``.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training (it has no accuracy).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> head_accuracy(head, 64)
    0.1405
    """
    return hit_rate(head_hits(head, n, reading, consecutive=consecutive))


def read_hits(head: TrainedHead, lengths=None, consecutive: bool = False) -> dict:
    """``{str(n): head_hits or None}`` of one head on the test sets (see :func:`head_hits`); ``lengths`` default
    to its task's (:attr:`poskernels.tasks.spec.TaskSpec.lengths`).

    Parameters
    ----------
    head : TrainedHead
        A trained head (not diverged: :func:`poskernels.model.trained.check_trained`).
    lengths : iterable of int, optional
        The test lengths (default the task's: the cue task's 32, 64, 128, 256).
    consecutive : bool, optional
        As for :func:`head_hits`.

    Returns
    -------
    dict of str to (ndarray of bool or None)
        ``str(n) -> head_hits(head, n)``.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training (it has no accuracy).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> {n: h.shape for n, h in read_hits(head, [32, 64]).items()}
    {'32': (2000,), '64': (2000,)}
    """
    lengths = _task_read(head).lengths if lengths is None else lengths
    return {str(n): head_hits(head, n, consecutive=consecutive) for n in lengths}


def read_accuracies(head: TrainedHead, lengths=None, consecutive: bool = False) -> dict:
    """``{str(n): accuracy or None}`` of one head on the test sets (see :func:`head_accuracy`).

    Parameters
    ----------
    head : TrainedHead
        A trained head (not diverged: :func:`poskernels.model.trained.check_trained`).
    lengths : iterable of int, optional
        The test lengths (default the task's: the cue task's 32, 64, 128, 256).
    consecutive : bool, optional
        As for :func:`head_hits`.

    Returns
    -------
    dict of str to (float or None)
        ``str(n) -> head_accuracy(head, n)``.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training (it has no accuracy).

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> read_accuracies(head)
    {'32': 0.1335, '64': 0.1405, '128': 0.1305, '256': 0.13}
    """
    return {n: hit_rate(h) for n, h in read_hits(head, lengths, consecutive).items()}
