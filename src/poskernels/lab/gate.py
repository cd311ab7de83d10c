"""The lab server's plumbing under abuse: a gate thread reads request heads, a few workers answer.

No thread waits on a client that is still sending its request.  One thread (the gate, :class:`_Gate`) reads the
request head (the request line and the headers) of every open connection without blocking; a connection whose
whole head has not arrived within the handler's ``timeout`` seconds after it opened is closed (a deadline for the
whole head, not per read, so a client trickling header lines cannot stay).  Only a complete head is handed to one
of at most :attr:`GatedServer.max_threads` worker threads, which answers at once.  Connections still sending their
head are capped in total (:attr:`GatedServer.max_connections`) and per client address
(:attr:`GatedServer.max_per_client`); past a cap the *oldest* of them is closed, never the newcomer, so a
well-behaved client, whose head arrives at once, is always served while slow and idle connections are held.  A head
larger than :attr:`GatedServer.max_head_bytes` gets 431.  The handler reads the head the gate kept, through
:class:`Ready` (its ``setup`` unwraps it).

A request with a body (an upload: a ``Content-Length`` of at most :attr:`GatedServer.max_body_bytes`) is held by the
gate until the body has arrived too, under the same deadline and caps, so a client sending its body slowly holds no
worker; at the deadline it is handed on marked unfinished (:attr:`Ready.whole` false), and the handler answers 408
without waiting.  A ``Content-Length`` past the limit, or not a number, is handed on at once for the handler to refuse.
"""

from __future__ import annotations

import io
import queue
import selectors
import socket
import sys
import threading
import time
from collections import Counter
from http.server import HTTPServer

__all__ = ["GatedServer", "Ready", "Writer", "body_length", "prefixed"]


class Ready:
    """A connection whose request head has arrived whole: the socket and the bytes the gate read from it.

    ``whole`` is false when the body the head announced did not arrive by the deadline.
    """

    __slots__ = ("sock", "head", "whole")

    def __init__(self, sock: socket.socket, head: bytes, whole: bool = True):
        self.sock, self.head, self.whole = sock, head, whole


