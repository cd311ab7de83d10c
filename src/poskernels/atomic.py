"""The one output writer: every file the package writes goes through :class:`Output` (or the helpers built on it).

The rules, checked by :func:`check_output` before the first byte of any output is written:

- ``-`` is standard output (for every output option, figures included: a PNG's bytes);
- a regular file, or a new one, is written through a temporary file beside it and :func:`os.replace`, so a reader
  (a second ``poskernels`` process, the lab's server, a browser) sees the old file or the new one, never half of
  one, and an interrupted write leaves the old file in place and no temporary file behind; a file that exists keeps
  its permission bits;
- a symbolic link is followed: its target is written (replaced as above, or streamed), the link stays;
- a character device or a FIFO is written *through*, in place (opened without creating or truncating, never
  renamed over): ``--json /dev/null`` discards, ``/dev/full`` fails with "disk full"; a FIFO waits at most
  :data:`FIFO_WAIT` seconds for a reader;
- refused with :class:`~poskernels.errors.PosKernelsError`: a folder, a block device, a socket, a file made
  read-only (no write bit, even for root), a path whose folder does not exist (named; only ``parents=True``
  creates it, for an output folder such as ``reproduce --out DIR`` and the package's own caches), a path under a
  file, a folder where no file can be created, an output that is the same file as an input (device and inode,
  through links), two outputs of one command that are one file, and two outputs on standard output.

What is written is built in full first (in memory for standard output, a device or a FIFO; in the temporary file
otherwise): a writer that raises leaves nothing behind and writes no byte to the target.

API (stable; other modules call it)::

    out = check_output(path, "--json", inputs=[config_path])      # every check, no byte written
    outs = check_outputs({"--json": p1, "--plot": (p2, "figure")}, inputs=[...])  # several, checked together
    out.write(text_or_bytes)                                       # all at once
    with out.open("w") as fh: ...                                  # a file object; committed when the block ends
    save_figure(fig, out)                                          # matplotlib, format from the suffix (PNG on -)
    write_output(path, data, what, inputs=...)                     # check + write in one call

:func:`replacing` (a temporary *path* renamed onto the target) remains for writers that need a name, such as the
caches; :func:`write_json_atomic`, :func:`write_text_atomic` and :func:`savefig_atomic` are :func:`write_output`
with the package's folders created (``parents=True``).
"""

from __future__ import annotations

import errno
import io
import json
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import PosKernelsError

__all__ = [
    "FIFO_WAIT",
    "STDOUT",
    "Output",
    "check_figure_path",
    "check_output",
    "check_outputs",
    "check_writable",
    "replacing",
    "save_figure",
    "savefig_atomic",
    "write_json_atomic",
    "write_output",
    "write_text_atomic",
]

#: The path that means standard output.
STDOUT = "-"
#: Seconds a FIFO given as an output may wait for a process that reads it before the write is refused.
FIFO_WAIT = 10.0


