"""``poskernels lab``: serve the laboratory's static page on 127.0.0.1.

The page (``lab/static/``) is plain HTML, CSS and JavaScript modules with no build step and no network; it
reads ``payload.json``: the one ``poskernels reproduce`` wrote (``--payload``, default ``results/payload.json``)
when there is one, else the reference payload shipped beside the page.  Browsers do not load JavaScript modules
from ``file://`` URLs, hence a
small local server.  It listens on 127.0.0.1 unless another address is asked for explicitly.

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
import functools
import ipaddress
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..errors import PosKernelsError

__all__ = ["DEFAULT_PAYLOAD", "STATIC_DIR", "add_arguments", "choose_payload", "make_server", "run"]

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

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


class _Server(ThreadingHTTPServer):
    """Threads per request; a client that hangs up mid-response (a closed tab) is not an error worth a traceback."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
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


def make_server(
    host: str = LOCALHOST, port: int = 8000, directory: Path = STATIC_DIR, payload: Path | None = None
) -> ThreadingHTTPServer:
    """A threading HTTP server for the page, bound to ``host:port`` (``port=0``: any free port).

    ``payload`` is served at ``/payload.json`` in place of the directory's own (None: the directory's).

    Raises
    ------
    PosKernelsError
        If ``port`` is not in 0..65535, or the address cannot be bound (in use, not this machine's).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise PosKernelsError(f"port must be an integer in 0..65535; got {port!r}")
    handler_class = _Handler if payload is None else type("_PayloadHandler", (_Handler,), {"payload": Path(payload)})
    handler = functools.partial(handler_class, directory=str(directory))
    try:
        return _Server((host, port), handler)
    except OSError as err:
        raise PosKernelsError(f"cannot serve on {host}:{port} ({err.strerror or err}); try another --port") from None


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
    """Serve until Ctrl-C; print the URL first."""
    payload = choose_payload(getattr(args, "payload", None))
    server = make_server(args.host, args.port, payload=payload.resolve())
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    if host != LOCALHOST:
        print(f"note: listening on {host}, not only on this machine ({LOCALHOST})")
    print(f"poskernels lab: serving {STATIC_DIR} with {payload} at http://{shown}:{port}/  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nposkernels lab: stopped")
    finally:
        server.server_close()
    return 0
