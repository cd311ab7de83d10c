"""``poskernels lab``: serve the laboratory's static page on 127.0.0.1.

The page (``lab/static/``) is plain HTML, CSS and JavaScript modules with no build step and no network; it
reads ``payload.json``: the one ``poskernels reproduce`` wrote (``--payload``, default ``results/payload.json``)
when there is one, else the reference payload shipped beside the page.  Browsers do not load JavaScript modules
from ``file://`` URLs, hence a
small local server.  It listens on 127.0.0.1 unless another address is asked for explicitly.

The server under abuse: no thread waits on a client that is still sending its request.  One thread (the gate,
:class:`_Gate`) reads the request head (the request line and the headers) of every open connection without
blocking; a connection whose whole head has not arrived :attr:`_Handler.timeout` seconds after it opened is
closed (a deadline for the whole head, not per read, so a client trickling header lines cannot stay).  Only a
complete head is handed to one of at most :attr:`_Server.max_threads` worker threads, which answers at once.
Open connections still sending their head are capped in total (:attr:`_Server.max_connections`) and per client
address (:attr:`_Server.max_per_client`); past a cap the *oldest* of them is closed, never the newcomer, so a
well-behaved client, whose head arrives at once, is always served while slow and idle connections are held.
A head larger than :attr:`_Server.max_head_bytes` gets 431.  A path with a NUL byte or that cannot be decoded gets
400; a folder is never listed (404); nothing outside the static folder is served.

Examples
--------
>>> import threading, urllib.request
>>> server = make_server(port=0)
>>> t = threading.Thread(target=server.serve_forever, daemon=True); t.start()
>>> url = f"http://127.0.0.1:{server.server_address[1]}/payload.json"
>>> urllib.request.urlopen(url).headers["Content-Type"]
'application/json'
>>> server.shutdown(); server.server_close()
"""

from __future__ import annotations

import argparse
import errno
import functools
import io
import ipaddress
import queue
import selectors
import socket
import sys
import threading
import time
from collections import Counter
from http import HTTPStatus
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path

from ..errors import PosKernelsError, check_int

__all__ = ["DEFAULT_PAYLOAD", "STATIC_DIR", "add_arguments", "choose_payload", "is_loopback", "make_server", "run"]

#: The page and its reference payload, shipped inside the package.
STATIC_DIR = Path(__file__).parent / "static"
#: Where ``poskernels reproduce`` writes its payload by default (relative to the current directory).
DEFAULT_PAYLOAD = Path("results") / "payload.json"

LOCALHOST = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    """Serves ``STATIC_DIR`` only, with the right types for modules and JSON, no caching, and quiet logs."""

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".json": "application/json",
        ".css": "text/css",
        ".html": "text/html; charset=utf-8",
    }

    payload: Path | None = None  # a payload file served at /payload.json instead of the directory's

    def translate_path(self, path):
        if self.payload is not None and path.split("?", 1)[0].split("#", 1)[0] == "/payload.json":
            return str(self.payload)
        return super().translate_path(path)

    #: Seconds a connection has to send its whole request head (the gate's deadline), and that one write of the
    #: answer may wait on a client that stops reading.
    timeout = 10.0

    def setup(self):
        ready = self.request
        if not isinstance(ready, _Ready):  # a socket given directly (the base class's way)
            return super().setup()
        self.request = self.connection = ready.sock
        self.connection.settimeout(self.timeout)
        self.rfile = io.BufferedReader(_Prefixed(ready.head, self.connection))  # the head the gate read, then more
        self.wfile = _Writer(self.connection)

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def send_head(self):
        # A NUL byte or an undecodable escape in the path would reach open() and raise: answer 400 instead.
        try:
            path = self.translate_path(self.path)
            path.encode("utf-8")
        except (ValueError, UnicodeError):
            self.send_error(HTTPStatus.BAD_REQUEST, "malformed path")
            return None
        if "\x00" in path:
            self.send_error(HTTPStatus.BAD_REQUEST, "malformed path")
            return None
        try:
            return super().send_head()
        except (ValueError, UnicodeError):
            self.send_error(HTTPStatus.BAD_REQUEST, "malformed path")
            return None

    def list_directory(self, path):
        self.send_error(HTTPStatus.NOT_FOUND, "no listing")  # the page names its files; a folder is not browsed
        return None

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


class _Ready:
    """A connection whose request head has arrived whole: the socket and the bytes the gate read from it."""

    __slots__ = ("sock", "head")

    def __init__(self, sock: socket.socket, head: bytes):
        self.sock, self.head = sock, head


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


class _Writer(io.BufferedIOBase):
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
    __slots__ = ("address", "host", "data", "since")

    def __init__(self, address, since: float):
        self.address, self.data, self.since = address, b"", since
        self.host = address[0] if isinstance(address, tuple) else str(address)