@dataclass(frozen=True)
class Output:
    """A checked destination (made by :func:`check_output`): where the bytes go and how.

    Attributes
    ----------
    given : str
        The path as the user gave it (``"-"`` for standard output).
    what : str
        What names it in messages (an option such as ``"--json"``).
    how : str
        ``"stdout"``; ``"replace"`` (a regular file or a new one: a temporary file and a rename);
        ``"stream"`` (a character device or a FIFO: written in place).
    target : Path or None
        The file written (a symbolic link's final target); None for standard output.
    parents : bool
        Create the target's missing folders when writing.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> out = check_output(root / "a.json", "--json")
    >>> out.how, out.target == root / "a.json"
    ('replace', True)
    >>> out.write('{"a": 1}')
    >>> (root / "a.json").read_text()
    '{"a": 1}'
    >>> (root / "link.json").symlink_to(root / "a.json")
    >>> check_output(root / "link.json").write("2")  # written through the link, which stays a link
    >>> (root / "link.json").is_symlink(), (root / "a.json").read_text()
    (True, '2')
    """

    given: str
    what: str
    how: str
    target: Path | None
    parents: bool = False

    @property
    def is_stdout(self) -> bool:
        return self.how == "stdout"

    @property
    def suffix(self) -> str:
        """The format the name asks for (the suffix without its dot, lower case; ``""`` for none or stdout)."""
        return "" if self.is_stdout else Path(self.given).suffix[1:].lower()

    def write(self, data: str | bytes) -> None:
        """Write ``data`` (text is UTF-8) as the whole content of the output."""
        with self.open("wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)

    @contextmanager
    def open(self, mode: str = "wb", newline: str | None = None) -> Iterator:
        """A file object (``mode`` ``"wb"`` or ``"w"``, UTF-8) whose content becomes the output when the block ends.

        Nothing reaches the target if the block raises: a regular file keeps its old content, standard output,
        a device or a FIFO gets no byte.
        """
        if mode not in ("w", "wb"):
            raise ValueError(f"mode must be 'w' or 'wb'; got {mode!r}")
        text = {} if mode == "wb" else {"encoding": "utf-8", "newline": newline}
        if self.how == "replace":
            with replacing(self.target, parents=self.parents, what=self.what) as tmp:
                with open(tmp, mode, **text) as fh:
                    yield fh
            return
        buffer = io.BytesIO()
        fh = buffer if mode == "wb" else io.TextIOWrapper(buffer, **text)
        yield fh
        fh.flush()
        data = buffer.getvalue()
        if fh is not buffer:
            fh.detach()
        if self.is_stdout:
            _to_stdout(data)
        else:
            _stream(self.target, data, self.what)

    def __str__(self) -> str:
        return "standard output" if self.is_stdout else self.given


def _to_stdout(data: bytes) -> None:
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:  # a text-only stream (a test's StringIO): the bytes as text
        sys.stdout.write(data.decode("utf-8", errors="surrogateescape"))
    else:
        raw.write(data)
        raw.flush()
    sys.stdout.flush()


def _stream(target: Path, data: bytes, what: str) -> None:
    """Write ``data`` in place into a character device or a FIFO (no create, no truncate, no rename)."""
    fifo = stat.S_ISFIFO(os.stat(target).st_mode)
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | (os.O_NONBLOCK if fifo else 0)
    deadline = time.monotonic() + FIFO_WAIT
    while True:
        try:
            fd = os.open(target, flags)
            break
        except OSError as err:
            if not (fifo and err.errno == errno.ENXIO):  # ENXIO: a FIFO that no process reads yet
                raise
            if time.monotonic() >= deadline:
                raise PosKernelsError(
                    f"{what}: no process read the FIFO {str(target)!r} within {FIFO_WAIT:g} s; start its reader first"
                ) from None
            time.sleep(0.05)
    try:
        if fifo:
            os.set_blocking(fd, True)  # the reader paces us, as it would a shell's redirection
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _refuse(what: str, path, why: str) -> PosKernelsError:
    return PosKernelsError(f"{what}: {_brief(path)} {why}")


def _brief(path) -> str:
    text = str(path)
    return repr(text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}")


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


def check_output(
    path, what: str = "output", *, inputs=(), figure: bool = False, parents: bool = False
) -> Output:
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
    p = Path(given)
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

    ``outputs`` maps what names each (``"--json"``) to its path, or to ``(path, "figure")``; a None path is
    skipped.  Returns what -> :class:`Output`.

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
                _identity(out.target) is not None and _identity(out.target) == _identity(other.target))
            if same:
                raise _refuse(what, path, f"is also the path of {other.what}; give each output its own file")
        done[what] = out
    return done


def write_output(path, data: str | bytes, what: str = "output", *, inputs=(), parents: bool = False) -> Output:
    """:func:`check_output` then :meth:`Output.write`; returns the :class:`Output`.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.txt"
    >>> str(write_output(p, "hello")) == str(p), p.read_text()
    (True, 'hello')
    """
    out = path if isinstance(path, Output) else check_output(path, what, inputs=inputs, parents=parents)
    out.write(data)
    return out


def save_figure(fig, out, format: str | None = None, **kwargs) -> Output:
    """Save a matplotlib figure to an :class:`Output` (or a path, checked); returns the :class:`Output`.

    ``format`` None takes it from the name's suffix (PNG without one, and on standard output).  ``kwargs`` go to
    :meth:`matplotlib.figure.Figure.savefig`.
    """
    if not isinstance(out, Output):
        out = check_output(out, "figure", figure=True)
    with out.open("wb") as fh:
        fig.savefig(fh, format=format or out.suffix or "png", **kwargs)
    return out


@contextmanager
def replacing(path, parents: bool = True, what: str = "output") -> Iterator[Path]:
    """A temporary path in ``path``'s folder, renamed onto ``path`` when the block ends, deleted if it raises.

    A symbolic link is followed (its target is replaced; the link stays).  Something at ``path`` that is not a
    regular file (a folder, a device, a FIFO) is refused, never renamed over: :class:`Output` writes those in place.
    The folder is created if missing (``parents``; else refused).  The temporary name ends in ``.tmp``, so writers
    that pick a format from the suffix (matplotlib, ``np.savez``) must be told the format or be given an open file.
    A new file gets the permissions a plain ``open(path, "w")`` would give (0o666 less the umask), not
    :func:`tempfile.mkstemp`'s 0o600; a file replaced keeps its own.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "sub" / "a.txt"
    >>> with replacing(p) as tmp:
    ...     _ = tmp.write_text("whole")
    >>> p.read_text(), sorted(q.name for q in p.parent.iterdir())
    ('whole', ['a.txt'])
    >>> plain = p.parent / "plain.txt"
    >>> _ = plain.write_text("x")
    >>> p.stat().st_mode == plain.stat().st_mode
    True
    >>> plain.unlink()
    >>> try:
    ...     with replacing(p) as tmp:
    ...         _ = tmp.write_text("half")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> p.read_text(), sorted(q.name for q in p.parent.iterdir())
    ('whole', ['a.txt'])
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    keep = _regular_mode(path, what)
    tmp = _create_beside(path)
    try:
        if keep is not None:
            os.chmod(tmp, keep)
        yield tmp
        _regular_mode(path, what)  # still a regular file (or none) at the moment of the rename
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _regular_mode(path: Path, what: str) -> int | None:
    """The permission bits of the regular file at ``path``, None if there is none; refuse anything else."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(what, path, "exists and is not a regular file; it is never renamed over")
    return stat.S_IMODE(st.st_mode)


