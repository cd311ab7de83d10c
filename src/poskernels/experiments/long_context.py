"""Far past the window: the tournament's heads read at 32 to 10^5 tokens, in bounded memory.

Every head is read by the streaming reader (:func:`poskernels.model.engine.stream.stream_many`), ALiBi back to its
certified cut (Theorem 3 (ii), dropped weight ``<= EPS``), a Kerple head back to the cut of its own tail bound
where it has one (its scheme's ``tail_bound``), the RoPE heads also re-read through PI, NTK-aware and
YaRN at ``kappa = n / 32`` (the tournament's :func:`~poskernels.experiments.tournament.rescaled_reading`).

* **Length**: the cue task (:func:`poskernels.tasks.cue.cue_batch`) at each of :data:`LENGTHS`.
* **Distance**: the needle task (:func:`poskernels.tasks.needle.needle_batch`): one marked token ``r`` positions
  before the query, at each ``r`` of :data:`OFFSETS`, in a sequence of ``max(32, r + 1)`` tokens (the training
  length while the needle fits in it; the needle is the first token past it).  For each ALiBi head, its content
  width ``W`` and horizon ``W / s`` (Theorem 3 (iii)), and its mean accuracy at the offsets inside half the
  horizon and beyond twice it.

Each point reads :data:`COUNT` fresh sequences (seeded apart from training and from the tournament's test sets),
the same for every head; a reader's figure is the mean over the seeds, with its standard error and the per-seed
values.  The result is cached as JSON under ``cache_dir/results`` keyed by every head and setting.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..encodings import SCHEMES
from ..errors import PosKernelsError, check_budget, check_int, check_name, check_positive_int
from ..model.cache import cache_key, cached_or_build
from ..model.config import TrainConfig, preset
from ..model.engine.cut import HeavyTail, certified_cut, has_cut
from ..model.engine.stream import stream_many
from ..model.head import PLAIN
from ..model.train import head_path, train_many
from ..model.trained import check_trained
from ..pool import available_cpus, run_jobs
from ..seeds import stat_table
from ..tasks.cue import N_SYMBOLS, cue_batch, query_token
from ..tasks.needle import needle_batch
from ..tasks.validate import MAX_CUE_TOKENS
from .readers import READERS, all_readers
from .tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES, defined_at, rescaled_reading

__all__ = [
    "COUNT",
    "EPS",
    "LENGTHS",
    "LONG_READERS",
    "OFFSETS",
    "TEST_SEED",
    "horizon_rows",
    "tail_cut_rows",
    "read_head",
    "read_point",
    "run_long_context",
]

LENGTHS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 100_000)
OFFSETS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 1024, 4096, 16384, 100_000)
COUNT = 500
EPS = 1e-12  # ALiBi's certified cut: the weight it drops, at most
TEST_SEED = 27_182_818  # sequences from SeedSequence([TEST_SEED, task, n or r]), apart from training and the tournament
LONG_VERSION = "long-1"  # bump when the evaluation changes

#: Readers: every one of :data:`~poskernels.experiments.readers.READERS` (each scheme, and RoPE re-read by each map).
LONG_READERS = READERS
_TASK_IDS = {"length": 0, "distance": 1}


def sequences(
    task: str, x: int, count: int = COUNT, seed: int = TEST_SEED, n_train: int = 32
) -> tuple[np.ndarray, np.ndarray]:
    """The test sequences of one point: ``(tokens uint8 (count, n), targets (count,))``.

    ``x`` is the length ``n`` (``"length"``, at least 2) or the offset ``r`` (``"distance"``, at least 1, in a
    sequence of ``max(n_train, r + 1)`` tokens: the training length while the needle fits in it); ``seed`` is the
    test stream's (default :data:`TEST_SEED`).
    Drawn in blocks so a long set never holds more than about ``2^22`` int64 tokens at once.

    Parameters
    ----------
    task : {"length", "distance"}
        The cue task at length ``x``, or the needle task at offset ``x``.
    x : int
        The length (>= 2) or the needle's offset (>= 1), at most :data:`MAX_LENGTH`.
    count : int, optional
        Sequences (default :data:`COUNT`).
    seed : int, optional
        The test stream's seed (default :data:`TEST_SEED`).
    n_train : int, optional
        The training length a needle sequence is at least as long as (default 32).

    Returns
    -------
    tokens : ndarray of uint8, shape (count, n)
        The sequences.
    targets : ndarray, shape (count,)
        The answer of each.

    Raises
    ------
    PosKernelsError
        If ``task`` is neither task, or ``x``, ``count``, ``seed`` or ``n_train`` is out of range, or the set would
        pass the token budget.

    Examples
    --------
    >>> t, y = sequences("distance", 5, 4)
    >>> t.shape, t.dtype.name, bool((t[:, 32 - 1 - 5] >= 8).all())
    ((4, 32), 'uint8', True)
    >>> sequences("distance", 5, 4, n_train=8)[0].shape  # a head trained at 8 reads its needle at length 8
    (4, 8)
    >>> sequences("length", 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the length n (the query and at least one key) must be an integer in [2, ...got 1
    """
    task, x, count, seed = _check_point(task, x, count, seed)
    n_train = check_int("n_train", n_train, 1, MAX_LENGTH)
    rng = np.random.default_rng(np.random.SeedSequence([seed, _TASK_IDS[task], x]))
    n = x if task == "length" else max(n_train, x + 1)
    check_budget(f"the test set of {count} sequences of {n} tokens", count * n, MAX_CUE_TOKENS)  # uint8 tokens
    step = max(1, (1 << 22) // n)
    blocks = []
    for i in range(0, count, step):
        b = min(step, count - i)
        if task == "length":
            blocks.append(cue_batch(rng, b, n, dtype=np.uint8))  # the same ids as int64, 8 times fewer bytes
        else:
            blocks.append(needle_batch(rng, b, x, n))
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


#: Longest sequence (and farthest needle) a point reads: 2**24 tokens, about 170 times the article's longest.
MAX_LENGTH = 2**24


def _check_point(task, x, count, seed) -> tuple[str, int, int, int]:
    """One point's ``task``, ``x`` (a length >= 2, or an offset >= 1), ``count`` (>= 1) and ``seed``, else raise."""
    task = check_name("long-context task", task, _TASK_IDS)
    lo, what = (2, "length n (the query and at least one key)") if task == "length" else (1, "needle offset r")
    x = check_int(f"the {what}", x, lo, MAX_LENGTH, "a point reads count sequences that long")
    count = check_int("count (sequences a point)", count, 1, MAX_CUE_TOKENS)
    seed = check_int("the test seed", seed, 0, 2**63 - 1)
    return task, x, count, seed


def _check_grid(lengths, offsets, count) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The grids of :func:`run_long_context`, each point checked as :func:`sequences` would, before any training."""
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
        The point's task (:func:`sequences`).
    x : int
        Its length or offset.
    count : int, optional
        Sequences read (default :data:`COUNT`).

    Returns
    -------
    dict of str to (list of float or None)
        Every reader of :data:`LONG_READERS` (and of schemes registered since): the accuracy of each head of its
        scheme, or None where it has no head or no code at the point.

    Raises
    ------
    PosKernelsError
        If a head diverged in training, or the point is out of range (:func:`sequences`).

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
        The point's task (:func:`sequences`).
    x : int
        Its length or offset.
    count : int, optional
        Sequences read (default :data:`COUNT`).
    seed : int, optional
        The test stream's seed (default :data:`TEST_SEED`).

    Returns
    -------
    float or None
        The share of sequences answered right; None where the head's code is undefined at the point's length.

    Raises
    ------
    PosKernelsError
        If ``head`` diverged in training, or the point is out of range (:func:`sequences`).

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


def horizon_rows(alibi_heads, distance: dict) -> dict:
    """Theorem 3 (iii) for each ALiBi head: ``W``, the horizon ``W / s``, the cut ``D``, and accuracy by region.

    ``inside_half`` is the head's mean accuracy over the offsets ``r <= W / (2 s)``, ``beyond_twice`` over
    ``r > 2 W / s`` (None where the grid has no such offset).

    Parameters
    ----------
    alibi_heads : sequence of TrainedHead
        ALiBi heads, in seed order.
    distance : dict
        ``{str(r): read_point(...)}`` of the distance task: ``distance[str(r)]["alibi"][k]`` is head ``k``'s
        accuracy at offset ``r``.

    Returns
    -------
    dict
        ``{str(seed): {"W", "horizon", "cut_D", "inside_half", "beyond_twice"}}``, the content width, the horizon
        ``W / s``, the certified cut at :data:`EPS` (:func:`poskernels.model.engine.cut.certified_cut`) and the two
        mean accuracies.

    Examples
    --------
    >>> from poskernels.model import HeadConfig
    >>> from poskernels.model.train import train
    >>> alibi = train(TrainConfig(head=HeadConfig(scheme="alibi"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> distance = {str(r): read_point({"alibi": [alibi]}, "distance", r, count=20) for r in (1, 64)}
    >>> row = horizon_rows([alibi], distance)["0"]
    >>> sorted(row), row["cut_D"], row["inside_half"]
    (['W', 'beyond_twice', 'cut_D', 'horizon', 'inside_half'], 57, None)
    """
    offsets = [int(r) for r in distance]
    rows = {}
    for k, h in enumerate(alibi_heads):
        cut = certified_cut(h.params, h.head, [query_token(N_SYMBOLS)], EPS)
        horizon = cut.W / cut.s
        acc = [distance[str(r)]["alibi"][k] for r in offsets]
        inside = [a for r, a in zip(offsets, acc) if r <= horizon / 2]
        beyond = [a for r, a in zip(offsets, acc) if r > 2 * horizon]
        rows[str(h.seed)] = {
            "W": cut.W,
            "horizon": horizon,
            "cut_D": cut.D,
            "inside_half": float(np.mean(inside)) if inside else None,
            "beyond_twice": float(np.mean(beyond)) if beyond else None,
        }
    return rows


def tail_cut_rows(heads) -> dict:
    """For each head cut by its learned tail (its scheme's ``tail_bound``: Kerple's): its content width ``W``, its
    certified cut ``D`` at :data:`EPS` (None: a heavy tail, read in full) and the learned numbers its tail reads
    (its scheme's ``tail_parameters``: Kerple's ``r1`` and ``r2``).

    ``{scheme: {seed: {"r1", "r2", "W", "cut_D"}}}`` for Kerple.

    Parameters
    ----------
    heads : iterable of TrainedHead
        Heads of any scheme; those without a learned tail bound (or with a linear slope, ALiBi's) are passed over.

    Returns
    -------
    dict
        ``{scheme: {str(seed): {"r1", "r2", "W", "cut_D"}}}``.

    Examples
    --------
    >>> from poskernels.model import HeadConfig
    >>> from poskernels.model.train import train
    >>> tr = lambda s: train(TrainConfig(head=HeadConfig(scheme=s), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> rows = tail_cut_rows([tr("rope"), tr("kerple_power")])
    >>> list(rows), sorted(rows["kerple_power"]["0"]), rows["kerple_power"]["0"]["cut_D"]
    (['kerple_power'], ['W', 'cut_D', 'r1', 'r2'], 50)
    """
    rows: dict = {}
    for h in heads:
        scheme = SCHEMES[h.head.scheme]
        if scheme.linear_slope(h.head) is not None or scheme.tail_bound(h.params, h.head) is None:
            continue
        try:
            cut = certified_cut(h.params, h.head, [query_token(N_SYMBOLS)], EPS) if has_cut(h.params, h.head) else None
        except HeavyTail:  # a finite bound that stays above EPS: no cut, the head is read in full
            cut = None
        row = {**scheme.tail_parameters(h.params), "W": None if cut is None else cut.W}
        row["cut_D"] = None if cut is None else cut.D
        rows.setdefault(h.head.scheme, {})[str(h.seed)] = row
    return rows


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
