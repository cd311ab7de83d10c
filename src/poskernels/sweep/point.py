"""One grid point: its key, its head, its test sequences, and the job a worker runs.

A point (a dict over :data:`poskernels.sweep.grid.SETTINGS`) is trained and read with the code of
``poskernels reproduce``: :func:`poskernels.model.train.train` on the cue task, then
:func:`poskernels.model.train.evaluate` on the tournament's test sequences at each test length
(:func:`poskernels.experiments.tournament.heldout`: the same for every scheme and seed), through
:func:`~poskernels.experiments.tournament.rescaled_reading` for a RoPE head re-read with an
extension map (``kappa = max(1, n / L)``).  A tournament point of a sweep therefore gives the
tournament's number, bit for bit.  Points that
differ only in how the head is read (test lengths, test set, extension map) share one training:
they form one *job*, the unit sent to a worker (:func:`run_job`), so a RoPE head re-read with PI,
NTK-aware and YaRN is trained once.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Sequence

from ..experiments.long_context import read_head
from ..experiments.tournament import defined_at, heldout, rescaled_reading
from ..model.cache import CODE_VERSION as HEAD_CODE_VERSION
from ..model.config import HeadConfig, TrainConfig
from ..model.head import PLAIN
from ..model.train import evaluate, load_head, train
from .grid import SETTINGS

__all__ = ["CODE_VERSION", "TASK", "group_jobs", "point_key", "run_job", "train_config"]

#: The training stream of every point (the tournament's cue task).
TASK = "cue"

#: The test tasks read by the streaming reader: the grid's ``test_task`` -> the long-context measurement it runs
#: (``test_lengths`` are lengths for ``long`` and the needle's offsets for ``needle``).
LONG_TASKS = {"long": "length", "needle": "distance"}

#: Version of what a point's row holds: the head's training code and this module's reading of it
#: (test-set convention, metrics).  A stored row of another version is stale and is recomputed.
CODE_VERSION = f"{HEAD_CODE_VERSION}/sweep-2"  # sweep-2: the test_task setting


def _digest(obj) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def point_key(point: dict) -> str:
    """Key of a point's row: a hash of its full configuration (every setting and the task).

    >>> from poskernels.sweep.grid import parse_grid
    >>> p = parse_grid("").points[0]
    >>> len(point_key(p)), point_key(p) == point_key(dict(reversed(p.items())))
    (20, True)
    """
    return _digest({"task": TASK, **point})


def train_config(point: dict) -> TrainConfig:
    """The :class:`TrainConfig` of a point (its head and Adam settings on the cue task).

    >>> from poskernels.sweep.grid import parse_grid
    >>> train_config(parse_grid('[fixed]\\nscheme = "rope"\\nsteps = 30').points[0]).steps
    30
    """
    head = HeadConfig(**{k: point[k] for k, s in SETTINGS.items() if s.part == "head"})
    return TrainConfig(head=head, task=TASK, **{k: point[k] for k, s in SETTINGS.items() if s.part == "train"})


def _training_key(point: dict) -> str:
    return _digest({"task": TASK, **{k: point[k] for k, s in SETTINGS.items() if s.part != "eval"}})


def group_jobs(points: Sequence[tuple[str, dict]]) -> list[list[tuple[str, dict]]]:
    """Group ``(key, point)`` pairs that share a training into jobs (first appearance order).

    >>> from poskernels.sweep.grid import parse_grid
    >>> g = parse_grid('[grid]\\nscheme = ["rope"]\\nextension = ["none", "pi", "ntk"]\\nseed = [0, 1]')
    >>> [len(j) for j in group_jobs([(point_key(p), p) for p in g.points])]
    [3, 3]
    """
    jobs: dict[str, list] = {}
    for key, point in points:
        jobs.setdefault(_training_key(point), []).append((key, point))
    return list(jobs.values())


def run_job(job: dict) -> dict:
    """Train one head and read it for every point of the job (runs on a worker).

    Parameters
    ----------
    job : dict
        ``points``: list of ``[key, point]`` sharing one training; ``cache_dir``: a folder of
        trained heads shared with ``poskernels reproduce`` (or None to train without one).

    Returns
    -------
    dict
        ``results`` {key: {"accuracy": {str(n): float or None}, "eval_seconds": float}},
        ``train_seconds``, ``final_loss`` (mean of the last 50 steps), ``trained`` (False when the
        head came from the cache), ``training`` (key of the training the points share), ``worker``
        (host:pid), ``started_at``, ``finished_at`` (epoch s).
        Only plain JSON types, so the result crosses any executor unchanged.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> p = parse_grid('[fixed]\\nsteps = 5\\nbatch = 4\\ntest_lengths = [8]\\ntest_size = 10').points[0]
    >>> out = run_job({"points": [[point_key(p), p]], "cache_dir": None})
    >>> list(out["results"][point_key(p)]["accuracy"]), out["trained"]
    (['8'], True)
    """
    started_at, t0 = time.time(), time.perf_counter()
    points = [(key, point) for key, point in job["points"]]
    first = points[0][1]
    config, seed, cache_dir = train_config(first), first["seed"], job.get("cache_dir")
    cached = None if cache_dir is None else load_head(cache_dir, config, seed)
    head = cached if cached is not None else train(config, seed, cache_dir)
    train_seconds = time.perf_counter() - t0
    results = {}
    for key, point in points:
        t1 = time.perf_counter()
        accuracy = {}
        for n in point["test_lengths"]:
            if not defined_at(point["scheme"], point["n_train"], n):  # Definition 1: a learned table past L
                accuracy[str(n)] = None
                continue
            extension = point["extension"]
            if point["test_task"] in LONG_TASKS:  # read far past the window by the streaming reader
                task = LONG_TASKS[point["test_task"]]
                accuracy[str(n)] = read_head(head, extension, task, n, point["test_size"], point["test_seed"])
                continue
            tokens, targets = heldout(n, point["test_size"], point["test_seed"])
            reading = PLAIN if extension == "none" else rescaled_reading(head, extension, n)
            accuracy[str(n)] = float(evaluate(head, tokens, targets, reading=reading))
        results[key] = {"accuracy": accuracy, "eval_seconds": time.perf_counter() - t1}
    return {
        "results": results,
        "train_seconds": train_seconds,
        "final_loss": float(head.losses[-50:].mean()),
        "trained": cached is None,
        "training": _training_key(first),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "started_at": started_at,
        "finished_at": time.time(),
    }
