"""Command line: ``poskernels reproduce``, and the other faces of the library.

Subcommands live in :data:`COMMANDS` (name -> (help, add_arguments, run)); ``main`` builds
the parser from it, so adding a command is one entry.  The paths a command writes are named in
:data:`OUTPUTS` and checked before its work starts.

The error contract, one rule for every command: what the user gave (an argument, an environment variable, a file
read, a store row) that cannot be used is bad input (a :class:`~poskernels.errors.PosKernelsError`): one line on
stderr, exit 2.  What the machine or the network does while running (a full disk: "disk full", an I/O error, a
scheduler that does not answer, a sweep point that fails) and a bug are failures: one line, exit 1.  Ctrl-C exits
130; a reader that leaves early (``| head``) ends the command quietly with 0.  A traceback is printed only with
``--debug`` or ``POSKERNELS_DEBUG=1``; ``--quiet`` drops the progress and "wrote" lines, never an error.
"""

from __future__ import annotations

import argparse
import copy
import errno
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
from . import scheme_cli as _scheme_cli
from .atomic import check_inside, check_writable, confined, write_json_atomic
from .atomic import check_outputs as _check_outputs
from .errors import PosKernelsError, did_you_mean
from .lab import figures as _lab_figures
from .lab import payload as _lab_payload
from .lab import server as _lab_server
from .probe import cli as _probe_cli
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

    quiet = getattr(args, "quiet", False)
    log = {"log": (lambda msg: None) if quiet else (lambda msg: tqdm.write(msg, file=sys.stderr))}  # around the bar
    ctx = page.Context(first_seed=first_seed(args.first_seed), **log)
    if args.cache is not None:
        ctx.cache_dir = args.cache
    known = list(dict.fromkeys(s.key for s in page.SECTIONS))  # thm2 has two sections, one key
    for key in args.only or ():
        if key not in known:
            raise PosKernelsError(
                f"--only: unknown section {key!r}{did_you_mean(key, known)}; accepted: {', '.join(sorted(known))}"
            )
    chosen = page.choose(args.only, include_trained=not args.no_train)
    if not chosen:
        trained = ", ".join(s.key for s in page.SECTIONS if s.trained and s.key in args.only)
        raise PosKernelsError(f"--only {' '.join(args.only)} --no-train computes nothing: {trained} train heads; "
                              "drop --no-train, or add a section that does not train")  # fmt: skip
    # A progress bar on stderr when it is a terminal (tqdm); the tables go to stdout, written around the bar.
    out = Path(args.out)
    with confined(out):  # every file under OUT (figures drawn early included) written inside it, never out of it
        return _reproduce_into(out, ctx, chosen, args, quiet, start)


def _reproduce_into(out: Path, ctx, chosen, args: argparse.Namespace, quiet: bool, start: float) -> int:
    """:func:`_reproduce` once its arguments are checked: compute, print, write ``out``'s files."""
    from . import page

    early: list[threading.Thread] = []
    with tqdm(total=len(chosen), desc="reproduce", unit="section", disable=True if quiet else None,
              leave=False) as progress:  # fmt: skip
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
    if not quiet:
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
    "tournament": (_scheme_cli.TOURNAMENT_HELP, _scheme_cli.add_tournament_arguments, _scheme_cli.tournament),
    "check-scheme": (_scheme_cli.CHECK_HELP, _scheme_cli.add_check_arguments, _scheme_cli.check),
    "probe": (_probe_cli.HELP, _probe_cli.add_arguments, _probe_cli.run),
}

#: What each command writes: option (its ``dest``) -> ``"file"``, ``"folder"`` (created, with its parents, as
#: ``reproduce --out`` and the caches are) or ``"figure"`` (a file whose suffix names a matplotlib format).  Each given
#: path is checked before the command starts, by :func:`poskernels.atomic.check_outputs` (``-`` is standard output).
OUTPUTS: dict[str, dict[str, str]] = {
    "reproduce": {"out": "folder", "cache": "folder"},
    "census": {"json": "file", "plot": "figure"},
    "advise": {"json": "file"},
    "sweep": {"store": "file", "cache": "folder", "out": "file"},
    "plot": {"out": "figure"},
    "tournament": {"json": "file", "cache": "folder"},
    "check-scheme": {"json": "file"},
    "probe": {"json": "file", "cache": "folder", "figures": "folder"},
}

#: Files a command writes inside an output folder (``dest`` -> names): checked with the folder, before the work.
FOLDER_FILES: dict[str, dict[str, tuple[str, ...]]] = {"reproduce": {"out": ("numbers.json", "payload.json")}}

#: Subfolders a command writes files into inside an output folder: none of them, nor any file already in them, may
#: be a link out of the folder (checked before the work).
FOLDER_LINKS: dict[str, dict[str, tuple[str, ...]]] = {"reproduce": {"out": ("figures",)}}


