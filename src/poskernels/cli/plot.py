"""``poskernels plot STORE``: a sweep store drawn, accuracy against test length per scheme with a band over seeds."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..atomic import check_output
from ..sweep.plot import parse_where, plot_store
from ..sweep.store import Store, store_files
from ..sweep.store_rows import refuse_store_output

__all__ = ["HELP", "add_arguments", "run"]

HELP = "draw a sweep store: accuracy against test length per scheme, with a band over seeds"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``plot`` subcommand's arguments (a store, ``--out``, ``--where``, ``--facet``) to ``p``.

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
    >>> a = p.parse_args(["s.sqlite", "--where", "d=16"])
    >>> a.out, a.where, a.facet
    ('sweep.png', ['d=16'], None)
    """
    p.add_argument("store", type=Path, help="a sweep store (poskernels sweep ... --store PATH)")
    p.add_argument("--out", default="sweep.png", help="the PNG to write (default: sweep.png; '-': standard output)")
    p.add_argument(
        "--where",
        action="append",
        metavar="KEY=VALUE",
        help="keep the points whose setting KEY is VALUE (repeatable; e.g. --where d=16 --where extension=none)",
    )
    p.add_argument("--facet", metavar="KEY", help="one panel per value of the setting KEY (e.g. --facet d)")


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels plot``: draw a store's accuracy against test length, one curve per scheme.

    Parameters
    ----------
    args : argparse.Namespace
        Arguments parsed by :func:`add_arguments` (``quiet`` too, when set: no line saying what was written).

    Returns
    -------
    int
        ``0``.

    Raises
    ------
    PosKernelsError
        If a ``--where`` or ``--facet`` is refused, ``--out`` is one of the store's files, or the store has no
        finished point.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["s.sqlite", "--where", "d16"]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --where 'd16': expected KEY=VALUE, e.g. --where scheme=rope
    """
    where = parse_where(args.where)
    refuse_store_output(args.out, args.store, "--out")
    out = check_output(args.out, "--out", inputs=store_files(args.store), figure=True)
    with Store(args.store, create=False) as store:
        path, data = plot_store(store, out, where=where, facet=args.facet)
    if not getattr(args, "quiet", False):  # on standard output unless the figure itself goes there
        print(f"wrote {'standard output' if out.is_stdout else path}: {len(data)} curve(s)",
              file=sys.stderr if out.is_stdout else sys.stdout)  # fmt: skip
    return 0
