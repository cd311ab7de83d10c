"""The length tournament: heads trained at 32 tokens, read at 32, 64, 128 and 256.

Five schemes of the article (``nope``, ``sinusoidal``, ``learned``, ``rope``, ``alibi``) and those beyond
it (``t5``, ``shaw``, Kerple's ``kerple_log`` and ``kerple_power``, ``fire``, the rotary family's ``xpos``,
``p_rope`` and ``partial_rotary``), ten seeds each (a block of :func:`poskernels.seeds.seed_block`, given by the
caller; the article trains three), 1,500 Adam steps at length 32
(:func:`poskernels.model.config.preset`).  Every head is read on the same 2,000 fresh test sequences per
length (:func:`~poskernels.experiments.held_out.heldout`, seeded apart from training); each cell is the mean over
the seeds with its standard error.  Each trained RoPE head is also re-read, with no further training, through PI,
NTK-aware and YaRN at ``kappa = n / 32`` (Definition 5, :data:`poskernels.extension.MAPS`;
:mod:`poskernels.experiments.rescaled`).  This module holds the tournament's design (its schemes, lengths and
jobs), its table, and the learned kernel a relative-bias head reads (:func:`offset_kernel`); reading a head on the
test sets is :mod:`poskernels.experiments.held_out`'s.
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES
from ..errors import PosKernelsError
from ..model.config import TrainConfig, preset
from ..model.head import token_table
from ..model.trained import TrainedHead
from ..seeds import stat_table
from ..tasks.registry import CUE, layout_of

__all__ = [
    "ARTICLE_SCHEMES",
    "EXTRA_SCHEMES",
    "TEST_LENGTHS",
    "offset_kernel",
    "tournament_jobs",
    "tournament_table",
]

#: The article's tournament, in its order, and the schemes beyond it (:attr:`poskernels.encodings.Scheme.in_article`).
ARTICLE_SCHEMES = tuple(name for name, s in SCHEMES.items() if s.in_article)
EXTRA_SCHEMES = tuple(name for name, s in SCHEMES.items() if not s.in_article)
TEST_LENGTHS = CUE.lengths  # the cue task's, 32 to 256; another task reads at its own (TaskSpec.lengths)


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


def tournament_table(readings: dict, schemes, seeds, lengths=TEST_LENGTHS) -> dict:
    """``accuracy[scheme][n]`` (mean over seeds), ``stderr[scheme][n]`` (its standard error), ``per_seed``, ``seeds``.

    Parameters
    ----------
    readings : dict
        ``(scheme, seed) -> {"accuracy": {str(n): float or None}, ...}``
        (see :func:`~poskernels.experiments.held_out.read_accuracies`).
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
