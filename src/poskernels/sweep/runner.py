"""Run a grid through any :class:`concurrent.futures.Executor`, keeping the store current.

The driver (this module) is the store's only writer.  It hands jobs (points sharing a training,
:func:`poskernels.sweep.point.group_jobs`) to an executor through ``submit`` and
:func:`concurrent.futures.wait`, the same code for both backends (:mod:`poskernels.sweep.backends`: a local
process pool, the default, or a Dask cluster).

What can go wrong, and what the driver does:

* a job raises: its points get one more try (queued at the end), then are recorded as failed
  with the error;
* a local worker process dies: the pool is broken for every job in flight, so the driver starts
  a new pool and resubmits them, counting a loss per point (more than ``max_lost`` -> failed).  The
  pool cannot tell whose worker died, so every job in flight is charged; a point that kills its
  worker each time is failed after ``max_lost + 1`` deaths, and may take a job that shared its pool
  with it every time along (``--retry-failed`` runs such a point again);
  a Dask worker that dies is rescheduled by Dask itself (``KilledWorker`` after repeated deaths
  counts as a failure);
* Ctrl-C: the jobs in flight are cancelled, their rows go back to ``pending``, the run is logged
  as interrupted, and ``KeyboardInterrupt`` propagates;
* the driver is killed: rows it had handed out stay ``running``; a new run treats them as not done.

In every case a row is done only once its results are committed, and a done row is never run again.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, CancelledError, Future, wait
from dataclasses import dataclass
from pathlib import Path

from .backends import Backend, local_backend
from .grid import Grid
from .point import CODE_VERSION, group_jobs, group_stacks, point_key, run_job, with_source
from .store import Store

__all__ = ["Progress", "SweepSummary", "run_sweep"]


class Progress:
    """Points done and failed as a progress bar (tqdm) on a stream (stderr), redrawn at most every ``every`` s.

    tqdm gives the rate and the time left; a stream that is not a terminal gets the bar's lines as they are drawn.

    >>> import io
    >>> out = io.StringIO()
    >>> p = Progress(10, done=2, stream=out, every=0)
    >>> p.update(done=4, failed=1)
    >>> p.close()
    >>> "5/10" in out.getvalue() and "failed=1" in out.getvalue()
    True
    """

    def __init__(self, total: int, done: int = 0, failed: int = 0, stream=None, every: float = 2.0):
        from tqdm import tqdm

        self.seen = done + failed
        self.bar = tqdm(
            total=total,
            initial=self.seen,
            desc="[sweep]",
            unit="point",
            file=sys.stderr if stream is None else stream,
            mininterval=every,
            dynamic_ncols=True,
        )
        self.bar.set_postfix(failed=failed, refresh=False)

    def update(self, done: int, failed: int, force: bool = False) -> None:
        self.bar.set_postfix(failed=failed, refresh=False)
        self.bar.update(done + failed - self.seen)
        self.seen = done + failed
        if force:
            self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


@dataclass(frozen=True)
class SweepSummary:
    """What a run did: points of the grid, done before it, done and failed now, stale rows rerun."""

    run_id: int
    points: int
    done_before: int
    done: int
    failed: int
    stale: int
    trained: int
    seconds: float


def _failed(err: BaseException) -> Future:
    """A future that already holds ``err``: a job the executor refused, handled as one it lost."""
    future: Future = Future()
    future.set_exception(err)
    return future


def _describe(err: BaseException) -> str:
    text = "".join(traceback.format_exception(err)).strip()
    return f"{type(err).__name__}: {err}\n{text[-4000:]}"


def run_sweep(
    grid: Grid,
    store: Store,
    backend: Backend | None = None,
    *,
    cache_dir: Path | None = None,
    retry_failed: bool = False,
    stream=None,
    every: float = 2.0,
    job: Callable[[dict], dict] = run_job,
    max_lost: int = 3,
    stack: int = 16,
) -> SweepSummary:
    """Run every point of ``grid`` not yet done in ``store`` on ``backend``.

    Parameters
    ----------
    grid : Grid
        From :func:`poskernels.sweep.grid.load_grid`.
    store : Store
        The results; rows already done (same code version) are not run again.
    backend : Backend, optional
        Default :func:`local_backend` with every available CPU.
    cache_dir : Path, optional
        A folder of trained heads shared with ``poskernels reproduce`` (must be visible to the workers).
    retry_failed : bool
        Run again the points a previous run recorded as failed.
    stream : file, optional
        Progress lines (default stderr); ``every`` seconds apart at most.
    job : callable
        The worker function, ``job(dict) -> dict`` (:func:`poskernels.sweep.point.run_job`).
    max_lost : int
        Local worker deaths a point may see before it is recorded as failed.
    stack : int
        Most trainings per job: trainings that differ only in the seed train as one stack
        (:func:`poskernels.sweep.point.group_stacks`); 1 sends each training alone.

    Returns
    -------
    SweepSummary
        The run's counts: points, done before it, done and failed after it, stale rows rerun, heads trained.

    Examples
    --------
    One point trained for five steps, on a backend of one thread; run again, it finds the point done:

    >>> import io, pathlib, tempfile
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from poskernels.sweep import parse_grid
    >>> grid = parse_grid("[fixed]\\nsteps = 5\\nbatch = 4\\ntest_lengths = [8]\\ntest_size = 10\\n[grid]\\nseed = [0]")
    >>> serial = Backend("threads:1", 1, new=lambda: ThreadPoolExecutor(1))
    >>> with tempfile.TemporaryDirectory() as root, Store(pathlib.Path(root) / "s.sqlite") as store:
    ...     first = run_sweep(grid, store, serial, stream=io.StringIO())
    ...     again = run_sweep(grid, store, serial, stream=io.StringIO())
    ...     status = store.rows()[0]["status"]
    >>> (first.points, first.done, first.trained), (again.done_before, again.trained), status
    ((1, 1, 1), (1, 0), 'done')
    """
    backend = local_backend() if backend is None else backend
    stream = sys.stderr if stream is None else stream
    store.lock()
    start = time.perf_counter()
    points = [with_source(p) for p in grid.points]  # a user's scheme: keyed by what it computes
    keys = [point_key(p) for p in points]
    point_of = dict(zip(keys, points))
    store.add_points(list(point_of.items()), CODE_VERSION)
    todo, stale = store.todo(keys, CODE_VERSION, retry_failed)
    todo_set = set(todo)
    status = dict(store.query("SELECT key, status FROM points"))
    prior = dict((k, (f, n)) for k, f, n in store.query("SELECT key, failures, lost FROM points") if k in todo_set)
    done_before = sum(status[k] == "done" for k in keys if k not in todo_set)
    c = {"done": done_before, "failed": sum(status[k] == "failed" for k in keys if k not in todo_set)}
    trainings = group_jobs([(k, point_of[k]) for k in todo])
    jobs = deque(group_stacks(trainings, stack, backend.slots))
    failures = {id(j): max(prior[k][0] for k, _ in j) for j in jobs}
    lost = {id(j): max(prior[k][1] for k, _ in j) for j in jobs}
    progress = Progress(len(keys), c["done"], c["failed"], stream, every)
    print(f"[sweep] {len(keys)} points ({grid.skipped} combinations skipped), {done_before} already done, "
          f"{len(todo)} to run in {len(trainings)} trainings ({len(jobs)} stacked jobs) on {backend.name}"
          + (f"; {stale} stale" if stale else ""),
          file=stream)  # fmt: skip
    run_id = store.begin_run(grid.text, CODE_VERSION, backend.name)
    window = 2 * backend.slots
    in_flight: dict = {}
    trained = 0
    executor = backend.new() if jobs else None
    try:
        while jobs or in_flight:
            while jobs and len(in_flight) < window:
                j = jobs.popleft()
                store.submit([k for k, _ in j])
                payload = {"points": [[k, p] for k, p in j], "cache_dir": None if cache_dir is None else str(cache_dir),
                           "scheme_files": list(grid.scheme_files)}  # fmt: skip
                try:
                    in_flight[executor.submit(job, payload)] = j
                except BrokenExecutor as err:  # a worker died since the last wait: the job is lost with the pool
                    in_flight[_failed(err)] = j
                    break
            finished, _ = wait(list(in_flight), timeout=max(every, 0.05), return_when=FIRST_COMPLETED)
            broken = []
            for future in finished:
                j = in_flight.pop(future)
                try:
                    out = future.result()
                except (BrokenExecutor, CancelledError):  # lost with its worker, or cancelled under it
                    broken.append(j)
                except Exception as err:
                    failures[id(j)] += 1
                    final = failures[id(j)] >= 2  # one retry, then recorded as failed
                    store.fail([k for k, _ in j], _describe(err), final, run_id)
                    c["failed"] += final * len(j)
                    if not final:
                        jobs.append(j)
                else:
                    trained += int(out["trained"])
                    _record(store, j, out, run_id, c)
            if broken:  # a local worker died: every job in flight is lost with the pool, and each is charged
                for future, j in list(in_flight.items()):
                    if future.done() and future.exception() is None:
                        trained += int(future.result()["trained"])
                        _record(store, j, future.result(), run_id, c)
                    else:
                        broken.append(j)
                in_flight.clear()
                backend.halt(executor)
                executor = backend.new()
                gave_up = 0
                for j in broken:
                    lost[id(j)] += 1
                    keys_j = [k for k, _ in j]
                    if lost[id(j)] > max_lost:
                        store.lose(keys_j, f"a worker process died under this point {lost[id(j)]} times")
                        c["failed"] += len(j)
                        gave_up += 1
                    else:
                        store.lose(keys_j)
                        jobs.appendleft(j)
                again = f"{len(broken) - gave_up} training(s) resubmitted to a new pool"
                failed = f", {gave_up} recorded as failed" if gave_up else ""
                print(f"[sweep] a worker process died; {again}{failed}", file=stream)
            progress.update(c["done"], c["failed"])
    except BaseException as err:
        if executor is not None:
            backend.halt(executor)
        store.release(keys)  # every row still "running" is ours (the store is locked): back to pending
        why = "interrupted" if isinstance(err, KeyboardInterrupt) else f"stopped by {type(err).__name__}"
        store.end_run(run_id, why)
        progress.close()
        print(f"[sweep] {why}: {c['done']}/{len(keys)} done; run the same command again to resume", file=stream)
        raise
    if executor is not None:
        executor.shutdown(wait=True)
    store.end_run(run_id, "finished")
    progress.update(c["done"], c["failed"], force=True)
    progress.close()
    seconds = time.perf_counter() - start
    return SweepSummary(run_id, len(keys), done_before, c["done"], c["failed"], stale, trained, seconds)


def _record(store: Store, j, out: dict, run_id: int, c: dict) -> None:
    """Store a finished job: its points done, and those whose head diverged failed with the step (no retry)."""
    failed = {key: out["results"][key]["failed"] for key, _ in j if "failed" in out["results"][key]}
    done = [(key, point) for key, point in j if key not in failed]
    if done:
        store.finish(_rows(done, out), run_id, CODE_VERSION)
    for key, why in failed.items():
        store.fail([key], why, True, run_id)
    c["done"] += len(done)
    c["failed"] += len(failed)


def _rows(j, out: dict) -> dict:
    """Store rows of a finished job: each point's metrics, its training's key and timings."""
    return {
        key: {
            "metrics": {"accuracy": out["results"][key]["accuracy"], "final_loss": out["results"][key]["final_loss"]},
            "trained": out["results"][key]["trained"],
            "training": out["results"][key]["training"],
            "train_seconds": out["results"][key]["train_seconds"],
            "eval_seconds": out["results"][key]["eval_seconds"],
            "worker": out["worker"],
            "started_at": out["started_at"],
            "finished_at": out["finished_at"],
        }
        for key, _ in j
    }
