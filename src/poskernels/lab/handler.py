"""How the lab server answers one request: the page's static files, the census and probe views as JSON, and the
refusals (a malformed path 400, a folder 404, another site's page 403, an upload too large 413).

The handler runs on a worker thread of the gated server (:mod:`poskernels.lab.server`, :mod:`poskernels.lab.gate`),
which has already read the request head, and the body of an upload, within the deadline (:attr:`_Handler.timeout`);
a census runs in a process of its own (:mod:`poskernels.lab.sandbox`), never on this thread.  A request whose
``Origin`` is not the lab's own (``http://`` a loopback name (:func:`is_loopback`) or the address served, and the
port served), or that a browser marks ``Sec-Fetch-Site: cross-site``, is refused.
"""

from __future__ import annotations

import ipaddress
import json
import time
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import PosKernelsError
from . import census_view, probe_view
from .gate import Ready, Writer, prefixed

__all__ = ["DRAIN_LIMIT", "is_loopback"]

#: A body past the upload limit but at most this long is read (within the handler's deadline) and dropped before
#: the 413, so that the answer reaches the client; a longer one is refused before its body is read.
DRAIN_LIMIT = 4 * census_view.UPLOAD_LIMIT


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