class _Gate:
    """Reads the request head of every open connection in one thread, without blocking on any client.

    A connection joins with :meth:`add` (from the accept loop); when its head is whole (a blank line), or its
    client closed its side, it is handed to the server's workers; past the deadline it is closed; past a cap the
    oldest connection still sending is closed to make room (see the module's docstring).
    """

    def __init__(self, server: _Server):
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
        if b"\r\n\r\n" in p.data or b"\n\n" in p.data:
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

    def _ready(self, sock: socket.socket) -> None:
        p = self._forget(sock)
        try:
            sock.setblocking(True)
        except OSError:
            sock.close()
            return
        self.server.dispatch(_Ready(sock, p.data), p.address)


class _Server(HTTPServer):
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

    def process_request(self, request, client_address):
        self._gate.add(request, client_address)  # never blocks the accept loop

    def dispatch(self, ready: _Ready, client_address) -> None:
        """Queue a connection whose request head has arrived for a worker (a new one if all are busy)."""
        with self._lock:
            self._busy += 1
            if self._busy > len(self._workers) and len(self._workers) < self.max_threads:
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


def choose_payload(path=None) -> Path:
    """The payload to serve: ``path`` if given (it must exist), else ``results/payload.json`` if ``reproduce`` wrote
    one here, else the reference shipped with the package.

    >>> choose_payload(STATIC_DIR / "payload.json").name
    'payload.json'
    >>> choose_payload("no/such.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: no payload file at 'no/such.json'; give the payload.json ...
    """
    if path is not None:
        if not Path(path).is_file():
            raise PosKernelsError(
                f"no payload file at {str(path)!r}; give the payload.json that `poskernels reproduce` wrote, "
                "or leave --payload out for the shipped one"
            )
        return Path(path)
    return DEFAULT_PAYLOAD if DEFAULT_PAYLOAD.is_file() else STATIC_DIR / "payload.json"


class _Server6(_Server):
    address_family = socket.AF_INET6


def is_loopback(host: str) -> bool:
    """True for an address of this machine only: any of 127.0.0.0/8, ``::1`` (and ``localhost``).

    >>> [is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost", "0.0.0.0", "192.168.1.4")]
    [True, True, True, True, False, False]
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def make_server(
    host: str = LOCALHOST, port: int = 8000, directory: Path = STATIC_DIR, payload: Path | None = None
) -> HTTPServer:
    """An HTTP server for the page, bound to ``host:port`` (``port=0``: any free port).

    One gate thread reads the request heads, a few workers answer (see the module's docstring).

    ``payload`` is served at ``/payload.json`` in place of the directory's own (None: the directory's).

    Raises
    ------
    PosKernelsError
        If ``port`` is not in 0..65535, or the address cannot be bound (in use, not this machine's).
    """
    check_int("port", port, 0, 65535)
    if not isinstance(host, str) or not host or "\x00" in host:
        raise PosKernelsError(f"host must be an address or a host name; got {host!r}")
    handler_class = _Handler if payload is None else type("_PayloadHandler", (_Handler,), {"payload": Path(payload)})
    handler = functools.partial(handler_class, directory=str(directory))
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as err:
        raise PosKernelsError(f"cannot serve on {host!r}: not an address of this machine ({err})") from None
    family, address = infos[0][0], infos[0][4]
    try:
        return (_Server6 if family == socket.AF_INET6 else _Server)(address[:2], handler)
    except OSError as err:
        why = err.strerror or str(err)
        if err.errno == errno.EADDRINUSE:
            hint = "the port is in use; try another --port (0 picks a free one)"
        elif err.errno == errno.EADDRNOTAVAIL:
            hint = "the address is not one of this machine's; try --host 127.0.0.1"
        elif err.errno == errno.EACCES:
            hint = "ports below 1024 need privileges; try another --port"
        else:
            hint = "try another --host or --port"
        raise PosKernelsError(f"cannot serve on {host}:{port} ({why}); {hint}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument(
        "--host",
        default=LOCALHOST,
        help="address to listen on (default 127.0.0.1, this machine only; give another only on purpose)",
    )
    p.add_argument(
        "--payload",
        type=Path,
        default=None,
        help=f"payload to show (default: {DEFAULT_PAYLOAD} if `poskernels reproduce` wrote it, else the shipped one)",
    )


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C (exit status 130, as every command interrupted); print the URL first."""
    payload = choose_payload(getattr(args, "payload", None))
    server = make_server(args.host, args.port, payload=payload.resolve())
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        print(
            f"note: listening on {host}, which other machines may reach, not on this machine alone (a loopback "
            f"address such as {LOCALHOST})"
        )
    print(f"poskernels lab: serving {STATIC_DIR} with {payload} at http://{shown}:{port}/  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nposkernels lab: stopped")
        return 130
    finally:
        server.server_close()
    return 0
