"""The laboratory's server: the static page on 127.0.0.1 (``poskernels lab``, :mod:`poskernels.cli.lab`).

The page (``lab/static/``) is plain HTML, CSS and JavaScript modules with no build step and no network; it
reads ``payload.json``: the one ``poskernels reproduce`` wrote (``--payload``, default ``results/payload.json``)
when there is one, else the reference payload shipped beside the page.  Browsers do not load JavaScript modules
from ``file://`` URLs, hence a
small local server.  It listens on 127.0.0.1 unless another address is asked for explicitly.

The server under abuse (:mod:`poskernels.lab.gate`): one gate thread reads every connection's request head with a
deadline for the whole head (:attr:`_Handler.timeout`), connections still sending are capped in total and per
client address (the oldest closed to make room), and only whole requests reach the few worker threads.  A path
with a NUL byte or that cannot be decoded gets 400; a folder is never listed (404); nothing outside the static
folder is served.

An upload's body is read by the gate as well (a slow body holds no worker), and every census runs in a process of
its own (:mod:`poskernels.lab.sandbox`: capped in number and per client, in memory, killed at its deadline), never on
a thread that serves pages.  A request whose ``Origin`` is not the lab's own (``http://`` a loopback name or the
address served, and the port served), or that a browser marks ``Sec-Fetch-Site: cross-site``, is refused with 403:
a page on another site cannot drive the local lab through the user's browser.

The census view (:mod:`poskernels.lab.census_view`) answers ``GET /census/models``, ``GET /census/model?name=...``
and ``POST /census/upload`` (a ``config.json`` as the body, its ``Content-Length`` at most
:data:`~poskernels.lab.census_view.UPLOAD_LIMIT`, the whole body within the handler's ``timeout``); every answer
is JSON, an error ``{"error": one line}``.

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

import errno
import functools
import ipaddress
import json
import socket
import time
from http import HTTPStatus
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import PosKernelsError, check_int
from . import census_view, probe_view
from .gate import GatedServer, Ready, Writer, prefixed
from .sandbox import CensusRunner

#: A body past the upload limit but at most this long is read (within the handler's deadline) and dropped before
#: the 413, so that the answer reaches the client; a longer one is refused before its body is read.
DRAIN_LIMIT = 4 * census_view.UPLOAD_LIMIT

__all__ = ["DEFAULT_PAYLOAD", "LOCALHOST", "STATIC_DIR", "choose_payload", "is_loopback", "make_server"]

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
        if not isinstance(ready, Ready):  # a socket given directly (the base class's way)
            return super().setup()
        self.request = self.connection = ready.sock
        self._whole = ready.whole
        self.connection.settimeout(self.timeout)
        self.rfile = prefixed(ready.head, self.connection)  # the head the gate read, then the rest
        self.wfile = Writer(self.connection)

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

    _whole = True  # the gate saw the whole body (see :class:`~poskernels.lab.gate.Ready`)

    def _foreign(self) -> str | None:
        """Why this request comes from another site (its ``Origin``, or ``Sec-Fetch-Site``), or None."""
        if self.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site":
            return "Sec-Fetch-Site: cross-site"
        origin = self.headers.get("Origin")
        if origin is None:
            return None  # not sent by a browser for a same-origin GET, nor by command-line clients
        try:
            parts = urlsplit(origin.strip())
            host, port = parts.hostname, parts.port or 80
        except ValueError:
            return f"Origin {origin[:80]!r}"
        own_host, own_port = str(self.server.server_address[0]), self.server.server_address[1]
        if parts.scheme == "http" and port == own_port and host and (is_loopback(host) or host == own_host):
            return None
        return f"Origin {origin[:80]!r}"

    def _refuse_foreign(self) -> bool:
        why = self._foreign()
        if why is None:
            return False
        self.close_connection = True
        self._json(HTTPStatus.FORBIDDEN, {"error": f"refused: {why} is not the laboratory's own page"})
        return True

    def do_HEAD(self):  # noqa: N802 - the base class's name
        if not self._refuse_foreign():
            super().do_HEAD()

    def do_GET(self):  # noqa: N802 - the base class's name
        if self._refuse_foreign():
            return None
        route, _, query = self.path.partition("?")
        if route == "/census/models":
            return self._json(HTTPStatus.OK, {"models": census_view.models(), "limit": census_view.UPLOAD_LIMIT})
        if route == "/census/model":
            return self._census("view_of_model", query)
        if route == "/probe/models":  # the "Real models" view (poskernels.lab.probe_view)
            return self._json(HTTPStatus.OK, {"models": probe_view.models()})
        if route == "/probe/view":
            return self._answer(lambda: probe_view.view_of_query(query))
        if route.startswith("/census/"):
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"no census address {route[:80]!r}"})
        return super().do_GET()

    def do_POST(self):  # noqa: N802 - the base class's name
        self.close_connection = True  # a body left unread must not be taken for the next request
        if self._refuse_foreign():
            return None
        route, _, query = self.path.partition("?")
        if route != "/census/upload":
            return self._json(HTTPStatus.NOT_FOUND, {"error": "only /census/upload takes a POST"})
        length = self.headers.get("Content-Length", "")
        if not length.isdigit() or len(length) > 18:
            return self._json(HTTPStatus.LENGTH_REQUIRED, {"error": "the upload needs a Content-Length (bytes)"})
        if int(length) > census_view.UPLOAD_LIMIT:
            if int(length) <= DRAIN_LIMIT:  # read and drop a body a little too large: closing on unread bytes
                self._body(int(length))  # resets the connection, and the client would lose the 413 it is sent
            return self._json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {"error": f"the config file is {int(length)} bytes; the limit is {census_view.UPLOAD_LIMIT} bytes"},
            )
        body = self._body(int(length))
        if body is None:
            return self._json(HTTPStatus.REQUEST_TIMEOUT, {"error": "the upload did not arrive whole in time"})
        try:
            name = census_view.upload_name(query)
        except PosKernelsError as err:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": " ".join(str(err).split())})
        return self._census("view_of_bytes", body, query, name)

    def _answer(self, compute) -> None:
        """Answer with ``compute()``'s JSON (a cheap read of shipped results), or its refusal in one line (400)."""
        try:
            data = compute()
        except PosKernelsError as err:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": " ".join(str(err).split())})
        except Exception as err:  # noqa: BLE001 - the page shows one line; the server goes on
            return self._json(
                HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"the view failed: {type(err).__name__}: {err}"[:300]}
            )
        return self._json(HTTPStatus.OK, data)

    def _census(self, work: str, *args) -> None:
        """Answer with a census run in its own process (:mod:`~poskernels.lab.sandbox`), never on this thread."""
        status, data = self.server.census.run(str(self.client_address[0]), work, *args, watch=self.connection)
        return self._json(status, data)

    def _body(self, length: int) -> bytes | None:
        """The request body, read within :attr:`timeout` seconds in all (None: it did not arrive whole)."""
        if not self._whole:  # the gate held it to the deadline: it did not arrive in time
            return None
        deadline, parts, got = time.monotonic() + self.timeout, [], 0
        while got < length:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.connection.settimeout(left)
            try:
                chunk = self.rfile.read1(min(65536, length - got))
            except (TimeoutError, OSError):
                return None
            if not chunk:
                return None
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def _json(self, status: HTTPStatus, data: dict) -> None:
        body = json.dumps(data, allow_nan=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def list_directory(self, path):
        self.send_error(HTTPStatus.NOT_FOUND, "no listing")  # the page names its files; a folder is not browsed
        return None

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def choose_payload(path=None) -> Path:
    """The payload to serve: ``path`` if given (it must exist), else ``results/payload.json`` if ``reproduce`` wrote
    one here, else the reference shipped with the package.

    Parameters
    ----------
    path : str or path-like, optional
        The payload given (``--payload``).

    Returns
    -------
    Path

    Raises
    ------
    PosKernelsError
        If ``path`` is given and is not a file.

    Examples
    --------
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


class _Server(GatedServer):
    """The gated server with the census runner (its bounds: :class:`~poskernels.lab.gate.GatedServer`'s and
    :class:`~poskernels.lab.sandbox.CensusRunner`'s attributes)."""

    max_body_bytes = census_view.UPLOAD_LIMIT

    def __init__(self, *args, **kwargs):
        self.census = CensusRunner()
        super().__init__(*args, **kwargs)

    def thread_cap(self) -> int:
        """:attr:`max_threads` workers for pages beyond those waiting on a census (at most its ``max_running``:
        past the cap a census is refused at once), so a census never takes a page's worker."""
        return self.max_threads + self.census.max_running

    def server_close(self):
        super().server_close()
        self.census.close()


class _Server6(_Server):
    address_family = socket.AF_INET6


def is_loopback(host: str) -> bool:
    """True for an address of this machine only: any of 127.0.0.0/8, ``::1`` (and ``localhost``).

    Parameters
    ----------
    host : str
        An address or ``localhost`` (IPv6 in brackets too).

    Returns
    -------
    bool

    Examples
    --------
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

    Parameters
    ----------
    host : str
        The address to listen on.
    port : int
        The port, 0..65535.
    directory : Path
        The folder served.
    payload : Path, optional
        Served at ``/payload.json`` in place of the directory's own (None: the directory's).

    Returns
    -------
    http.server.HTTPServer
        Bound, not yet serving.

    Raises
    ------
    PosKernelsError
        If ``port`` is not in 0..65535, or the address cannot be bound (in use, not this machine's).

    Examples
    --------
    >>> server = make_server("127.0.0.1", 0)
    >>> server.server_address[0], server.server_address[1] > 0
    ('127.0.0.1', True)
    >>> server.server_close()
    >>> make_server("127.0.0.1", 70000)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: port must be an integer in [0, 65535]; got 70000
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