def body_length(head: bytes, limit: int) -> int:
    r"""Bytes of body the gate waits for after ``head``: its ``Content-Length`` if a number within ``limit``, else 0.

    Parameters
    ----------
    head : bytes
        The request's line and headers.
    limit : int
        The largest body the gate waits for.

    Returns
    -------
    int

    Examples
    --------
    >>> body_length(b"POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n", 100), body_length(b"GET / HTTP/1.1\r\n\r\n", 9)
    (12, 0)
    >>> body_length(b"POST / HTTP/1.1\r\ncontent-length: 10000\r\n\r\n", 100)  # past the limit: refused unread
    0
    """
    for line in head.split(b"\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            value = value.strip()
            if value.isdigit() and len(value) <= 18 and int(value) <= limit:
                return int(value)
            return 0
    return 0


def prefixed(head: bytes, sock: socket.socket) -> io.BufferedReader:
    """A buffered reader of ``sock`` whose first bytes are ``head``.

    Parameters
    ----------
    head : bytes
        The bytes the gate already read.
    sock : socket.socket
        The connection.

    Returns
    -------
    io.BufferedReader

    Examples
    --------
    >>> a, b = socket.socketpair()
    >>> b.sendall(b" world"); b.close()
    >>> prefixed(b"hello", a).read()
    b'hello world'
    >>> a.close()
    """
    return io.BufferedReader(_Prefixed(head, sock))


class _Prefixed(io.RawIOBase):
    """A socket read as a stream whose first bytes are ``head`` (already read by the gate)."""

    def __init__(self, head: bytes, sock: socket.socket):
        super().__init__()
        self._head, self._sock = memoryview(head), sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._sock.recv_into(buffer)


class Writer(io.BufferedIOBase):
    """Writes to a socket with ``sendall`` (a raw socket file may write part of a buffer)."""

    def __init__(self, sock: socket.socket):
        super().__init__()
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._sock.sendall(data)
        with memoryview(data) as view:
            return view.nbytes


class _Pending:
    __slots__ = ("address", "host", "data", "since", "end")

    def __init__(self, address, since: float):
        self.address, self.data, self.since = address, b"", since
        self.end: int | None = None  # once the head is whole: the length of head plus the body it announced
        self.host = address[0] if isinstance(address, tuple) else str(address)


class _Gate:
    """Reads the request head of every open connection in one thread, without blocking on any client.

    A connection joins with :meth:`add` (from the accept loop); when its head is whole (a blank line), or its
    client closed its side, it is handed to the server's workers; past the deadline it is closed; past a cap the
    oldest connection still sending is closed to make room (see the module's docstring).
    """

    def __init__(self, server: GatedServer):
        self.server = server
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = socket.socketpair()
        for s in (self.wake_r, self.wake_w):
            s.setblocking(False)
        self.selector.register(self.wake_r, selectors.EVENT_READ)
        self.incoming: queue.SimpleQueue = queue.SimpleQueue()
        self.pending: dict[socket.socket, _Pending] = {}  # in arrival order: the first is the oldest
        self.per_host: Counter = Counter()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="poskernels-lab-gate", daemon=True)
        self.thread.start()

    def add(self, sock: socket.socket, address) -> None:
        self.incoming.put((sock, address))
        self._wake()

    def stop(self) -> None:
        self.stopping = True
        self._wake()
        self.thread.join(timeout=5)
        for sock in list(self.pending):
            self._drop(sock)
        while not self.incoming.empty():
            self.incoming.get()[0].close()
        self.selector.close()
        self.wake_r.close()
        self.wake_w.close()

    def _wake(self) -> None:
        try:
            self.wake_w.send(b"x")
        except OSError:  # full (already woken) or closed (stopping)
            pass

    def _run(self) -> None:
        while not self.stopping:
            try:
                self._step()
            except (OSError, ValueError):  # a socket that failed under us: forget the dead ones, keep serving
                for sock in [s for s in self.pending if s.fileno() < 0]:
                    self._forget(sock)

    def _step(self) -> None:
        timeout = 0.25
        if self.pending:
            oldest = next(iter(self.pending.values())).since
            timeout = min(timeout, max(0.0, oldest + self.server.head_timeout() - time.monotonic()))
        for key, _ in self.selector.select(timeout):
            if key.fileobj is self.wake_r:
                try:
                    while self.wake_r.recv(4096):
                        pass
                except OSError:
                    pass
            elif key.fileobj in self.pending:
                self._read(key.fileobj)
        self._admit()
        self._expire()

    def _admit(self) -> None:
        while not self.incoming.empty():
            sock, address = self.incoming.get()
            p = _Pending(address, time.monotonic())
            host = p.host
            while len(self.pending) >= self.server.max_connections:  # the oldest still sending makes room
                self._drop(next(iter(self.pending)))
            if self.per_host[host] >= self.server.max_per_client:
                self._drop(next(s for s, p in self.pending.items() if p.host == host))
            try:
                sock.setblocking(False)
                self.selector.register(sock, selectors.EVENT_READ)
            except (OSError, ValueError):
                sock.close()
                continue
            self.pending[sock] = p
            self.per_host[host] += 1

    def _read(self, sock: socket.socket) -> None:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(sock)
            return
        p = self.pending[sock]
        if not chunk:  # the client closed its side: what it sent is the whole request (an answer, or a close)
            self._ready(sock) if p.data else self._drop(sock)
            return
        p.data += chunk
        if p.end is None:
            cut = _head_end(p.data)
            if cut is not None:
                p.end = cut + body_length(p.data[:cut], self.server.max_body_bytes)
        if p.end is not None:
            if len(p.data) >= p.end:  # the head and the body it announced: a whole request
                self._ready(sock)
        elif len(p.data) > self.server.max_head_bytes:
            try:
                sock.send(b"HTTP/1.0 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            self._drop(sock)

    def _expire(self) -> None:
        deadline = time.monotonic() - self.server.head_timeout()
        while self.pending:
            sock, p = next(iter(self.pending.items()))
            if p.since > deadline:
                return
            if p.end is not None:  # a whole head, a body still arriving: the handler answers 408 at once
                self._ready(sock, whole=False)
            else:
                self._drop(sock)  # its whole head did not arrive in time: closed without an answer

    def _forget(self, sock: socket.socket) -> _Pending | None:
        p = self.pending.pop(sock, None)
        if p is not None:
            self.per_host[p.host] -= 1
            if not self.per_host[p.host]:
                del self.per_host[p.host]
            try:
                self.selector.unregister(sock)
            except (KeyError, ValueError, OSError):
                pass
        return p

    def _drop(self, sock: socket.socket) -> None:
        self._forget(sock)
        sock.close()

    def _ready(self, sock: socket.socket, whole: bool = True) -> None:
        p = self._forget(sock)
        try:
            sock.setblocking(True)
        except OSError:
            sock.close()
            return
        self.server.dispatch(Ready(sock, p.data, whole), p.address)


def _head_end(data: bytes) -> int | None:
    """Where the request head ends in ``data`` (after its blank line), None if it has not yet."""
    ends = [i + len(sep) for sep in (b"\r\n\r\n", b"\n\n") if (i := data.find(sep)) >= 0]
    return min(ends) if ends else None


class GatedServer(HTTPServer):
    """The gate (:class:`_Gate`) reads request heads; at most :attr:`max_threads` workers answer whole requests.

    Errors of a client (a reset, a timeout) are not tracebacks.
    """

    #: Listen backlog (the kernel caps it at ``net.core.somaxconn``); the accept loop never waits on a client.
    request_queue_size = 1024
    #: Worker threads, started as needed, that answer requests whose head has arrived.
    max_threads = 16
    #: Connections still sending their request head, in all and per client address.
    max_connections = 512
    max_per_client = 384
    #: Largest request head read (http.server's own limits apply inside it: 64 KiB per line, 100 headers).
    max_head_bytes = 2**17
    #: Largest body the gate waits for (an upload); a longer one is handed on unread, for the handler to refuse.
    max_body_bytes = 2**20

    def __init__(self, *args, **kwargs):
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._busy = 0
        self._lock = threading.Lock()
        super().__init__(*args, **kwargs)
        self._gate = _Gate(self)

    def head_timeout(self) -> float:
        """Seconds a connection has to send its whole request head: the handler's ``timeout``."""
        handler = getattr(self.RequestHandlerClass, "func", self.RequestHandlerClass)  # through functools.partial
        return float(getattr(handler, "timeout", None) or 10.0)

    def thread_cap(self) -> int:
        """Worker threads at most: :attr:`max_threads` (a subclass adds those its long waits may hold)."""
        return self.max_threads

    def process_request(self, request, client_address):
        self._gate.add(request, client_address)  # never blocks the accept loop

    def dispatch(self, ready: Ready, client_address) -> None:
        """Queue a connection whose request head has arrived for a worker (a new one if all are busy)."""
        with self._lock:
            self._busy += 1
            if self._busy > len(self._workers) and len(self._workers) < self.thread_cap():
                worker = threading.Thread(target=self._serve, name="poskernels-lab-worker", daemon=True)
                self._workers.append(worker)
                worker.start()
        self._work.put((ready, client_address))

    def _serve(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            ready, address = item
            try:
                self.finish_request(ready, address)
            except Exception:  # noqa: BLE001 - one client's failure is reported (or not) and the worker goes on
                self.handle_error(ready.sock, address)
            finally:
                self.shutdown_request(ready.sock)
                with self._lock:
                    self._busy -= 1

    def server_close(self):
        super().server_close()
        if getattr(self, "_gate", None) is not None:  # None when the address could not be bound
            self._gate.stop()
        for _ in self._workers:
            self._work.put(None)

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)
