"""Command line: ``poskernels reproduce``, and the other faces of the library.

Subcommands live in :data:`COMMANDS` (name -> (help, add_arguments, run)); ``main`` builds
the parser from it, so adding a command is one entry.  The paths a command writes are named in
:data:`OUTPUTS` and checked before its work starts.

The error contract: bad usage or input (a :class:`~poskernels.errors.PosKernelsError`) prints one line on stderr
and exits 2; a failure while running (a write that fails, a point of a sweep that fails, a bug) prints one line
and exits 1; Ctrl-C exits 130.  A traceback is printed only with ``--debug`` or ``POSKERNELS_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

from . import advise_cli as _advise_cli
from . import census_cli as _census_cli
from .atomic import check_figure_path, check_writable, write_json_atomic
from .errors import PosKernelsError
from .lab import figures as _lab_figures
from .lab import payload as _lab_payload
from .lab import server as _lab_server
from .sweep import cli as _sweep_cli

__all__ = ["COMMANDS", "main"]


def _reproduce_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("results"), help="output folder (default: results/)")
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="cache folder for trained weights and results (default: .cache/poskernels in the current directory)",
    )
    p.add_argument("--only", nargs="+", metavar="KEY", help="compute only these top-level keys of numbers.json")
    p.add_argument("--no-train", action="store_true", help="skip the sections that train heads")
    p.add_argument(
        "--first-seed",
        type=int,
        default=None,
        metavar="S",
        help="first of the ten seeds of every trained cell (default: $POSKERNELS_FIRST_SEED, else 0)",
    )


def _reproduce(args: argparse.Namespace) -> int:
    from . import page

    start = time.perf_counter()
    from .seeds import first_seed

    log = {"log": lambda msg: tqdm.write(msg, file=sys.stderr)}  # around the progress bar, never through it
    ctx = page.Context(first_seed=first_seed(args.first_seed), **log)
    if args.cache is not None:
        ctx.cache_dir = args.cache
    known = {s.key for s in page.SECTIONS}
    if args.only:
        unknown = sorted(set(args.only) - known)
        if unknown:
            raise PosKernelsError(f"unknown section(s) {unknown}; accepted: {', '.join(sorted(known))}")
    chosen = page.choose(args.only, include_trained=not args.no_train)
    # A progress bar on stderr when it is a terminal (tqdm); the tables go to stdout, written around the bar.
    out = Path(args.out)
    early: list[threading.Thread] = []
    with tqdm(total=len(chosen), desc="reproduce", unit="section", disable=None, leave=False) as progress:
        t0 = time.perf_counter()

        def show(section, data):  # after each section: its table, its time, one step of the bar
            nonlocal t0
            rule = "=" * len(section.title)
            progress.write(f"\n{section.title}\n{rule}\n{section.render(data)}", file=sys.stdout)
            ctx.log(f"[{section.key}] {time.perf_counter() - t0:.2f} s")
            progress.update()
            t0 = time.perf_counter()

        def idle(section):  # the last section still computes on the pool: draw the others' figures meanwhile
            if section is chosen[-1] and not early and _lab_figures.write_figures in _REPRODUCE_WRITERS:
                early.append(threading.Thread(target=_early_figures, args=(copy.deepcopy(ctx.numbers), ctx, out)))
                early[-1].start()

        page.assemble(ctx, args.only, include_trained=not args.no_train, each=show, idle=idle)
    for thread in early:
        thread.join()
    write_json_atomic(out / "numbers.json", ctx.numbers)
    for hook in _REPRODUCE_WRITERS:
        hook(ctx, out)
    print(f"\nwrote {out / 'numbers.json'} in {time.perf_counter() - start:.1f} s")
    return 0


def _early_figures(numbers: dict, ctx, out: Path) -> None:
    """Draw the figures of every section but the last while it computes; the final writer keeps those whose inputs
    did not change (their digests match) and draws the rest, so this only moves work earlier."""
    try:
        _lab_figures.draw_figures(_lab_payload.viz_payload(numbers, ctx.cache_dir), out / "figures")
    except Exception:  # nothing is lost: the final writer draws every figure this one did not
        pass


#: Extra writers run after ``numbers.json`` (payload, figures): ``hook(ctx, out_dir)``.
_REPRODUCE_WRITERS: list[Callable] = [_lab_payload.write_payload, _lab_figures.write_figures]

COMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    "reproduce": (
        "print every table of the article and write OUT/numbers.json (and the lab payload and figures)",
        _reproduce_args,
        _reproduce,
    ),
    "census": (
        "plane-by-plane RoPE census of a model config (Theorem 5) with every extension map's factors",
        _census_cli.add_arguments,
        _census_cli.run,
    ),
    "advise": (
        "the rope_parameters block to paste into a config.json to reach a target length, with its verdicts",
        _advise_cli.add_arguments,
        _advise_cli.run,
    ),
    "lab": ("serve the laboratory (Figures A and B) on 127.0.0.1", _lab_server.add_arguments, _lab_server.run),
    "sweep": (_sweep_cli.SWEEP_HELP, _sweep_cli.add_sweep_arguments, _sweep_cli.sweep),
    "plot": (_sweep_cli.PLOT_HELP, _sweep_cli.add_plot_arguments, _sweep_cli.plot),
}

#: What each command writes: option (its ``dest``) -> ``"file"``, ``"folder"`` or ``"figure"`` (a file whose suffix
#: names a matplotlib format).  Each given path is checked before the command starts (``-`` is standard output).
OUTPUTS: dict[str, dict[str, str]] = {
    "reproduce": {"out": "folder", "cache": "folder"},
    "census": {"json": "file", "plot": "figure"},
    "advise": {"json": "file"},
    "sweep": {"store": "file", "cache": "folder", "out": "file"},
    "plot": {"out": "figure"},
}

#: Environment variable that turns ``--debug`` on.
DEBUG_ENV = "POSKERNELS_DEBUG"


def check_outputs(command: str, args: argparse.Namespace) -> None:
    """Refuse, before any work, an output path of ``command`` that cannot be written (see :data:`OUTPUTS`)."""
    for dest, kind in OUTPUTS.get(command, {}).items():
        path = getattr(args, dest, None)
        if path is None or str(path) == "-":
            continue
        option = "--" + dest.replace("_", "-")
        if kind == "figure":
            check_figure_path(path, option)
        else:
            check_writable(path, kind, option)


def _one_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return " / ".join(line.strip() for line in text.splitlines() if line.strip())


def _version() -> str:
    from . import __version__

    return __version__


def main(argv=None) -> int:
    """Entry point of the ``poskernels`` command; returns the exit status (0, 1, 2 or 130)."""
    debug_help = f"print the traceback of an error (also: {DEBUG_ENV}=1)"
    parser = argparse.ArgumentParser(
        prog="poskernels",
        description="Every positional encoding is a kernel over offsets. "
        "Reproduce the article's numbers, inspect real RoPE configs, run sweeps, open the laboratory.",
    )
    parser.add_argument("--version", action="version", version=f"poskernels {_version()}")
    parser.add_argument("--debug", action="store_true", help=debug_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_args, _) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_args(p)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    debug = args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    prefix = f"poskernels {args.command}"
    try:
        check_outputs(args.command, args)
        return COMMANDS[args.command][2](args)
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output left (`| head`): stop quietly, as a filter does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail again
        return 1
    except PosKernelsError as err:  # bad usage or input
        failure, status, line = err, 2, f"{prefix}: error: {_one_line(err)}"
    except OSError as err:  # a write or read that failed while running (disk full, permissions changed)
        where = f" ({err.filename})" if getattr(err, "filename", None) else ""
        failure, status, line = err, 1, f"{prefix}: error: {err.strerror or _one_line(err)}{where}"
    except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback on request
        failure, status = err, 1
        line = f"{prefix}: internal error: {type(err).__name__}: {_one_line(err)}"
        if not debug:
            line += f" (run with --debug or {DEBUG_ENV}=1 for the traceback)"
    if debug:
        traceback.print_exception(failure)
    print(line, file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
