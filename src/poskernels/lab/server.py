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

Each request is answered by :mod:`poskernels.lab.handler`.  The census view (:mod:`poskernels.lab.census_view`)
answers ``GET /census/models``, ``GET /census/model?name=...`` and ``POST /census/upload`` (a ``config.json`` as
the body, its ``Content-Length`` at most :data:`~poskernels.lab.census_view.UPLOAD_LIMIT`, the whole body within
the handler's ``timeout``); every answer is JSON, an error ``{"error": one line}``.

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
import socket
from http.server import HTTPServer
from pathlib import Path

from ..errors import PosKernelsError, check_int
from . import census_view
from .gate import GatedServer
from .handler import _Handler
from .sandbox import CensusRunner

__all__ = ["DEFAULT_PAYLOAD", "LOCALHOST", "STATIC_DIR", "choose_payload", "make_server"]

#: The page and its reference payload, shipped inside the package.
STATIC_DIR = Path(__file__).parent / "static"
#: Where ``poskernels reproduce`` writes its payload by default (relative to the current directory).
DEFAULT_PAYLOAD = Path("results") / "payload.json"

LOCALHOST = "127.0.0.1"


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
