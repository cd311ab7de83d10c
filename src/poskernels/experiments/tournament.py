"""The length tournament: heads trained at 32 tokens, read at 32, 64, 128 and 256.

Five schemes of the article (``nope``, ``sinusoidal``, ``learned``, ``rope``, ``alibi``) and those beyond
it (``t5``, ``shaw``, Kerple's ``kerple_log`` and ``kerple_power``, ``fire``, the rotary family's ``xpos``,
``p_rope`` and ``partial_rotary``), ten seeds each (a block of :func:`poskernels.seeds.seed_block`, given by the
caller; the article trains three), 1,500 Adam steps at length 32
(:func:`poskernels.model.config.preset`).  Every head is read on the same 2,000 fresh test sequences per
length (:func:`heldout`, seeded apart from training); each cell is the mean over the seeds with its standard
error.  Each trained RoPE head is also re-read, with no further training, through PI, NTK-aware and YaRN at
``kappa = n / 32`` (Definition 5, :data:`poskernels.extension.MAPS`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encodings import SCHEMES
from ..errors import PosKernelsError, check_name
from ..model.config import TrainConfig, preset
from ..model.engine.one_head import query_logits
from ..model.head import PLAIN, Reading, token_table
from ..model.random_reading import randomized_hits
from ..model.trained import TrainedHead, check_trained
from ..seeds import stat_table
from ..tasks.registry import CUE, TASKS, get_spec, layout_of
from ..tasks.spec import TEST_COUNT, TEST_SEED
from .readers import READERS

__all__ = [
    "ARTICLE_SCHEMES",
    "EXTRA_SCHEMES",
    "RESCALED_READERS",
    "RESCALED_LENGTHS",
    "TEST_COUNT",
    "TEST_LENGTHS",
    "TEST_SEED",
    "defined_at",
    "head_accuracy",
    "head_hits",
    "offset_kernel",
    "hit_rate",
    "read_accuracies",
    "read_hits",
    "read_rescaled",
    "read_rescaled_hits",
    "rescaled_reading",
    "rescaled_table",
    "heldout",
    "tournament_jobs",
    "tournament_table",
]

#: The article's tournament, in its order, and the schemes beyond it (:attr:`poskernels.encodings.Scheme.in_article`).
ARTICLE_SCHEMES = tuple(name for name, s in SCHEMES.items() if s.in_article)
EXTRA_SCHEMES = tuple(name for name, s in SCHEMES.items() if not s.in_article)
TEST_LENGTHS = CUE.lengths  # the cue task's, 32 to 256; another task reads at its own (TaskSpec.lengths)
RESCALED_LENGTHS = (32, 64, 128, 256)  # at 32 kappa = 1: each map reads the head as trained (the lab's curves)
# TEST_COUNT, TEST_SEED (poskernels.tasks.spec): 2,000 sequences a length from SeedSequence([TEST_SEED, n])

#: Re-readings of a trained RoPE head: reader name -> context-extension map (Definition 5), from :data:`READERS`.
RESCALED_READERS = {name: m for name, (scheme, m) in READERS.items() if scheme == "rope"}


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


def tournament_jobs(config: TrainConfig | None = None, extra: bool = True, *, seeds) -> list:
    """Every ``(TrainConfig, seed)`` of the tournament: schemes x ``seeds`` (:func:`~poskernels.seeds.seed_block`).

    Parameters
    ----------
    config : TrainConfig, optional
        The training run each scheme is put into (default ``preset("tournament")``,
        :func:`poskernels.model.config.preset`).
    extra : bool, optional
        Whether the schemes beyond the article (:data:`EXTRA_SCHEMES`) are trained too (default True).
    seeds : iterable of int
        The seeds of every scheme.

    Returns
    -------
    list of (TrainConfig, int)
        ``(config with the scheme, seed)`` for each scheme of :data:`ARTICLE_SCHEMES` (then :data:`EXTRA_SCHEMES`)
        and each seed.

    Examples
    --------
    >>> jobs = tournament_jobs(seeds=range(10))
    >>> len(jobs), sorted({c.head.scheme for c, _ in jobs})[:3]
    (190, ['alibi', 'fire', 'fire_c1'])
    >>> len(tournament_jobs(extra=False, seeds=(0, 1, 2)))
    15
    """
    config = preset("tournament") if config is None else config
    seeds = tuple(seeds)
    schemes = ARTICLE_SCHEMES + (EXTRA_SCHEMES if extra else ())
    return [(config.with_scheme(s), seed) for s in schemes for seed in seeds]


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


def rescaled_reading(head: TrainedHead, name: str, n: int) -> Reading:
    """The reading of a RoPE head through the map ``name`` at ``kappa = n / L`` (at least 1).

    Parameters
    ----------
    head : TrainedHead
        A rotary head.
    name : str
        A map of :data:`poskernels.extension.MAPS` (``"pi"``, ``"ntk"``, ``"yarn"``, ...).
    n : int
        The length read.

    Returns
    -------
    Reading
        :meth:`poskernels.model.reading.Reading.through` the map at ``kappa = max(1, n / n_train)``.

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> h = TrainedHead(preset("tournament", "rope"), 0, {}, np.zeros(0), "")
    >>> rescaled_reading(h, "pi", 128).inv_freq[:2].round(4).tolist()
    [0.25, 0.0791]
    >>> rescaled_reading(TrainedHead(preset("tournament", "alibi"), 0, {}, np.zeros(0), ""), "pi", 128)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: only RoPE heads can be re-read through an extension map; got 'alibi'
    """
    cfg = head.head
    if not SCHEMES[cfg.scheme].rotary:
        raise PosKernelsError(f"only RoPE heads can be re-read through an extension map; got {cfg.scheme!r}")
    return Reading.through(cfg, name, max(1.0, n / cfg.n_train))


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


def read_rescaled_hits(head: TrainedHead, lengths=RESCALED_LENGTHS) -> dict:
    """``{reader: {str(n): head_hits}}`` of one RoPE head read through every map of :data:`RESCALED_READERS`.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    lengths : iterable of int, optional
        The test lengths (default :data:`RESCALED_LENGTHS`).

    Returns
    -------
    dict
        ``reader -> {str(n): ndarray of bool, shape (2000,)}``, each map at ``kappa = n / L``
        (:func:`rescaled_reading`).

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary, or diverged in training.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> {r: sorted(by) for r, by in read_rescaled_hits(head, [64]).items()}
    {'rope': ['64'], 'rope_pi': ['64'], 'rope_ntk': ['64'], 'rope_yarn': ['64']}
    """
    return {
        reader: {str(n): head_hits(head, n, rescaled_reading(head, name, n)) for n in lengths}
        for reader, name in RESCALED_READERS.items()
    }


def read_rescaled(head: TrainedHead, lengths=RESCALED_LENGTHS) -> dict:
    """``{reader: {str(n): accuracy}}`` of one RoPE head read through every map of :data:`RESCALED_READERS`.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    lengths : iterable of int, optional
        The test lengths (default :data:`RESCALED_LENGTHS`).

    Returns
    -------
    dict
        ``reader -> {str(n): accuracy}``, the means of :func:`read_rescaled_hits`.

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary, or diverged in training.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> read_rescaled(head, [64])
    {'rope': {'64': 0.1405}, 'rope_pi': {'64': 0.142}, 'rope_ntk': {'64': 0.1415}, 'rope_yarn': {'64': 0.141}}
    """
    return {r: {n: hit_rate(h) for n, h in by.items()} for r, by in read_rescaled_hits(head, lengths).items()}


def tournament_table(readings: dict, schemes, seeds, lengths=TEST_LENGTHS) -> dict:
    """``accuracy[scheme][n]`` (mean over seeds), ``stderr[scheme][n]`` (its standard error), ``per_seed``, ``seeds``.

    Parameters
    ----------
    readings : dict
        ``(scheme, seed) -> {"accuracy": {str(n): float or None}, ...}`` (see :func:`read_accuracies`).
    schemes : iterable of str
        The rows.
    seeds : sequence of int
        The seeds of each cell.
    lengths : iterable of int, optional
        The columns (default :data:`TEST_LENGTHS`).

    Returns
    -------
    dict
        ``accuracy`` and ``stderr`` (``{scheme: {str(n): float or None}}``, :func:`poskernels.seeds.stat_table`),
        ``per_seed`` (``{scheme: {str(n): [value of each seed]}}``) and ``seeds``.

    Examples
    --------
    >>> readings = {("rope", 0): {"accuracy": {"32": 1.0, "64": 0.5}},
    ...             ("rope", 1): {"accuracy": {"32": 0.8, "64": 0.7}}}
    >>> t = tournament_table(readings, ["rope"], [0, 1], lengths=(32, 64))
    >>> t["accuracy"], t["per_seed"], t["seeds"]
    ({'rope': {'32': 0.9, '64': 0.6}}, {'rope': {'32': [1.0, 0.8], '64': [0.5, 0.7]}}, [0, 1])
    >>> round(t["stderr"]["rope"]["32"], 3)
    0.1
    """
    per_seed = {
        s: {str(n): [readings[s, seed]["accuracy"][str(n)] for seed in seeds] for n in lengths} for s in schemes
    }
    mean, stderr = stat_table(per_seed)
    return {"accuracy": mean, "stderr": stderr, "per_seed": per_seed, "seeds": [int(s) for s in seeds]}


def rescaled_table(readings: dict, seeds, lengths=RESCALED_LENGTHS) -> dict:
    """``accuracy[reader][n]``, ``stderr`` and ``per_seed[reader][n]`` for the RoPE heads read through each map.

    ``readings[("rope", seed)]["rescaled"]`` comes from :func:`read_rescaled`.

    Parameters
    ----------
    readings : dict
        ``("rope", seed) -> {"rescaled": {reader: {str(n): float}}, ...}`` for every seed.
    seeds : sequence of int
        The seeds of each cell.
    lengths : iterable of int, optional
        The columns (default :data:`RESCALED_LENGTHS`).

    Returns
    -------
    dict
        ``accuracy``, ``stderr`` and ``per_seed`` by reader of :data:`RESCALED_READERS` and ``str(n)``, and ``seeds``.

    Examples
    --------
    >>> readings = {("rope", s): {"rescaled": {r: {"64": acc} for r in RESCALED_READERS}}
    ...             for s, acc in ((0, 0.5), (1, 0.7))}
    >>> t = rescaled_table(readings, [0, 1], lengths=(64,))
    >>> t["accuracy"]
    {'rope': {'64': 0.6}, 'rope_pi': {'64': 0.6}, 'rope_ntk': {'64': 0.6}, 'rope_yarn': {'64': 0.6}}
    """
    per_seed = {
        reader: {str(n): [readings["rope", s]["rescaled"][reader][str(n)] for s in seeds] for n in lengths}
        for reader in RESCALED_READERS
    }
    mean, stderr = stat_table(per_seed)
    return {"accuracy": mean, "stderr": stderr, "per_seed": per_seed, "seeds": [int(s) for s in seeds]}


def offset_kernel(head: TrainedHead, r) -> np.ndarray:
    """The bias a relative-bias head adds to a key ``r`` positions behind the query token (its kernel).

    ALiBi's ``-s r``; T5's learned ``beta`` of ``r``'s bucket (a bucket training never reached keeps
    its initial 0); Shaw's ``q a_min(r, K) / tau`` for the cue task's query token; Kerple's and FIRE's learned
    functions.  A bias that reads the query's position (FIRE) is read with the query at the end of the training
    window, ``t = n_train - 1``, or at ``t = r`` for an offset past it.  Same shape as ``r``.

    Parameters
    ----------
    head : TrainedHead
        A head whose scheme adds a bias over offsets (:meth:`poskernels.encodings.Scheme.bias_at`).
    r : array_like
        Offsets behind the query.

    Returns
    -------
    ndarray
        The bias at each offset, shape of ``r``.

    Raises
    ------
    PosKernelsError
        If the head's scheme adds no bias over offsets.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> from poskernels.model.head import init_params
    >>> cfg = preset("tournament", "alibi")
    >>> h = TrainedHead(cfg, 0, init_params(cfg.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> offset_kernel(h, [0, 1, 40]).tolist()
    [-0.0, -0.5, -20.0]
    >>> rope = preset("tournament", "rope")
    >>> offset_kernel(TrainedHead(rope, 0, init_params(rope.head, np.random.default_rng(0)), np.zeros(0), ""), [1])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme 'rope' adds no bias over offsets
    """
    cfg = head.head
    scheme = SCHEMES[cfg.scheme]
    r = np.asarray(r, dtype=float)
    q = token_table(head.params, cfg)[[layout_of(head.config.task).query]] @ head.params["W_Q"]  # (1, d)
    flat = r.reshape(-1)
    bias = scheme.bias_at(head.params, cfg, q, flat, np.maximum(cfg.n_train - 1, flat))
    if bias is None:
        raise PosKernelsError(f"scheme {cfg.scheme!r} adds no bias over offsets")
    return np.asarray(bias, dtype=float).reshape(r.shape)
