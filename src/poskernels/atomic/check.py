"""Every check of an output path, before any byte is written: :func:`check_output` and :func:`check_outputs`.

See :mod:`poskernels.atomic` for the rules.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from ..errors import PosKernelsError
from .confine import check_inside
from .output import STDOUT, Output, _brief, _refuse

__all__ = ["check_output", "check_outputs"]


def _identity(path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path`` (through links), None if there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _probe_folder(folder: Path, what: str, path) -> None:
    """Refuse a folder where no file can be created (permissions, a read-only file system): create and remove one."""
    try:
        fd = os.open(probe := folder / f".poskernels-probe-{secrets.token_hex(6)}.tmp",
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # fmt: skip
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise PosKernelsError(
            f"{what}: cannot write {_brief(path)}: no file can be created in {_brief(folder)} ({err.strerror or err})"
        ) from None


def _folder_of(path: Path, what: str, parents: bool) -> None:
    """Check the folder a new file ``path`` goes in: it exists (or ``parents``), is a folder, and takes new files."""
    folder = path.parent
    if folder.is_dir():
        _probe_folder(folder, what, path)
        return
    nearest = folder
    while not nearest.exists() and nearest != nearest.parent and not nearest.is_symlink():
        nearest = nearest.parent
    if nearest.exists() and not nearest.is_dir():
        raise PosKernelsError(f"{what}: cannot write {_brief(path)} under a file: {_brief(nearest)} is not a folder")
    if not parents:
        raise PosKernelsError(
            f"{what}: cannot write {_brief(path)}: its folder {_brief(folder)} does not exist (create it first)"
        )
    if not nearest.is_dir():
        raise PosKernelsError(f"{what}: cannot write {_brief(path)}: {_brief(nearest)} is a broken link")
    _probe_folder(nearest, what, path)


def check_output(path, what: str = "output", *, inputs=(), figure: bool = False, parents: bool = False) -> Output:
    """Every check of an output path, before any byte is written; returns the :class:`Output` to write.

    Parameters
    ----------
    path : str or Path
        The path given (``"-"``: standard output).
    what : str
        What names it in messages (``"--json"``).
    inputs : iterable of paths
        The files the command reads; an output that is one of them (same device and inode) is refused.
    figure : bool
        The suffix must name a format matplotlib writes (none: PNG).
    parents : bool
        Missing folders are created when writing (else refused, naming the folder).

    Returns
    -------
    Output
        The checked output, to write with :meth:`Output.write`.

    Raises
    ------
    PosKernelsError
        If the folder is missing (and not `parents`), the path is a folder, under a file, one of `inputs`, a link out
        of a :func:`confined` folder, or (with `figure`) has a suffix matplotlib does not write.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> check_output("-").how
    'stdout'
    >>> check_output(root / "no" / "x.json", "--json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --json: cannot write '...x.json': its folder '...no' does not exist ...
    >>> cfg = root / "cfg.json"; _ = cfg.write_text("{}")
    >>> check_output(cfg, "--json", inputs=[cfg])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --json: '...cfg.json' is the input '...cfg.json'; writing it would destroy it
    """
    given = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(given, str):
        raise PosKernelsError(f"{what}: a path must be text; got {type(path).__name__} {_brief(path)}")
    if given == "":
        raise PosKernelsError(f"{what}: the path is empty; give a file path, or - for standard output")
    if "\x00" in given:
        raise PosKernelsError(f"{what}: a path cannot hold a NUL byte; got {given!r}")
    if figure:
        _check_figure_format(Path(given) if given != STDOUT else Path("stdout.png"), what, given)
    if given == STDOUT:
        return Output(given, what, "stdout", None)
    if given.endswith(("/", os.sep)):
        raise PosKernelsError(f"{what}: {_brief(given)} ends in a slash, so it names a folder; give a file path")
    p = Path(given)
    check_inside(p, what)  # under an output folder being written: never through a link out of it
    try:
        os.lstat(p)
        exists = True
    except FileNotFoundError:
        exists = False
    except OSError as err:
        if err.errno != errno.ENOTDIR:  # a name too long, a loop of links, no permission to look
            raise PosKernelsError(f"{what}: cannot use {_brief(p)}: {err.strerror or err}") from None
        exists = False
    target = p
    if exists and p.is_symlink():
        try:
            target = Path(os.path.realpath(p, strict=False))
            os.stat(p)
        except FileNotFoundError:  # a link to nothing yet: its target is created, as a shell's > would
            pass
        except (OSError, RuntimeError) as err:
            why = getattr(err, "strerror", None) or err
            raise PosKernelsError(f"{what}: cannot follow the link {_brief(p)}: {why}") from None
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as err:
        if err.errno != errno.ENOTDIR:
            raise PosKernelsError(f"{what}: cannot use {_brief(p)}: {err.strerror or err}") from None
        st = None
    shown = p if target == p else f"{p} -> {target}"
    if st is None:
        _folder_of(target, what, parents)
        return Output(given, what, "replace", target, parents)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise _refuse(what, shown, "is a folder; give a file path")
    if stat.S_ISBLK(mode):
        raise _refuse(what, shown, "is a block device (a disk); refusing to write over it")
    if stat.S_ISSOCK(mode):
        raise _refuse(what, shown, "is a socket, not a file; give a file path or - for standard output")
    for source in inputs:
        if source is None or str(source) == STDOUT:
            continue
        if _identity(source) == (st.st_dev, st.st_ino):
            raise _refuse(what, shown, f"is the input {_brief(source)}; writing it would destroy it")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Output(given, what, "stream", target)
    if not stat.S_ISREG(mode):
        raise _refuse(what, shown, "is not a regular file, a device or a FIFO")
    if not mode & 0o222:
        raise _refuse(what, shown, "is read-only; make it writable or give another path")
    _probe_folder(target.parent, what, p)
    return Output(given, what, "replace", target, parents)


def check_outputs(outputs: dict, inputs=(), parents: bool = False) -> dict[str, Output]:
    """:func:`check_output` of several outputs of one command, and that no two are one file or both stdout.

    Parameters
    ----------
    outputs : dict
        What names each output (``"--json"``) to its path, or to ``(path, "figure")``; a None path is skipped.
    inputs : iterable of paths, optional
        The files the command reads.
    parents : bool, optional
        Missing folders are created when writing; default False.

    Returns
    -------
    dict of str to Output
        Each checked output by what names it.

    Raises
    ------
    PosKernelsError
        If one output cannot be written, two are one file, or two go to standard output.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> sorted(check_outputs({"--json": root / "a.json", "--plot": None}))
    ['--json']
    >>> check_outputs({"--json": "-", "--plot": ("-", "figure")})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --plot: only one output can go to standard output, and --json does
    >>> check_outputs({"--json": root / "a.png", "--plot": (root / "a.png", "figure")})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --plot: '...a.png' is also the path of --json; give each output its own file
    """
    done: dict[str, Output] = {}
    for what, spec in outputs.items():
        path, kind = spec if isinstance(spec, tuple) else (spec, "file")
        if path is None:
            continue
        out = check_output(path, what, inputs=inputs, figure=kind == "figure", parents=parents)
        for other in done.values():
            if out.is_stdout and other.is_stdout:
                raise PosKernelsError(f"{what}: only one output can go to standard output, and {other.what} does")
            if out.is_stdout or other.is_stdout:
                continue
            same = out.target == other.target or (
                _identity(out.target) is not None and _identity(out.target) == _identity(other.target)
            )
            if same:
                raise _refuse(what, path, f"is also the path of {other.what}; give each output its own file")
        done[what] = out
    return done


def _check_figure_format(path: Path, what: str, given) -> str:
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = path.suffix[1:].lower() or "png"
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise PosKernelsError(
            f"{what}: unknown figure format {fmt!r} of {str(given)!r}; accepted: {', '.join(sorted(formats))}"
        )
    return fmt
