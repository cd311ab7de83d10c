"""One process pool for every parallel loop of the package: the trainer's stacks of seeds, the laboratory's reads,
the long-context points and the sweep's jobs.

:func:`run_jobs` runs a module-level function over a list of arguments, in this process when one process is asked
for (or there is one job), else on a pool, and yields each result with its index as it finishes; the caller puts
results in place by index, so the order in which processes finish never changes a number.  :func:`process_pool`
is the one constructor of a pool (the sweep keeps its own pool alive across jobs, with its start method).  Inside
:func:`sharing`, every :func:`run_jobs` of every thread submits to one pool, so parts of a run that overlap (the
page's trained sections) queue their jobs on the same processes instead of each starting its own.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from contextlib import contextmanager
from multiprocessing.connection import wait as wait_for

__all__ = ["available_cpus", "halt", "process_pool", "run_jobs", "sharing", "worker_init"]

_SHARED: list[tuple[ProcessPoolExecutor, int]] = []  # (pool, processes) every run_jobs uses while sharing() is open


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one), the default pool size.

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> available_cpus() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def worker_init() -> None:
    """Setup of every worker process: Ctrl-C is the parent's to handle, and a worker outlives no parent.

    A worker ignores SIGINT (the terminal sends it to the whole process group; the parent stops the pool with
    :func:`halt`, so a Ctrl-C prints one line, not a traceback per process), and exits when its parent dies, even
    by SIGKILL: an orphan would compute for no one.

    Returns
    -------
    None

    Examples
    --------
    Every pool of :func:`process_pool` runs it in each worker (never call it in the parent: it would ignore Ctrl-C):

    >>> with process_pool(1) as pool:
    ...     pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
    True
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:

        def watch():
            wait_for([parent.sentinel])
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="poskernels-parent-watch").start()


def process_pool(workers: int, mp_context=None, initializer: Callable[[], None] = worker_init) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes set up by :func:`worker_init` (``mp_context``: a start method's context).

    Parameters
    ----------
    workers : int
        Processes of the pool.
    mp_context : multiprocessing context, optional
        The start method's context (``multiprocessing.get_context("forkserver")``); the default method if None.
    initializer : callable
        Run once in each worker; :func:`worker_init` by default.

    Returns
    -------
    concurrent.futures.ProcessPoolExecutor
        The pool; stop it with :func:`halt` on an error or a Ctrl-C, else ``shutdown()``.

    Examples
    --------
    >>> with process_pool(2) as pool:
    ...     sorted(pool.map(abs, [-3, 2]))
    [2, 3]
    """
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp_context, initializer=initializer)


def halt(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: queued jobs cancelled, running ones' processes terminated (a Ctrl-C, an error).

    Parameters
    ----------
    pool : concurrent.futures.ProcessPoolExecutor
        A pool of :func:`process_pool`.

    Returns
    -------
    None

    Examples
    --------
    >>> import time
    >>> pool = process_pool(1)
    >>> job = pool.submit(time.sleep, 60)
    >>> halt(pool)  # at once: the sleeping worker is terminated, not waited for
    >>> try:
    ...     pool.submit(abs, 1)
    ... except RuntimeError:  # shut down (or broken): it takes no more jobs
    ...     print("stopped")
    stopped
    """
    procs = list((getattr(pool, "_processes", None) or {}).values())  # CPython's own attribute
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.terminate()
    for p in procs:
        p.join(timeout=5)


def run_jobs(fn: Callable, args: Iterable, workers: int) -> Iterator[tuple[int, object]]:
    """``fn(a)`` for each ``a`` of ``args``, yielded as ``(index, result)``.

    In this process and in order when ``workers <= 1`` or there is one job; else on a pool of
    ``min(workers, len(args))`` processes, as each finishes (``fn`` and its arguments must pickle).

    Parameters
    ----------
    fn : callable
        A module-level function of one argument.
    args : iterable
        Its arguments, one job each.
    workers : int
        Processes to use at most; 1 (or less) runs every job here.

    Yields
    ------
    index : int
        The job's place in ``args``.
    result : object
        ``fn(args[index])``.

    Examples
    --------
    >>> list(run_jobs(abs, [-3, 2], workers=1))
    [(0, 3), (1, 2)]
    """
    args = list(args)
    if workers <= 1 or len(args) <= 1:
        for i, a in enumerate(args):
            yield i, fn(a)
        return
    if _SHARED:
        shared, processes = _SHARED[0]
        yield from _windowed(shared, fn, args, processes + 1)
        return
    pool = process_pool(min(workers, len(args)))
    try:
        yield from _as_completed(pool, fn, args)
    except BaseException:  # Ctrl-C, a failed job or a caller that stopped reading: nothing left running
        halt(pool)
        raise
    pool.shutdown()


def _as_completed(pool: ProcessPoolExecutor, fn: Callable, args: list) -> Iterator[tuple[int, object]]:
    futures = {pool.submit(fn, a): i for i, a in enumerate(args)}
    for future in as_completed(futures):
        yield futures[future], future.result()


def _windowed(pool: ProcessPoolExecutor, fn: Callable, args: list, window: int) -> Iterator[tuple[int, object]]:
    """Like :func:`_as_completed`, with at most ``window`` of this caller's jobs in the pool at a time: callers that
    share a pool take turns (one caller's long queue does not hold back another's short jobs)."""
    todo = iter(enumerate(args))
    pending: dict = {}

    def submit_next() -> None:
        for i, a in todo:
            pending[pool.submit(fn, a)] = i
            return

    for _ in range(window):
        submit_next()
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            i = pending.pop(future)
            submit_next()
            yield i, future.result()


def _nothing(_) -> None:
    return None


@contextmanager
def sharing(workers: int) -> Iterator[ProcessPoolExecutor | None]:
    """Within the block, :func:`run_jobs` (from any thread) runs its jobs on one pool of ``workers`` processes.

    The processes start on entry, in the calling thread, before any other thread can ask for them (a process
    forked while another thread holds a lock could inherit it held).  Each caller keeps at most ``workers + 1`` jobs
    in the pool and submits the next as one finishes, so concurrent callers take turns; each still gets its own
    results by index.  With ``workers <= 1``, or inside another ``sharing``, nothing
    changes.

    Parameters
    ----------
    workers : int
        Processes of the shared pool.

    Yields
    ------
    concurrent.futures.ProcessPoolExecutor or None
        The shared pool, or None where nothing is shared (``workers <= 1``, or inside another ``sharing``).

    Examples
    --------
    >>> with sharing(2):
    ...     sorted(run_jobs(abs, [-3, 2], workers=2))
    [(0, 3), (1, 2)]
    """
    if workers <= 1 or _SHARED:
        yield None
        return
    pool = process_pool(workers)
    try:
        list(pool.map(_nothing, range(workers)))  # start every process now
        _SHARED.append((pool, workers))
        yield pool
    except BaseException:  # Ctrl-C or an error in the block: stop the processes instead of waiting for their jobs
        halt(pool)
        raise
    finally:
        if (pool, workers) in _SHARED:
            _SHARED.remove((pool, workers))
    pool.shutdown()
