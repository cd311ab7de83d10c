"""Run a grid through any :class:`concurrent.futures.Executor`, keeping the store current.

The driver (this module) is the store's only writer.  It hands jobs (points sharing a training,
:func:`poskernels.sweep.point.group_jobs`) to an executor through ``submit`` and
:func:`concurrent.futures.wait`, the same code for both backends:

* :func:`local_backend`: a :class:`~concurrent.futures.ProcessPoolExecutor` (the default);
* :func:`dask_backend`: a Dask distributed cluster, through ``Client.get_executor()``, whose
  futures are :class:`concurrent.futures.Future` too (``pip install 'poskernels[sweep]'``).

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

import errno
import multiprocessing
import os
import socket
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, CancelledError, Executor, Future, wait
from dataclasses import dataclass
from pathlib import Path

from ..errors import PosKernelsError, check_positive_int
from ..pool import available_cpus, halt, process_pool, worker_init
from .grid import Grid
from .point import CODE_VERSION, group_jobs, group_stacks, point_key, run_job, with_source
from .store import Store

__all__ = ["Backend", "Progress", "SweepSummary", "dask_backend", "local_backend", "run_sweep"]


@dataclass
class Backend:
    """Where jobs run: a factory of executors and how many jobs they run at once.

    Attributes
    ----------
    name : str
        Logged with each run (``local:4``, ``dask:tcp://127.0.0.1:8786``).
    slots : int
        Jobs the executor runs at once; the driver keeps ``2 * slots`` in flight.
    new : callable
        ``new() -> Executor``; called again after a local pool breaks.
    halt : callable
        ``halt(executor)`` stops an executor now, abandoning its jobs (Ctrl-C, a broken pool).
    close : callable
        Releases what the backend holds (a Dask client) at the end.
    """

    name: str
    slots: int
    new: Callable[[], Executor]
    halt: Callable[[Executor], None] = lambda ex: ex.shutdown(wait=False, cancel_futures=True)
    close: Callable[[], None] = lambda: None


#: One BLAS/OpenMP thread per worker process, as Dask's nanny sets for its workers: W processes of
#: ``cpus`` threads each would oversubscribe the machine W-fold.  A value the user set is kept.
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _start_forkserver() -> None:
    """Start the forkserver (if not running) with :data:`WORKER_ENV`, which its workers inherit."""
    from multiprocessing import forkserver

    saved = {k: os.environ.get(k) for k in WORKER_ENV}
    os.environ.update({k: v for k, v in WORKER_ENV.items() if saved[k] is None})
    try:
        forkserver.ensure_running()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)


def local_backend(workers: int | None = None) -> Backend:
    """A process pool of ``workers`` processes (default: the CPUs this process may use).

    Workers are forked from a clean server process (``forkserver``, which has imported the sweep's
    code once), never from the driver, whatever threads the driver runs; ``spawn`` where there is
    no forkserver.

    Parameters
    ----------
    workers : int, optional
        The processes; default None (every CPU this process may use).

    Returns
    -------
    Backend
        The backend; its pool starts when :func:`run_sweep` first needs it.

    Raises
    ------
    PosKernelsError
        If `workers` is not a positive integer.

    Examples
    --------
    >>> local_backend(2).name
    'local:2'
    """
    workers = available_cpus() if workers is None else check_positive_int("workers", workers)
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["poskernels.sweep.point"])  # a new pool starts in ~0.1 s, not ~1 s
        _start_forkserver()
    else:  # pragma: no cover - Windows
        context = multiprocessing.get_context("spawn")
    return Backend(
        name=f"local:{workers}",
        slots=workers,
        new=lambda: process_pool(workers, mp_context=context, initializer=worker_init),
        halt=halt,
    )


def dask_backend(address: str, slots: int | None = None, timeout: float = 30.0) -> Backend:
    """A Dask distributed scheduler at ``address`` (e.g. ``tcp://127.0.0.1:8786``).

    Jobs go through ``Client.get_executor(pure=False)``: a :class:`concurrent.futures.Executor`
    whose futures the driver waits on like a process pool's.  ``slots`` defaults to the cluster's
    total worker threads.  Workers must have ``poskernels`` installed.

    Parameters
    ----------
    address : str
        The scheduler's address, ``tcp://HOST:PORT`` (or another scheme Dask knows).
    slots : int, optional
        Jobs run at once; default the cluster's worker threads (waits up to ``timeout`` for one worker).
    timeout : float
        Seconds to wait for the scheduler (and, without ``slots``, for a worker).

    Returns
    -------
    Backend
        Named ``dask:<address>``; its ``close`` closes the client.

    Raises
    ------
    PosKernelsError
        If ``distributed`` is not installed, or ``address`` is not a scheduler address (bad input: exit 2).
    ConnectionError
        If a well-formed address does not answer (a failure while running: exit 1).

    Examples
    --------
    >>> dask_backend("tcp://127.0.0.1:99999")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --scheduler: 'tcp://127.0.0.1:99999' is not a Dask scheduler ... (port 99999 ...
    """
    try:
        from distributed import Client
    except ImportError:
        raise PosKernelsError(
            "--scheduler needs Dask distributed; install it with: pip install 'poskernels[sweep]'"
        ) from None
    shown = repr(address) if len(str(address)) <= 80 else f"{str(address)[:60]!r}... ({len(address)} characters)"
    try:
        _knock(address, timeout)  # a refused port answers at once, not after Client's whole timeout
        client = Client(address, timeout=timeout)
    except (ValueError, TypeError) as err:  # a malformed address: bad input
        why = str(err).splitlines()[0][:160] if str(err) else type(err).__name__
        raise PosKernelsError(f"--scheduler: {shown} is not a Dask scheduler address ({why}); "
                              "give one such as tcp://HOST:8786") from None  # fmt: skip
    except OSError as err:  # a well-formed address that does not answer: a failure while running (exit 1)
        why = (str(err) or type(err).__name__).splitlines()[0][:160]
        raise ConnectionError(errno.ECONNREFUSED, f"cannot reach the Dask scheduler at {shown} ({why}); "
                              "is it running?") from None  # fmt: skip
    if slots is None:
        client.wait_for_workers(1, timeout=timeout)
        slots = max(1, sum(client.nthreads().values()))
    return Backend(
        name=f"dask:{address}", slots=check_positive_int("workers", slots),
        new=lambda: client.get_executor(pure=False), halt=lambda ex: ex.shutdown(wait=False),  # cancels its futures
        close=client.close,
    )  # fmt: skip


def _knock(address: str, timeout: float) -> None:
    """Parse a scheduler address (ValueError if malformed) and, for TCP, open and close one connection to it."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    if not isinstance(address, str) or "\x00" in address:
        raise ValueError("an address is text without NUL bytes")
    scheme, location = parse_address(address)
    if scheme not in ("tcp", "tls"):
        return
    host, port = parse_host_port(location)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is not in 1..65535")
    socket.create_connection((host, port), timeout=min(timeout, 10.0)).close()


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
