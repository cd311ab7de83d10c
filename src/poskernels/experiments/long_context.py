"""Far past the window: the tournament's heads read at 32 to 10^5 tokens, in bounded memory.

Every head is read by the streaming reader (:func:`poskernels.model.engine.stream.stream_many`), ALiBi back to its
certified cut (Theorem 3 (ii), dropped weight ``<= EPS``, :mod:`poskernels.experiments.long_cuts`), a Kerple head
back to the cut of its own tail bound where it has one (its scheme's ``tail_bound``), the RoPE heads also re-read
through PI, NTK-aware and YaRN at ``kappa = n / 32`` (the tournament's
:func:`~poskernels.experiments.rescaled.rescaled_reading`).

* **Length**: the cue task at each of :data:`LENGTHS`.
* **Distance**: the needle task at each offset ``r`` of :data:`OFFSETS`.  For each ALiBi head, its content width
  ``W`` and horizon ``W / s`` (Theorem 3 (iii)), and its mean accuracy at the offsets inside half the horizon and
  beyond twice it (:func:`~poskernels.experiments.long_cuts.horizon_rows`).

Each point reads the same fresh sequences for every head (:func:`~poskernels.experiments.long_sets.sequences`,
seeded apart from training and from the tournament's test sets); a reader's figure is the mean over the seeds, with
its standard error and the per-seed values.  The result is cached as JSON under ``cache_dir/results`` keyed by
every head and setting.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..encodings import SCHEMES
from ..errors import PosKernelsError, check_int, check_name, check_positive_int
from ..model.cache import cache_key, cached_or_build
from ..model.config import TrainConfig, preset
from ..model.engine.stream import stream_many
from ..model.head import PLAIN
from ..model.train import head_path, train_many
from ..model.trained import check_trained
from ..pool import available_cpus, run_jobs
from ..seeds import stat_table
from ..tasks.validate import MAX_CUE_TOKENS
from .held_out import defined_at
from .long_cuts import EPS, horizon_rows, tail_cut_rows
from .long_sets import COUNT, TEST_SEED, _check_point, sequences
from .readers import READERS, all_readers
from .rescaled import rescaled_reading
from .tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES

__all__ = [
    "LENGTHS",
    "LONG_READERS",
    "OFFSETS",
    "read_head",
    "read_point",
    "run_long_context",
]

LENGTHS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 100_000)
OFFSETS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 1024, 4096, 16384, 100_000)
LONG_VERSION = "long-1"  # bump when the evaluation changes

#: Readers: every one of :data:`~poskernels.experiments.readers.READERS` (each scheme, and RoPE re-read by each map).
LONG_READERS = READERS


def _check_grid(lengths, offsets, count) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The grids of :func:`run_long_context`, each point checked as
    :func:`~poskernels.experiments.long_sets.sequences` would, before any training."""
    out = []
    for name, task, values in (("lengths", "length", lengths), ("offsets", "distance", offsets)):
        if isinstance(values, str | bytes | dict) or not isinstance(values, Sequence):
            raise PosKernelsError(f"{name} must be a sequence of whole numbers; got {type(values).__name__}")
        out.append(tuple(_check_point(task, x, count, TEST_SEED)[1] for x in values))
    if not out[0] and not out[1]:
        raise PosKernelsError("lengths and offsets are both empty: nothing to read")
    return out[0], out[1], check_int("count (sequences a point)", count, 1, MAX_CUE_TOKENS)


def _check_seeds(seeds) -> tuple[int, ...]:
    """Seeds given to :func:`run_long_context`: distinct non-negative whole numbers, at least one."""
    if isinstance(seeds, str | bytes | dict) or not hasattr(seeds, "__iter__"):
        raise PosKernelsError(f"seeds must be an iterable of whole numbers >= 0; got {type(seeds).__name__}")
    out = tuple(check_int("a seed", s, 0, 2**63 - 1) for s in seeds)
    if not out or len(set(out)) != len(out):
        raise PosKernelsError(f"seeds must be distinct and at least one; got {list(out)!r}")
    return out


