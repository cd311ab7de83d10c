"""One process pool for every parallel loop of the package: the trainer's stacks of seeds, the laboratory's reads,
the long-context points and the sweep's jobs.

:func:`run_jobs` runs a module-level function over a list of arguments, in this process when one process is asked
for (or there is one job), else on a pool, and yields each result with its index as it finishes; the caller puts
results in place by index, so the order in which processes finish never changes a number.  :func:`process_pool`
is the one constructor of a pool (the sweep keeps its own pool alive across jobs, with its start method).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

__all__ = ["available_cpus", "process_pool", "run_jobs"]


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one), the default pool size.

    >>> available_cpus() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def process_pool(workers: int, mp_context=None, initializer: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes (``mp_context``: a start method's context; default the platform's)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp_context, initializer=initializer)


def run_jobs(fn: Callable, args: Iterable, workers: int) -> Iterator[tuple[int, object]]:
    """``fn(a)`` for each ``a`` of ``args``, yielded as ``(index, result)``.

    In this process and in order when ``workers <= 1`` or there is one job; else on a pool of
    ``min(workers, len(args))`` processes, as each finishes (``fn`` and its arguments must pickle).

    >>> list(run_jobs(abs, [-3, 2], workers=1))
    [(0, 3), (1, 2)]
    """
    args = list(args)
    if workers <= 1 or len(args) <= 1:
        for i, a in enumerate(args):
            yield i, fn(a)
        return
    with process_pool(min(workers, len(args))) as pool:
        futures = {pool.submit(fn, a): i for i, a in enumerate(args)}
        for future in as_completed(futures):
            yield futures[future], future.result()
