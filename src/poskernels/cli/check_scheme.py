"""``poskernels check-scheme my_pe.py [--json PATH|-]`` prints every check of every scheme the file defines (its
backward against central differences and PyTorch autograd, the engine against the readable head, a head in a stack
against the head alone, its hooks against its metadata); a failed check exits 2 naming the file, the class and
the check.
"""

from __future__ import annotations

import argparse
import json

from ..atomic import write_output
from ..encodings import SCHEMES
from ..errors import PosKernelsError
from ..model.scheme_check import check_scheme
from ..model.scheme_file import load_scheme_file

__all__ = ["HELP", "add_arguments", "run"]

HELP = "check a scheme file: gradients (central differences, autograd), engine, stack, metadata"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``poskernels check-scheme``, added to ``p``.

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
    >>> a = p.parse_args(["my_pe.py", "--json", "-"])
    >>> a.file, a.json
    ('my_pe.py', '-')
    """
    p.add_argument("file", metavar="FILE", help="a Python file defining Scheme subclasses")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the checks as JSON ('-': JSON alone)")


def run(args: argparse.Namespace) -> int:
    """Print every check of every scheme of the file; exit 2 (one line) at the first that fails.

    Parameters
    ----------
    args : argparse.Namespace
        As :func:`add_arguments`'s options parse them.

    Returns
    -------
    int
        0 when every check passes.

    Raises
    ------
    PosKernelsError
        If the file is refused (:func:`~poskernels.model.scheme_file.load_scheme_file`), or a check fails.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["no-such-scheme-file.py"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme file no-such-scheme-file.py: cannot be read (FileNotFoundError: ...)
    """
    names = load_scheme_file(args.file)
    checks = {name: check_scheme(name) for name in names}
    report = {name: [dict(c.__dict__) for c in cs] for name, cs in checks.items()}
    if args.json is not None:  # through the one writer ("-": standard output, the JSON alone)
        write_output(args.json, json.dumps(report, indent=1) + "\n", "--json", inputs=[args.file])
    if args.json != "-":
        for name in names:
            print(f"{name} ({type(SCHEMES[name]).__name__}, {args.file})")
            for c in checks[name]:
                print("  " + c.line())
    for name, checks in report.items():
        for c in checks:
            if c["ok"] is False:
                cls = type(SCHEMES[name]).__name__
                raise PosKernelsError(f"scheme file {args.file}: class {cls}: {c['name']} fails: {c['detail']}")
    return 0