def _create_beside(path: Path) -> Path:
    """Create a new, empty ``.<name>.<random>.tmp`` in ``path``'s folder, with mode 0o666 less the umask."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name[:200]}.{secrets.token_hex(6)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # O_EXCL: never another's file
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through :class:`Output` (its folders created)."""
    write_output(path, text, parents=True)


def write_json_atomic(path, data) -> None:
    """Write ``data`` as JSON (indent 1, keys in their order, a final newline) to ``path`` through :class:`Output`.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "n.json"
    >>> write_json_atomic(p, {"b": 1, "a": [0.5]})
    >>> json.loads(p.read_text())
    {'b': 1, 'a': [0.5]}
    """
    write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def savefig_atomic(fig, path, format: str | None = None, **kwargs) -> Path:
    """Save a matplotlib figure to ``path`` through :class:`Output` (its folders created); returns ``path``.

    ``format`` is passed to matplotlib explicitly; None takes it from ``path``'s suffix, as ``savefig(path)``
    would (``png`` without one).  ``kwargs`` go to :meth:`matplotlib.figure.Figure.savefig`.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> p = savefig_atomic(Figure(figsize=(1, 1)), Path(tempfile.mkdtemp()) / "f.png")
    >>> p.read_bytes()[:4], sorted(q.name for q in p.parent.iterdir())
    (b'\\x89PNG', ['f.png'])
    """
    save_figure(fig, check_output(path, "figure", parents=True), format, **kwargs)
    return Path(path)


def check_writable(path, kind: str = "file", what: str = "output", parents: bool = True) -> Path:
    """Check, before any work, that ``path`` can be written as a ``kind`` (``"file"`` or ``"folder"``); returns it.

    A file is :func:`check_output` (with ``parents``: missing folders will be created).  A folder: refused if it is
    a file, under a file, or in a place where no file can be created (probed by creating and removing a temporary
    file in the nearest existing folder, so a read-only file system is caught as well as permissions).  Nothing
    is left behind.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> check_writable(root / "new" / "numbers.json") == root / "new" / "numbers.json"
    True
    >>> _ = (root / "f").write_text("x")
    >>> check_writable(root / "f" / "out.json", what="--json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --json: cannot write ... under a file: ... is not a folder
    """
    if kind not in ("file", "folder"):
        raise ValueError(f"kind must be 'file' or 'folder'; got {kind!r}")
    if kind == "file":
        check_output(path, what, parents=parents)
        return Path(path)
    path = Path(path)
    if "\x00" in str(path):
        raise PosKernelsError(f"{what}: a path cannot hold a NUL byte; got {str(path)!r}")
    try:
        os.stat(path)
    except FileNotFoundError:
        pass
    except OSError as err:  # a name too long, a loop of links, a component that is a file
        if err.errno != errno.ENOTDIR:
            raise PosKernelsError(f"{what}: cannot use {_brief(path)}: {err.strerror or err}") from None
    if path.exists() and not path.is_dir():
        raise PosKernelsError(f"{what}: {str(path)!r} is a file; give a folder")
    nearest = path
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise PosKernelsError(f"{what}: cannot write {str(path)!r} under a file: {str(nearest)!r} is not a folder")
    if nearest != path and not parents:
        raise PosKernelsError(f"{what}: the folder {_brief(path)} does not exist (create it first)")
    _probe_folder(nearest, what, path)
    return path


def _check_figure_format(path: Path, what: str, given) -> str:
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = path.suffix[1:].lower() or "png"
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise PosKernelsError(
            f"{what}: unknown figure format {fmt!r} of {str(given)!r}; accepted: {', '.join(sorted(formats))}"
        )
    return fmt


def check_figure_path(path, what: str = "figure") -> Path:
    """:func:`check_output` of a figure: the suffix names a format matplotlib writes (none: PNG); returns ``path``.

    >>> check_figure_path("fig.xyz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: figure: unknown figure format 'xyz' of 'fig.xyz'; accepted: ...png, ...
    """
    check_output(path, what, figure=True, parents=True)
    return Path(path)
