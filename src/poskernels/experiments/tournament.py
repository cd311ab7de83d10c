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

    >>> x, y = heldout(64)
    >>> x.shape, y.shape, bool(np.array_equal(x, heldout(64)[0]))
    ((2000, 64), (2000,), True)
    >>> heldout(32, task="recall")[0].shape
    (2000, 32)
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

    >>> defined_at("learned", 32, 32), defined_at("learned", 32, 64), defined_at("rope", 32, 64)
    (True, False, True)
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
    """
    return hit_rate(head_hits(head, n, reading, consecutive=consecutive))


def rescaled_reading(head: TrainedHead, name: str, n: int) -> Reading:
    """The reading of a RoPE head through the map ``name`` at ``kappa = n / L`` (at least 1).

    >>> from poskernels.model.config import preset
    >>> h = TrainedHead(preset("tournament", "rope"), 0, {}, np.zeros(0), "")
    >>> rescaled_reading(h, "pi", 128).inv_freq[:2].round(4).tolist()
    [0.25, 0.0791]
    """
    cfg = head.head
    if not SCHEMES[cfg.scheme].rotary:
        raise PosKernelsError(f"only RoPE heads can be re-read through an extension map; got {cfg.scheme!r}")
    return Reading.through(cfg, name, max(1.0, n / cfg.n_train))


def read_hits(head: TrainedHead, lengths=None, consecutive: bool = False) -> dict:
    """``{str(n): head_hits or None}`` of one head on the test sets (see :func:`head_hits`); ``lengths`` default
    to its task's (:attr:`poskernels.tasks.spec.TaskSpec.lengths`)."""
    lengths = _task_read(head).lengths if lengths is None else lengths
    return {str(n): head_hits(head, n, consecutive=consecutive) for n in lengths}


def read_accuracies(head: TrainedHead, lengths=None, consecutive: bool = False) -> dict:
    """``{str(n): accuracy or None}`` of one head on the test sets (see :func:`head_accuracy`)."""
    return {n: hit_rate(h) for n, h in read_hits(head, lengths, consecutive).items()}


def read_rescaled_hits(head: TrainedHead, lengths=RESCALED_LENGTHS) -> dict:
    """``{reader: {str(n): head_hits}}`` of one RoPE head read through every map of :data:`RESCALED_READERS`."""
    return {
        reader: {str(n): head_hits(head, n, rescaled_reading(head, name, n)) for n in lengths}
        for reader, name in RESCALED_READERS.items()
    }


def read_rescaled(head: TrainedHead, lengths=RESCALED_LENGTHS) -> dict:
    """``{reader: {str(n): accuracy}}`` of one RoPE head read through every map of :data:`RESCALED_READERS`."""
    return {r: {n: hit_rate(h) for n, h in by.items()} for r, by in read_rescaled_hits(head, lengths).items()}


def tournament_table(readings: dict, schemes, seeds, lengths=TEST_LENGTHS) -> dict:
    """``accuracy[scheme][n]`` (mean over seeds), ``stderr[scheme][n]`` (its standard error), ``per_seed``, ``seeds``.

    Parameters
    ----------
    readings : dict
        ``(scheme, seed) -> {"accuracy": {str(n): float or None}, ...}`` (see :func:`read_accuracies`).
    """
    per_seed = {
        s: {str(n): [readings[s, seed]["accuracy"][str(n)] for seed in seeds] for n in lengths} for s in schemes
    }
    mean, stderr = stat_table(per_seed)
    return {"accuracy": mean, "stderr": stderr, "per_seed": per_seed, "seeds": [int(s) for s in seeds]}


def rescaled_table(readings: dict, seeds, lengths=RESCALED_LENGTHS) -> dict:
    """``accuracy[reader][n]``, ``stderr`` and ``per_seed[reader][n]`` for the RoPE heads read through each map.

    ``readings[("rope", seed)]["rescaled"]`` comes from :func:`read_rescaled`.
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

    >>> from poskernels.model.config import preset
    >>> from poskernels.model.head import init_params
    >>> cfg = preset("tournament", "alibi")
    >>> h = TrainedHead(cfg, 0, init_params(cfg.head, np.random.default_rng(0)), np.zeros(0), "")
    >>> offset_kernel(h, [0, 1, 40]).tolist()
    [-0.0, -0.5, -20.0]
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
