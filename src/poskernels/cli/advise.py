"""``poskernels advise CONFIG --target-length N``: the RoPE block to paste into ``config.json`` to reach ``N`` tokens.

The advice is :func:`poskernels.census.advice.advise`'s (its module says what it holds), printed by
:func:`poskernels.census.advice_text.render`; ``--json PATH`` writes every block and verdict (``-``: standard output).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..atomic import check_outputs
from ..census.advice import advise
from ..census.advice_text import render
from ..census.config import config_path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "the rope_parameters block to paste into a config.json to reach a target length, with its verdicts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``poskernels advise``.

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
    >>> a = p.parse_args(["llama-2-7b", "--target-length", "16384"])
    >>> a.config, a.target_length, a.json, a.layer_type
    ('llama-2-7b', 16384, None, None)
    """
    p.add_argument("config", metavar="CONFIG", help="a config.json path or a bundled name")
    p.add_argument("--target-length", type=int, required=True, metavar="N", help="the context length to reach")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the advice as JSON ('-': JSON alone)")
    p.add_argument("--layer-type", default=None, metavar="NAME", help="one layer type of a per-layer-type config")


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels advise``: every check happens before anything is printed or written.

    Parameters
    ----------
    args : argparse.Namespace
        As :func:`add_arguments`'s options parse them.

    Returns
    -------
    int
        0.

    Raises
    ------
    PosKernelsError
        As :func:`~poskernels.census.advice.advise`, or an output that cannot be written.

    Examples
    --------
    >>> import contextlib, io
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = run(p.parse_args(["llama-2-7b", "--target-length", "16384"]))
    >>> status, out.getvalue().splitlines()[0]
    (0, 'advise: llama-2-7b, training length L = 4096, target N = 16384')
    """
    data = advise(args.config, args.target_length, getattr(args, "layer_type", None))
    path = config_path(args.config)  # a model folder: its config.json
    config = str(path) if path.is_file() else None  # a bundled name is not a file
    outs = check_outputs({"--json": args.json}, inputs=[config])
    if "--json" in outs:
        outs["--json"].write(json.dumps(data, indent=1) + "\n")
    if not any(out.is_stdout for out in outs.values()):
        print(render(data))
    for label, out in outs.items():
        if not out.is_stdout and not getattr(args, "quiet", False):
            print(f"wrote {label.lstrip('-')}: {out.given}", file=sys.stderr)
    return 0
