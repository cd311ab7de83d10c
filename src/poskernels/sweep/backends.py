"""Where a sweep's jobs run: a backend is a factory of :class:`concurrent.futures.Executor` and its width.

* :func:`local_backend`: a :class:`~concurrent.futures.ProcessPoolExecutor` (the default), its workers forked from
  a clean ``forkserver`` with one BLAS thread each (:data:`WORKER_ENV`);
* :func:`dask_backend`: a Dask distributed cluster, through ``Client.get_executor()``, whose
  futures are :class:`concurrent.futures.Future` too (``pip install 'poskernels[sweep]'``).

The driver (:func:`poskernels.sweep.runner.run_sweep`) runs the same code on either.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import socket
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass

from ..errors import PosKernelsError, check_positive_int
from ..pool import available_cpus, halt, process_pool, worker_init

__all__ = ["Backend", "WORKER_ENV", "dask_backend", "local_backend"]


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
