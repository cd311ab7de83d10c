"""``poskernels lab``: serve the laboratory's static page on 127.0.0.1.

The page (``lab/static/``) is plain HTML, CSS and JavaScript modules with no build step and no network; it
reads ``payload.json`` beside it.  Browsers do not load JavaScript modules from ``file://`` URLs, hence a
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

__all__ = ["STATIC_DIR", "add_arguments", "make_server", "run"]

#: The page and its payload, shipped inside the package.
STATIC_DIR = Path(__file__).parent / "static"

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


def make_server(host: str = LOCALHOST, port: int = 8000, directory: Path = STATIC_DIR) -> ThreadingHTTPServer:
    """A threading HTTP server for the page, bound to ``host:port`` (``port=0``: any free port).

    Raises
    ------
    PosKernelsError
        If ``port`` is not in 0..65535, or the address cannot be bound (in use, not this machine's).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise PosKernelsError(f"port must be an integer in 0..65535; got {port!r}")
    handler = functools.partial(_Handler, directory=str(directory))
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


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C; print the URL first."""
    server = make_server(args.host, args.port)
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    if host != LOCALHOST:
        print(f"note: listening on {host}, not only on this machine ({LOCALHOST})")
    print(f"poskernels lab: serving {STATIC_DIR} at http://{shown}:{port}/  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nposkernels lab: stopped")
    finally:
        server.server_close()
    return 0
