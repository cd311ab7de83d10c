"""``poskernels lab``: serve the laboratory (Figures A and B) on 127.0.0.1 until Ctrl-C.

The server is :mod:`poskernels.lab.server`'s (what it serves, and how it holds under abuse).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..lab.handler import is_loopback
from ..lab.server import DEFAULT_PAYLOAD, LOCALHOST, STATIC_DIR, choose_payload, make_server

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve the laboratory (Figures A and B) on 127.0.0.1"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``poskernels lab``'s arguments (``--port``, ``--host``, ``--payload``) to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    None

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> a = p.parse_args(["--port", "0"])
    >>> a.port, a.host, a.payload
    (0, '127.0.0.1', None)
    """
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
    """Serve until Ctrl-C (exit status 130, as every command interrupted); print the URL first.

    Parameters
    ----------
    args : argparse.Namespace
        Arguments parsed by :func:`add_arguments`.

    Returns
    -------
    int
        ``130`` when interrupted, ``0`` if the server stops otherwise.

    Raises
    ------
    PosKernelsError
        If the payload is refused (:func:`~poskernels.lab.server.choose_payload`) or the address cannot be bound
        (:func:`~poskernels.lab.server.make_server`).

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["--port", "0", "--payload", "no/such.json"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: no payload file at 'no/such.json'; give the payload.json ...
    """
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
