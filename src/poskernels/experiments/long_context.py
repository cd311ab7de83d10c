"""Far past the window: the tournament's heads read at 32 to 10^5 tokens, in bounded memory.

Every head is read by the streaming reader (:func:`poskernels.model.stream.stream_many`), ALiBi back to its
certified cut (Theorem 3 (ii), dropped weight ``<= EPS``), a Kerple head back to the cut of its own tail bound
where it has one (:data:`poskernels.model.cut.CUT_TAILS`), the RoPE heads also re-read through PI, NTK-aware and
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

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..model.cache import cache_key, cached_json, save_json
from ..model.config import TrainConfig, preset
from ..model.cut import CUT_TAILS, certified_cut, has_cut
from ..model.head import PLAIN
from ..model.stream import stream_many
from ..model.train import head_path, train_many
from ..pool import available_cpus, run_jobs
from ..seeds import seed_block, stat_table
from ..tasks.cue import N_SYMBOLS, cue_batch, query_token
from ..tasks.needle import needle_batch
from .readers import READERS
from .tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES, defined_at, rescaled_reading

__all__ = [
    "COUNT",
    "EPS",
    "LENGTHS",
    "LONG_READERS",
    "OFFSETS",
    "TEST_SEED",
    "default_seeds",
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


def default_seeds() -> tuple[int, ...]:
    """The seeds of every trained section, read at call time: the shared seed block when there is one.

    Without it, ten seeds from ``POSKERNELS_FIRST_SEED`` (default 0).

    >>> len(default_seeds()) >= 10
    True
    """
    return seed_block()


def sequences(task: str, x: int, count: int = COUNT, seed: int = TEST_SEED) -> tuple[np.ndarray, np.ndarray]:
    """The test sequences of one point: ``(tokens uint8 (count, n), targets (count,))``.

    ``x`` is the length ``n`` (``"length"``) or the offset ``r`` (``"distance"``, length ``max(32, r + 1)``);
    ``seed`` is the test stream's (default :data:`TEST_SEED`).
    Drawn in blocks so a long set never holds more than about ``2^22`` int64 tokens at once.

    >>> t, y = sequences("distance", 5, 4)
    >>> t.shape, t.dtype.name, bool((t[:, 32 - 1 - 5] >= 8).all())
    ((4, 32), 'uint8', True)
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, _TASK_IDS[task], x]))
    n = x if task == "length" else max(32, x + 1)
    step = max(1, (1 << 22) // n)
    blocks = []
    for i in range(0, count, step):
        b = min(step, count - i)
        if task == "length":
            blocks.append(cue_batch(rng, b, n, dtype=np.uint8))  # the same ids as int64, 8 times fewer bytes
        else:
            blocks.append(needle_batch(rng, b, x, n))
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def _chunk(B: int) -> int:
    """Key positions a step for ``B`` sequences: about ``2^19`` keys (the sparse product's tables stay in cache)."""
    return max(64, min(4096, (1 << 19) // B))


def read_point(heads: dict, task: str, x: int, count: int = COUNT) -> dict:
    """Accuracy of every reader and seed at one point: ``{reader: [accuracy per seed] or None}``.

    ``heads`` maps a scheme to its trained heads (:class:`~poskernels.model.train.TrainedHead`, in seed order).
    A reader whose code is undefined at the point's length (the learned table past 32) gets None.
    """
    tokens, targets = sequences(task, x, count)
    n = tokens.shape[1]
    triples, owners = [], []
    for reader, (scheme, mapname) in LONG_READERS.items():
        if scheme not in heads or not defined_at(scheme, heads[scheme][0].head.n_train, n):
            continue
        for h in heads[scheme]:
            reading = PLAIN if mapname == "none" else rescaled_reading(h, mapname, n)
            triples.append((h.params, h.head, reading))
            owners.append(reader)
    logits = stream_many(triples, tokens, chunk=_chunk(tokens.shape[0]), eps=EPS)
    out: dict = {r: None for r in LONG_READERS}
    for reader, lg in zip(owners, logits):
        out[reader] = (out[reader] or []) + [float(np.mean(np.argmax(lg, axis=1) == targets))]
    return out


def read_head(head, reader_map: str | None, task: str, x: int, count: int = COUNT, seed: int = TEST_SEED):
    """Accuracy of one head at one point (None where its code is undefined): the sweep's long reading.

    ``reader_map`` is an extension map name for a RoPE head (None or ``"none"``: as trained).
    """
    tokens, targets = sequences(task, x, count, seed)
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
    """For each head cut by its learned tail (:data:`poskernels.model.cut.CUT_TAILS`, Kerple): its parameters, its
    content width ``W`` and its certified cut ``D`` at :data:`EPS` (None: a heavy tail, read in full).

    ``{scheme: {seed: {"r1", "r2", "W", "cut_D"}}}``.
    """
    rows: dict = {}
    for h in heads:
        if h.head.scheme not in CUT_TAILS:
            continue
        cut = certified_cut(h.params, h.head, [query_token(N_SYMBOLS)], EPS) if has_cut(h.params, h.head) else None
        a1, a2 = float(h.params["kerple_a1"][0]), float(h.params["kerple_a2"][0])
        r2 = float(np.exp(a2)) if h.head.scheme == "kerple_log" else float(2.0 / (1.0 + np.exp(-a2)))
        rows.setdefault(h.head.scheme, {})[str(h.seed)] = {
            "r1": float(np.exp(a1)),
            "r2": r2,
            "W": None if cut is None else cut.W,
            "cut_D": None if cut is None else cut.D,
        }
    return rows


def _stats(points: dict) -> dict:
    """``accuracy[reader][x]`` (mean), ``stderr`` (standard error of the mean over seeds), ``per_seed``."""
    per_seed = {r: {x: points[x][r] for x in points} for r in LONG_READERS}  # None: not read there
    mean, stderr = stat_table(per_seed)
    return {"accuracy": mean, "stderr": stderr, "per_seed": per_seed}


def _description(jobs, lengths, offsets, count) -> dict:
    return {
        "long": LONG_VERSION,
        "heads": [head_path(Path("."), c, s).name for c, s in jobs],
        "lengths": list(lengths),
        "offsets": list(offsets),
        "count": count,
        "seed": TEST_SEED,
        "eps": EPS,
        "readers": list(LONG_READERS),  # a reader added to the registry changes the result's layout
    }


def run_long_context(
    cache_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
    seeds=None,
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
    seeds : iterable of int, optional
        Default :func:`default_seeds`.
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
    """
    config = preset("tournament") if config is None else config
    seeds = default_seeds() if seeds is None else tuple(int(s) for s in seeds)
    schemes = ARTICLE_SCHEMES + EXTRA_SCHEMES if schemes is None else tuple(schemes)
    jobs = [(config.with_scheme(s), seed) for s in schemes for seed in seeds]
    description = _description(jobs, lengths, offsets, count)
    path = None if cache_dir is None else Path(cache_dir) / "results" / f"long-{cache_key(description)}.json"
    cached = cached_json(path, cache_key(description), log, "cache")
    if cached is not None:
        return cached
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
        "readers": list(LONG_READERS),
    }
    alibi = [h for h in heads if h.head.scheme == "alibi"]
    data["distance"]["horizon"] = horizon_rows(alibi, distance) if alibi else {}
    tails = tail_cut_rows(heads)
    if tails:  # Kerple's heads: the tail bound's cut (a key only where such heads were read)
        data["distance"]["tail_cut"] = tails
    if log is not None:
        log(f"[long] read {len(heads)} heads at {len(points)} points in {time.perf_counter() - start:.1f} s")
    if path is not None:
        save_json(path, data, {"key": cache_key(description), **description})
    return data