def _check_folder_links(folder: Path, sub: str, option: str) -> None:
    """Refuse ``folder/sub`` or an entry of it whose real location is outside ``folder``."""
    where = folder / sub
    check_inside(where, f"{option} {sub}", folder)
    if where.is_dir():
        for entry in sorted(where.iterdir()):
            check_inside(entry, f"{option} {sub}/{entry.name}", folder)


#: What each command reads (its ``dest``s): no output may be one of these files (a sweep store with the files SQLite
#: keeps beside it).  A value that is not an existing file (a bundled config's name, ``export``) is no input.
INPUTS: dict[str, tuple[str, ...]] = {"census": ("config",), "sweep": ("grid", "export_store"), "plot": ("store",),
                                      "check-scheme": ("file",), "tournament": ("scheme_file",)}  # fmt: skip

#: Environment variable that turns ``--debug`` on.
DEBUG_ENV = "POSKERNELS_DEBUG"


def check_outputs(command: str, args: argparse.Namespace) -> None:
    """Refuse, before any work, an output path of ``command`` that cannot be written (see :data:`OUTPUTS`), one that
    is an input (:data:`INPUTS`), and two outputs that are one file.

    Parameters
    ----------
    command : str
        A key of :data:`COMMANDS`.
    args : argparse.Namespace
        Its parsed arguments.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If an output cannot be written, is one of the inputs, or is the path of another output (exit 2).

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "census.png"
    >>> check_outputs("census", argparse.Namespace(config=None, json=None, plot=out))  # writable: nothing to say
    >>> check_outputs("census", argparse.Namespace(config=None, json=out, plot=out))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --plot: '...census.png' is also the path of --json; give each output its own file
    """
    from .sweep.store import store_files

    inputs = []
    for dest in INPUTS.get(command, ()):
        for value in (lambda v: v if isinstance(v, list) else [v])(getattr(args, dest, None)):  # one, or a list
            if value is not None and Path(value).is_file():
                inputs += store_files(value) if dest in ("store", "export_store") else [Path(value)]
    files = {}
    for dest, kind in OUTPUTS.get(command, {}).items():
        path = getattr(args, dest, None)
        option = "--" + dest.replace("_", "-")
        if path is None:
            continue
        if kind == "folder":
            check_writable(path, "folder", option)
            with confined(path):
                for name in FOLDER_FILES.get(command, {}).get(dest, ()):
                    _check_outputs({f"{option} {name}": Path(path) / name}, parents=True)
                for sub in FOLDER_LINKS.get(command, {}).get(dest, ()):  # a subfolder's files, before any work
                    _check_folder_links(Path(path), sub, option)
        else:
            files[option] = (path, kind)
    _check_outputs(files, inputs=inputs)


def _one_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return " / ".join(line.strip() for line in text.splitlines() if line.strip())


def _silence_stdout() -> None:
    """Point standard output at the null device, so Python's own flush at exit cannot fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a test's captured stream has no file descriptor
        pass


def _version() -> str:
    from . import __version__

    return __version__


class _Parser(argparse.ArgumentParser):
    """argparse with the error contract's one line: ``poskernels COMMAND: error: ...`` and exit 2 (no usage block)."""

    def error(self, message):
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def main(argv=None) -> int:
    """Entry point of the ``poskernels`` command; returns the exit status (0, 1, 2 or 130).

    Bad usage or input prints one line on stderr and returns 2; a failure while running returns 1; Ctrl-C 130.

    Parameters
    ----------
    argv : list of str, optional
        The command line's arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = main(["census", "llama-3-8b"])
    >>> status, out.getvalue().splitlines()[0]
    (0, 'RoPE census: llama-3-8b (llama)')
    >>> main(["census", "no-such-config"])  # its one line goes to stderr
    2
    """
    debug_help = f"print the traceback of an error (also: {DEBUG_ENV}=1)"
    quiet_help = "print no progress and no 'wrote' lines on stderr (errors are still printed)"
    parser = _Parser(
        prog="poskernels",
        description="Every positional encoding is a kernel over offsets. "
        "Reproduce the article's numbers, inspect real RoPE configs, run sweeps, open the laboratory.",
    )
    parser.add_argument("--version", action="version", version=f"poskernels {_version()}")
    parser.add_argument("--debug", action="store_true", help=debug_help)
    parser.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_args, _) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_args(p)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)
        p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=quiet_help)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    debug = args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    prefix = f"poskernels {args.command}"
    try:
        check_outputs(args.command, args)
        status = COMMANDS[args.command][2](args)
        sys.stdout.flush()  # here, so that a reader gone early is met inside this try, not at exit
        return status
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output left (`| head`): stop quietly with 0, as a filter does
        _silence_stdout()
        return 0
    except PosKernelsError as err:  # bad usage or input
        failure, status, line = err, 2, f"{prefix}: error: {_one_line(err)}"
    except OSError as err:  # a write or read that failed while running (disk full, permissions changed)
        where = f" ({err.filename})" if getattr(err, "filename", None) else ""
        what = err.strerror or _one_line(err)
        if err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)) and "disk full" not in what:
            what = f"disk full ({what})"
        failure, status, line = err, 1, f"{prefix}: error: {what}{where}"
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
