"""The lab's censuses run in a process of their own: bounded in number, per client, in memory and in time.

A census is CPU work that holds Python's lock: run on a thread that serves pages, a config with ``head_dim`` 65,536
(or fifty small ones at once) would stop the page answering.  :class:`CensusRunner` runs each one in a child process
(forked from a server of processes that has the census code loaded, so a census starts in milliseconds), at a lower
priority, with an address-space limit (:attr:`CensusRunner.memory_bytes`), and kills it at its deadline
(:attr:`CensusRunner.deadline`); at most :attr:`CensusRunner.max_running` run at once and
:attr:`CensusRunner.max_per_client` per client address, and a request past a cap is answered at once (503, "busy")
instead of waiting.  The thread that asked waits on a pipe, which holds no lock, so the page is served meanwhile.
It watches the client's socket as well: a census whose client hung up (a page that asked for a newer census and
aborted this one, or a closed tab) is killed at once and its slot freed, and is not counted against the caps from
the moment the hang-up arrives, so a client's stale requests never hold the cap against its next one.

The work is named (:data:`WORK`), never pickled as code: the child runs only the census view's functions.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import threading
import time
from collections import Counter
from http import HTTPStatus
from multiprocessing.connection import wait

from ..errors import PosKernelsError

__all__ = ["WORK", "CensusRunner"]

#: What a child may run: the census view's functions, by name.
WORK = ("view_of_model", "view_of_bytes")


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["poskernels.lab.census_view"])  # loaded once; each census forks from it
        return ctx
    return multiprocessing.get_context("spawn")


def _hung_up(sock: socket.socket) -> bool:
    """True when the peer closed ``sock`` (end of file, or a reset), read without consuming or waiting."""
    try:
        if not wait([sock], 0):  # (a socket with a timeout would wait that long in recv, whatever the flags)
            return False
        return sock.recv(1, socket.MSG_PEEK | getattr(socket, "MSG_DONTWAIT", 0)) == b""
    except (BlockingIOError, InterruptedError, TimeoutError):
        return False
    except (OSError, ValueError):  # reset, or already closed here
        return True


def _child(conn, work: str, args: tuple, memory_bytes: int) -> None:  # pragma: no cover - runs in the child
    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (ImportError, ValueError, OSError):
        pass
    from . import census_view

    try:
        answer = (HTTPStatus.OK, getattr(census_view, work)(*args))
    except PosKernelsError as err:
        answer = (HTTPStatus.BAD_REQUEST, {"error": " ".join(str(err).split())})
    except MemoryError:
        answer = (HTTPStatus.INSUFFICIENT_STORAGE, {"error": f"the census needs more than {memory_bytes >> 20} MiB"})
    except Exception as err:  # noqa: BLE001 - the page shows one line
        answer = (HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"the census failed: {type(err).__name__}: {err}"[:300]})
    try:
        conn.send(answer)
    finally:
        conn.close()


class CensusRunner:
    """Runs a census (one of :data:`WORK`) in a child process, within the caps; see the module's docstring."""

    #: Censuses running at once, in all and per client address.
    max_running = 2
    max_per_client = 2
    #: Seconds a census may run before its process is killed.
    deadline = 30.0
    #: Address space of a census process (``RLIMIT_AS``), bytes.
    memory_bytes = 2**31

    def __init__(self):
        self._lock = threading.Lock()
        self._running: Counter = Counter()
        self._watched: dict[int, tuple[str, socket.socket]] = {}  # running censuses' clients' sockets
        self._children: set = set()
        self._ctx = None

    def run(self, client: str, work: str, *args, watch: socket.socket | None = None) -> tuple[HTTPStatus, dict]:
        """``(status, JSON)`` of ``census_view.<work>(*args)``, run in a child process; a refusal past a cap.

        ``watch``: the client's socket; if it closes while the census runs, the census is killed and its slot freed
        (its answer, a 503 line, is then read by no one).
        """
        if work not in WORK:
            raise ValueError(f"unknown census work {work!r}")
        with self._lock:
            gone = Counter(c for c, sock in self._watched.values() if _hung_up(sock))  # being stopped: not counted
            total = sum(self._running.values()) - sum(gone.values())
            if total >= self.max_running or self._running[client] - gone[client] >= self.max_per_client:
                return HTTPStatus.SERVICE_UNAVAILABLE, {
                    "error": f"busy: {total} censuses running (at most {self.max_running}, "
                    f"{self.max_per_client} per client); try again when one ends"
                }
            self._running[client] += 1
            if watch is not None:
                self._watched[id(watch)] = (client, watch)
            if self._ctx is None:
                self._ctx = _context()
            ctx = self._ctx
        try:
            return self._run_child(ctx, work, args, watch)
        finally:
            with self._lock:
                if watch is not None:
                    self._watched.pop(id(watch), None)
                self._running[client] -= 1
                if not self._running[client]:
                    del self._running[client]

    def _run_child(self, ctx, work: str, args: tuple, watch=None) -> tuple[HTTPStatus, dict]:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(child, work, args, self.memory_bytes), daemon=True)
        try:
            proc.start()
        except OSError as err:
            parent.close()
            child.close()
            return HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"cannot start a census process: {err}"}
        child.close()
        with self._lock:
            self._children.add(proc)
        try:
            if not self._wait(parent, watch):
                if watch is not None and _hung_up(watch):
                    return HTTPStatus.SERVICE_UNAVAILABLE, {"error": "the client hung up; its census was stopped"}
                return HTTPStatus.SERVICE_UNAVAILABLE, {
                    "error": f"the census ran past its deadline of {self.deadline:g} s and was stopped; a config "
                    "this large is refused here (try `poskernels census FILE` on the command line)"
                }
            try:
                return parent.recv()
            except (EOFError, OSError):
                return HTTPStatus.INSUFFICIENT_STORAGE, {
                    "error": f"the census process ended without an answer (its memory is capped at "
                    f"{self.memory_bytes >> 20} MiB)"
                }
        finally:
            parent.close()
            self._stop(proc)

    def _wait(self, parent, watch) -> bool:
        """Wait for the child's answer until the deadline; False at the deadline or when the client hung up."""
        if watch is None:
            return parent.poll(self.deadline)
        end = time.monotonic() + self.deadline
        while (left := end - time.monotonic()) > 0:
            ready = wait([parent, watch], left)
            if parent in ready:
                return True
            if watch in ready:
                if _hung_up(watch):
                    return False
                return parent.poll(max(end - time.monotonic(), 0))  # it sent more (a pipelined request): stop watching
        return parent.poll(0)

    def _stop(self, proc) -> None:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        with self._lock:
            self._children.discard(proc)

    def close(self) -> None:
        """Kill every census still running (the server is closing)."""
        with self._lock:
            children = list(self._children)
        for proc in children:
            self._stop(proc)
