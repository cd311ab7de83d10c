"""The ``poskernels`` command's entry point, :func:`main`: its parser, built from
:data:`~poskernels.cli.commands.COMMANDS`, and its exit codes (the error contract of :mod:`poskernels.cli`: 0, 1, 2
or 130)."""

from __future__ import annotations

import argparse
import errno
import os
import sys
import traceback

from ..errors import PosKernelsError
from .commands import COMMANDS
from .outputs import check_outputs

__all__ = ["DEBUG_ENV", "main"]

#: Environment variable that turns ``--debug`` on.
DEBUG_ENV = "POSKERNELS_DEBUG"


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
    from .. import __version__

    return __version__


def _commands_to_load(argv: list[str]) -> list[str]:
    """The commands whose parsers ``argv`` needs: the one it names, or every one (for the list ``--help`` prints,
    or the error that names the choices).  The options before a command take no value, so the command is the first
    word that is not an option; only its module is imported (:data:`~poskernels.cli.commands.COMMANDS`)."""
    named = next((word for word in argv if not word.startswith("-")), None)
    return [named] if named in COMMANDS else list(COMMANDS)


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
    for name in _commands_to_load(sys.argv[1:] if argv is None else argv):
        help_text, add_args, _ = COMMANDS[name]
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