def _chunk(B: int) -> int:
    """Key positions a step for ``B`` sequences: about ``2^19`` keys (the sparse product's tables stay in cache)."""
    return max(64, min(4096, (1 << 19) // B))


def read_point(heads: dict, task: str, x: int, count: int = COUNT) -> dict:
    """Accuracy of every reader and seed at one point: ``{reader: [accuracy per seed] or None}``.

    ``heads`` maps a scheme to its trained heads (:class:`~poskernels.model.train.TrainedHead`, in seed order).
    A reader whose code is undefined at the point's length (the learned table past 32) gets None.

    Parameters
    ----------
    heads : dict of str to list of TrainedHead
        The heads of each scheme, in seed order.
    task : {"length", "distance"}
        The point's task (:func:`~poskernels.experiments.long_sets.sequences`).
    x : int
        Its length or offset.
    count : int, optional
        Sequences read (default :data:`~poskernels.experiments.long_sets.COUNT`).

    Returns
    -------
    dict of str to (list of float or None)
        Every reader of :data:`LONG_READERS` (and of schemes registered since): the accuracy of each head of its
        scheme, or None where it has no head or no code at the point.

    Raises
    ------
    PosKernelsError
        If a head diverged in training, or the point is out of range
        (:func:`~poskernels.experiments.long_sets.sequences`).

    Examples
    --------
    >>> from poskernels.model import HeadConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> learned = train(TrainConfig(head=HeadConfig(scheme="learned"), steps=1, batch=8), seed=0)
    >>> p = read_point({"rope": [head], "learned": [learned]}, "length", 64, count=20)
    >>> {r: v for r, v in p.items() if v is not None}, p["learned"]
    ({'rope': [0.1], 'rope_pi': [0.1], 'rope_ntk': [0.1], 'rope_yarn': [0.1]}, None)
    """
    for hs in heads.values():
        for h in hs:
            check_trained(h)  # a diverged head's NaN logits would score as class 0
    tokens, targets = sequences(task, x, count)
    n = tokens.shape[1]
    triples, owners = [], []
    readers = {**LONG_READERS, **all_readers()}  # a scheme registered from outside is read too
    for reader, (scheme, mapname) in readers.items():
        if scheme not in heads or not defined_at(scheme, heads[scheme][0].head.n_train, n):
            continue
        for h in heads[scheme]:
            reading = PLAIN if mapname == "none" else rescaled_reading(h, mapname, n)
            triples.append((h.params, h.head, reading))
            owners.append(reader)
    logits = stream_many(triples, tokens, chunk=_chunk(tokens.shape[0]), eps=EPS)
    out: dict = {r: None for r in readers}
    for reader, lg in zip(owners, logits):
        out[reader] = (out[reader] or []) + [float(np.mean(np.argmax(lg, axis=1) == targets))]
    return out


def read_head(head, reader_map: str | None, task: str, x: int, count: int = COUNT, seed: int = TEST_SEED):
    """Accuracy of one head at one point (None where its code is undefined): the sweep's long reading.

    ``reader_map`` is an extension map name for a RoPE head (None or ``"none"``: as trained).

    Parameters
    ----------
    head : TrainedHead
        A trained head (not diverged).
    reader_map : str or None
        A map of :data:`poskernels.extension.MAPS` to read a RoPE head through at ``kappa = n / L``; None or
        ``"none"`` reads it as trained.
    task : {"length", "distance"}
        The point's task (:func:`~poskernels.experiments.long_sets.sequences`).
    x : int
        Its length or offset.
    count : int, optional
        Sequences read (default :data:`~poskernels.experiments.long_sets.COUNT`).
    seed : int, optional
        The test stream's seed (default :data:`~poskernels.experiments.long_sets.TEST_SEED`).

    Returns
    -------
    float or None
        The share of sequences answered right; None where the head's code is undefined at the point's length.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training, or the point is out of range
        (:func:`~poskernels.experiments.long_sets.sequences`).

    Examples
    --------
    >>> from poskernels.model import HeadConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> read_head(head, None, "length", 64, count=20), read_head(head, "pi", "length", 64, count=20)
    (0.1, 0.1)
    """
    check_trained(head)  # a diverged head's NaN logits would score as class 0
    tokens, targets = sequences(task, x, count, seed, head.head.n_train)  # the needle at the head's own length
    n = tokens.shape[1]
    if not defined_at(head.head.scheme, head.head.n_train, n):
        return None
    reading = PLAIN if reader_map in (None, "none") else rescaled_reading(head, reader_map, n)
    logits = stream_many([(head.params, head.head, reading)], tokens, chunk=_chunk(tokens.shape[0]), eps=EPS)[0]
    return float(np.mean(np.argmax(logits, axis=1) == targets))


def _point_job(args):
    by_scheme, task, x, count = args  # the heads travel with the job (about 1.5 MB): no reload per point
    start = time.perf_counter()
    return read_point(by_scheme, task, x, count), time.perf_counter() - start


def _stats(points: dict) -> dict:
    """``accuracy[reader][x]`` (mean), ``stderr`` (standard error of the mean over seeds), ``per_seed``."""
    readers = next(iter(points.values()), LONG_READERS)  # every point names the same readers (None: not read)
    per_seed = {r: {x: points[x][r] for x in points} for r in readers}
    mean, stderr = stat_table(per_seed)
    return {"accuracy": mean, "stderr": stderr, "per_seed": per_seed}


def _description(jobs, lengths, offsets, count) -> dict:
    return {
        "long": LONG_VERSION,
        "heads": [head_path(Path("."), c, s).name for c, s in jobs],
        "readers": list({**LONG_READERS, **all_readers()}),  # a scheme registered since is a reader too
        "lengths": list(lengths),
        "offsets": list(offsets),
        "count": count,
        "seed": TEST_SEED,
        "eps": EPS,
    }


def run_long_context(
    cache_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
    *,
    seeds,
    lengths=LENGTHS,
    offsets=OFFSETS,
    count: int = COUNT,
    config: TrainConfig | None = None,
    workers: int | None = None,
    schemes=None,
) -> dict:
    """Both measurements for every reader and seed (cached as JSON under ``cache_dir/results``).

    Parameters
    ----------
    cache_dir : Path, optional
        Cache of heads and of this result; None computes in memory (in this process).
    log : callable, optional
        Progress messages.
    seeds : iterable of int
        The seeds of every scheme's heads (a block of :func:`poskernels.seeds.seed_block`; required).
    lengths, offsets : sequence of int
        The grids of the two measurements.
    count : int
        Sequences a point.
    config : TrainConfig, optional
        The training run (default the tournament preset).
    workers : int, optional
        Processes reading the points (default: the CPUs available).
    schemes : sequence of str, optional
        Read only the heads of these schemes (default every scheme of the registry); the readers of the others are None.

    Returns
    -------
    dict
        ``{"length": {"accuracy", "stderr", "per_seed", "lengths"}, "distance": {..., "offsets", "horizon"},
        "seeds", "count", "eps", "readers"}``; lengths and offsets as decimal strings.

    Raises
    ------
    PosKernelsError
        If an argument is not of the kind or range described (before any training).

    Examples
    --------
    One RoPE head trained 3 steps (cheap; the page's are the preset's 1,500), read at one length and one offset:

    >>> out = run_long_context(seeds=[0], lengths=(64,), offsets=(4,), count=20, config=TrainConfig(steps=3, batch=8),
    ...                        workers=1, schemes=["rope"])
    >>> sorted(out), out["length"]["accuracy"]["rope"], out["length"]["lengths"]
    (['count', 'distance', 'eps', 'length', 'readers', 'seeds'], {'64': 0.1}, ['64'])
    >>> run_long_context(seeds=[0], lengths=(), offsets=())
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: lengths and offsets are both empty: nothing to read
    """
    config = preset("tournament") if config is None else config
    if not isinstance(config, TrainConfig):
        raise PosKernelsError(f"config must be a TrainConfig; got {type(config).__name__}")
    lengths, offsets, count = _check_grid(lengths, offsets, count)
    if workers is not None:
        check_positive_int("workers", workers)
    if log is not None and not callable(log):
        raise PosKernelsError(f"log must be a function or None; got {type(log).__name__}")
    if cache_dir is not None and not isinstance(cache_dir, str | os.PathLike):
        raise PosKernelsError(f"cache_dir must be a folder path (str or Path) or None; got {type(cache_dir).__name__}")
    seeds = _check_seeds(seeds)
    schemes = ARTICLE_SCHEMES + EXTRA_SCHEMES if schemes is None else tuple(schemes)
    for scheme in schemes:
        check_name("scheme", scheme, SCHEMES)
    jobs = [(config.with_scheme(s), seed) for s in schemes for seed in seeds]
    description = _description(jobs, lengths, offsets, count)
    path = None if cache_dir is None else Path(cache_dir) / "results" / f"long-{cache_key(description)}.json"
    build = lambda: _read_long(jobs, cache_dir, log, seeds, lengths, offsets, count, workers)  # noqa: E731
    return cached_or_build(path, description, build, log)


def _read_long(jobs, cache_dir, log, seeds, lengths, offsets, count, workers) -> dict:
    heads = train_many(jobs, cache_dir, log)
    start = time.perf_counter()
    points = [("length", n) for n in lengths] + [("distance", r) for r in offsets]
    points.sort(key=lambda p: -(p[1] if p[0] == "length" else max(32, p[1] + 1)))  # longest first
    workers = max(1, min(len(points), workers or available_cpus()))
    by_scheme: dict = {}
    for h in heads:
        by_scheme.setdefault(h.head.scheme, []).append(h)
    results = [None] * len(points)
    for i, result in run_jobs(_point_job, [(by_scheme, task, x, count) for task, x in points], workers):
        results[i] = result
    found = {p: r for p, (r, _) in zip(points, results)}
    length = {str(n): found["length", n] for n in lengths}
    distance = {str(r): found["distance", r] for r in offsets}
    data = {
        "length": {**_stats(length), "lengths": [str(n) for n in lengths]},
        "distance": {**_stats(distance), "offsets": [str(r) for r in offsets]},
        "seeds": list(seeds),
        "count": count,
        "eps": EPS,
        "readers": list(length[str(lengths[0])]) if lengths else list(LONG_READERS),
    }
    alibi = [h for h in heads if h.head.scheme == "alibi"]
    data["distance"]["horizon"] = horizon_rows(alibi, distance) if alibi else {}
    tails = tail_cut_rows(heads)
    if tails:  # Kerple's heads: the tail bound's cut (a key only where such heads were read)
        data["distance"]["tail_cut"] = tails
    if log is not None:
        log(f"[long] read {len(heads)} heads at {len(points)} points in {time.perf_counter() - start:.1f} s")
    return data
