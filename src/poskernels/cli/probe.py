"""``poskernels probe MODEL``: the article's kernels measured on a released model's weights."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..atomic import write_json_atomic
from ..census.probe.models import MODELS
from ..errors import PosKernelsError, check_positive_int

__all__ = ["HELP", "add_arguments", "run"]

HELP = "the article's kernels measured on a released model's weights (queries and keys on its own forward pass)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``poskernels probe``, added to ``p``.

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
    >>> a = p.parse_args(["smollm2-135m", "--length", "512"])
    >>> a.model, a.length, a.sample, a.corpus, a.past_window
    ('smollm2-135m', 512, 128, 'stdlib', False)
    """
    p.add_argument("model", metavar="MODEL", help=f"{', '.join(MODELS)}, a .gguf file, or a Hugging Face model folder")
    p.add_argument("--length", type=int, default=None, help="tokens of text (default: 2048, or the learned table's)")
    p.add_argument("--sample", type=int, default=128, help="query positions scored against all keys (default 128)")
    p.add_argument("--seed", type=int, default=0, help="seed of the query sample (default 0)")
    p.add_argument("--corpus", default="stdlib", help="the text read: stdlib (the default) or filings")
    p.add_argument("--json", type=Path, default=None, help="write the result as JSON ('-' for standard output)")
    p.add_argument("--figures", type=Path, default=None, help="folder for the figures (energy map, kernels)")
    p.add_argument("--cache", type=Path, default=None, help="cache folder (default: .cache/poskernels)")
    p.add_argument(
        "--past-window",
        action="store_true",
        help="the loss by position past the training window, read plain and with PI, NTK-aware, YaRN and "
        "dynamic NTK (default --length: twice the window), cached per map",
    )
    p.add_argument(
        "--factor",
        type=float,
        default=None,
        help="with --past-window: the maps' extension factor (default: --length over the window)",
    )
    p.add_argument("--bin", type=int, default=512, help="with --past-window: positions per row of the table (512)")


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels probe`` on parsed arguments: the probe (or ``--past-window``), its JSON, figures and text.

    Parameters
    ----------
    args : argparse.Namespace
        As :func:`add_arguments`'s options parse them (``quiet``, where set, silences the progress lines).

    Returns
    -------
    int
        0; bad input raises before any work (the CLI exits 2).

    Raises
    ------
    PosKernelsError
        If an option is out of range, or :func:`~poskernels.census.probe.run.probe` refuses its input.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["smollm2-135m", "--factor", "2"]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --factor 2 is read only with --past-window
    """
    from ..census.probe.report import render
    from ..census.probe.run import probe

    if args.length is not None:
        check_positive_int("--length", args.length)
    check_positive_int("--sample", args.sample)
    quiet = getattr(args, "quiet", False)
    if args.past_window:
        return _past_window(args, quiet)
    if args.factor is not None:
        raise PosKernelsError(f"--factor {args.factor:g} is read only with --past-window")
    result = probe(args.model, args.length, args.sample, args.seed, args.cache,
                   log=(lambda m: None) if quiet else (lambda m: print(m, file=sys.stderr)),
                   corpus=args.corpus)  # fmt: skip
    if args.json is not None:
        write_json_atomic(args.json, result)
        if not quiet and str(args.json) != "-":
            print(f"wrote {args.json}", file=sys.stderr)
    if args.figures is not None:
        from ..census.probe.figures import draw

        for path in draw(result, args.figures):
            if not quiet:
                print(f"wrote {path}", file=sys.stderr)
    if str(args.json) != "-":
        print(render(result))
    return 0


def _past_window(args: argparse.Namespace, quiet: bool) -> int:
    from tqdm import tqdm

    from ..census.probe.past_window import past_window
    from ..census.probe.past_window_report import draw, render

    check_positive_int("--bin", args.bin)
    result = past_window(args.model, args.length, args.factor, args.bin, args.cache, quiet=quiet,
                         log=(lambda m: None) if quiet else (lambda m: tqdm.write(m, file=sys.stderr)))  # fmt: skip
    if args.json is not None:
        write_json_atomic(args.json, result)
        if not quiet and str(args.json) != "-":
            print(f"wrote {args.json}", file=sys.stderr)
    if args.figures is not None:
        for path in draw(result, args.figures):
            if not quiet:
                print(f"wrote {path}", file=sys.stderr)
    if str(args.json) != "-":
        print(render(result))
    return 0
