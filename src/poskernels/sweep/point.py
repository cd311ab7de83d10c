"""One grid point: its key, its head, its test sequences, and the job a worker runs.

A point (a dict over :data:`poskernels.sweep.settings.SETTINGS`) is trained and read with the code of
``poskernels reproduce``: :func:`poskernels.model.train.train` on its ``task`` (the cue task by default, any
registered one), then :func:`poskernels.model.train.evaluate` on that task's test sequences at each test length
(:func:`poskernels.experiments.held_out.heldout`: the same for every scheme and seed), through
:func:`~poskernels.experiments.rescaled.rescaled_reading` for a RoPE head re-read with an
extension map (``kappa = max(1, n / L)``).  A tournament point of a sweep therefore gives the
tournament's number, bit for bit.  Points that
differ only in how the head is read (test lengths, test set, extension map) share one training:
they form one *training* (:func:`group_jobs`), so a RoPE head re-read with PI, NTK-aware and YaRN
is trained once; trainings that differ only in the seed form one *stack* (:func:`group_stacks`), the
unit sent to a worker (:func:`run_job`), whose heads train together as in ``poskernels reproduce``.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Sequence

from ..errors import check_positive_int
from ..experiments.held_out import defined_at, heldout
from ..experiments.long_context import read_head
from ..experiments.rescaled import rescaled_reading
from ..model.cache import CODE_VERSION as HEAD_CODE_VERSION
from ..model.config import TrainConfig
from ..model.head import PLAIN
from ..model.scheme_file import blamed, load_scheme_files
from ..model.scheme_identity import scheme_digest
from ..model.train import evaluate, load_head, train_stack
from .settings import SETTINGS, head_config

__all__ = ["CODE_VERSION", "TASK", "group_jobs", "group_stacks", "point_key", "run_job", "train_config"]

#: The task of a point that names none (the tournament's cue task); a point's own ``task`` setting wins, and a cue
#: point's key is the one it had before the setting existed.
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


def with_source(point: dict) -> dict:
    """The point with its scheme's digest (``scheme_source``) when the scheme is a user's.

    A row is then keyed by what the scheme computes (:func:`poskernels.model.scheme_identity.scheme_digest`): an edited
    scheme file never reads the rows of its older version.

    Parameters
    ----------
    point : dict
        A point of a :class:`~poskernels.sweep.grid.Grid`.

    Returns
    -------
    dict
        ``point`` itself for a built-in scheme, else a copy with ``scheme_source``.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> p = parse_grid("").points[0]
    >>> with_source(p) == p  # a built-in scheme's code is the library's (CODE_VERSION)
    True
    """
    digest = scheme_digest(point["scheme"])
    return point if digest is None else {**point, "scheme_source": digest}


def point_key(point: dict) -> str:
    """Key of a point's row: a hash of its full configuration (every setting and the task).

    Parameters
    ----------
    point : dict
        A point of a :class:`~poskernels.sweep.grid.Grid`.

    Returns
    -------
    str
        20 hexadecimal digits, the same for the same settings in any order.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> p = parse_grid("").points[0]
    >>> len(point_key(p)), point_key(p) == point_key(dict(reversed(p.items())))
    (20, True)
    """
    return _digest({"task": TASK, **point})


def train_config(point: dict) -> TrainConfig:
    """The :class:`TrainConfig` of a point (its head and Adam settings on its task).

    Parameters
    ----------
    point : dict
        A point of a :class:`~poskernels.sweep.grid.Grid`.

    Returns
    -------
    TrainConfig
        The head's configuration and the training settings.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> train_config(parse_grid('[fixed]\\nscheme = "rope"\\nsteps = 30').points[0]).steps
    30
    """
    head = head_config(point)
    return TrainConfig(head=head, **{"task": TASK, **{k: point[k] for k, s in SETTINGS.items() if s.part == "train"}})


def _training_key(point: dict) -> str:
    return _digest({"task": TASK, **{k: point[k] for k, s in SETTINGS.items() if s.part != "eval"}})


def group_jobs(points: Sequence[tuple[str, dict]]) -> list[list[tuple[str, dict]]]:
    """Group ``(key, point)`` pairs that share a training into jobs (first appearance order).

    Parameters
    ----------
    points : sequence of (str, dict)
        Keys (:func:`point_key`) and points.

    Returns
    -------
    list of list of (str, dict)
        One job per training; its points differ only in how the head is read.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> g = parse_grid('[grid]\\nscheme = ["rope"]\\nextension = ["none", "pi", "ntk"]\\nseed = [0, 1]')
    >>> [len(j) for j in group_jobs([(point_key(p), p) for p in g.points])]
    [3, 3]
    """
    jobs: dict[str, list] = {}
    for key, point in points:
        jobs.setdefault(_training_key(point), []).append((key, point))
    return list(jobs.values())


def group_stacks(jobs: Sequence[list], size: int = 16, parts: int = 1) -> list[list[tuple[str, dict]]]:
    """Merge jobs whose trainings differ only in the seed into stacks of at most ``size`` trainings.

    A stack trains as one (:func:`poskernels.model.train.train_stack`) and gives each head the
    weights it has alone, so grouping changes no result.  Stacks are split further, while one
    holds more than one training, until there are at least ``parts`` (a job for every slot).

    Parameters
    ----------
    jobs : sequence of list
        :func:`group_jobs` output.
    size : int
        The most trainings in one stack.
    parts : int
        The fewest stacks wanted (the slots that run at once).

    Returns
    -------
    list of list of (str, dict)
        The stacks, each the points of its trainings.

    Raises
    ------
    PosKernelsError
        If ``size`` is not a positive integer.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> g = parse_grid('[grid]\\nscheme = ["rope", "alibi"]\\nextension = ["none", "pi"]\\nseed = [0, 1, 2]')
    >>> jobs = group_jobs([(point_key(p), p) for p in g.points])
    >>> [len(j) for j in jobs], [len(s) for s in group_stacks(jobs)]
    ([2, 2, 2, 1, 1, 1], [6, 3])
    >>> [len(s) for s in group_stacks(jobs, size=2)], [len(s) for s in group_stacks(jobs, parts=4)]
    ([4, 2, 2, 1], [4, 2, 2, 1])
    """
    size = check_positive_int("size", size)
    groups: dict[str, list[list]] = {}
    for job in jobs:
        point = job[0][1]
        shape = _digest({"task": TASK, **{k: point[k] for k, s in SETTINGS.items() if s.part not in ("eval", "seed")}})
        groups.setdefault(shape, []).append(job)
    stacked = [trainings[i : i + size] for trainings in groups.values() for i in range(0, len(trainings), size)]
    while len(stacked) < parts:
        i = max(range(len(stacked)), key=lambda j: len(stacked[j]), default=None)
        if i is None or len(stacked[i]) < 2:
            break
        half = (len(stacked[i]) + 1) // 2
        stacked[i : i + 1] = [stacked[i][:half], stacked[i][half:]]
    return [[pair for job in trainings for pair in job] for trainings in stacked]


def run_job(job: dict) -> dict:
    """Train (or load) the heads of a job as one stack and read each for every point (runs on a worker).

    Parameters
    ----------
    job : dict
        ``points``: list of ``[key, point]``, of one training or of several that differ only in
        the seed (:func:`group_stacks`); ``cache_dir``: a folder of trained heads shared with
        ``poskernels reproduce`` (or None to train without one).

    Returns
    -------
    dict
        ``results`` {key: {"accuracy": {str(n): float or None}, "eval_seconds": float,
        "final_loss": float (mean of the last 50 steps), "trained": bool (False when the head came
        from the cache), "training": key of the training the point reads, "train_seconds": the
        stack's training time shared among its heads}, or {"failed": "diverged at step k of S (loss x)"}
        for a point whose head diverged}, ``trained`` (heads trained), ``worker``
        (host:pid), ``started_at``, ``finished_at`` (epoch s).  Only plain JSON types, so the
        result crosses any executor unchanged.

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> p = parse_grid('[fixed]\\nsteps = 5\\nbatch = 4\\ntest_lengths = [8]\\ntest_size = 10').points[0]
    >>> out = run_job({"points": [[point_key(p), p]], "cache_dir": None})
    >>> list(out["results"][point_key(p)]["accuracy"]), out["trained"]
    (['8'], 1)
    """
    started_at, t0 = time.time(), time.perf_counter()
    load_scheme_files(job.get("scheme_files", ()))  # a worker registers the grid's own schemes before its points
    points = [(key, point) for key, point in job["points"]]
    cache_dir = job.get("cache_dir")
    trainings: dict[str, tuple[TrainConfig, int]] = {}
    for _, point in points:
        trainings.setdefault(_training_key(point), (train_config(point), point["seed"]))
    heads, trained = {}, set()
    by_config: dict[TrainConfig, list[tuple[str, int]]] = {}
    for tkey, (config, seed) in trainings.items():
        cached = None if cache_dir is None else load_head(cache_dir, config, seed)
        if cached is None:
            by_config.setdefault(config, []).append((tkey, seed))
        else:
            heads[tkey] = cached
    for config, todo in by_config.items():
        with blamed(config.head.scheme, "training"):  # a user's hook that raises: the error names scheme and file
            stack = train_stack(config, [seed for _, seed in todo], cache_dir)
        for (tkey, _), head in zip(todo, stack):
            heads[tkey] = head
            trained.add(tkey)
    train_seconds = (time.perf_counter() - t0) / len(trainings)
    results = {}
    for key, point in points:
        t1 = time.perf_counter()
        tkey = _training_key(point)
        head = heads[tkey]
        if head.diverged is not None:  # a result, not a crash: the point fails with the step, and stays failed
            loss = head.losses[head.diverged - 1]
            results[key] = {"failed": f"diverged at step {head.diverged} of {head.config.steps} (loss {loss:.4g})"}
            continue
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
            tokens, targets = heldout(n, point["test_size"], point["test_seed"], task=point["test_task"])
            reading = PLAIN if extension == "none" else rescaled_reading(head, extension, n)
            accuracy[str(n)] = float(evaluate(head, tokens, targets, reading=reading))
        results[key] = {
            "accuracy": accuracy,
            "eval_seconds": time.perf_counter() - t1,
            "final_loss": float(head.losses[-50:].mean()),
            "trained": tkey in trained,
            "training": tkey,
            "train_seconds": train_seconds,
        }
    return {
        "results": results,
        "trained": len(trained),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "started_at": started_at,
        "finished_at": time.time(),
    }
