"""The output writer's destination: :class:`Output` (standard output, a file replaced by a rename, a device or a FIFO
written in place) and :func:`replacing`, the temporary file renamed onto a regular file.  See :mod:`poskernels.atomic`.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import PosKernelsError
from .brief import _brief

__all__ = ["FIFO_WAIT", "STDOUT", "Output", "replacing"]


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
    >>> from poskernels.atomic import check_output
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
        if not self.is_stdout:  # again at the write: a link made out of an output folder since the check
            from .confine import check_inside

            check_inside(self.given, self.what)
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


@contextmanager
def replacing(path, parents: bool = True, what: str = "output") -> Iterator[Path]:
    """A temporary path in ``path``'s folder, renamed onto ``path`` when the block ends, deleted if it raises.

    A symbolic link is followed (its target is replaced; the link stays).  Something at ``path`` that is not a
    regular file (a folder, a device, a FIFO) is refused, never renamed over: :class:`Output` writes those in place.
    The folder is created if missing (``parents``; else refused).  The temporary name ends in ``.tmp``, so writers
    that pick a format from the suffix (matplotlib, ``np.savez``) must be told the format or be given an open file.
    A new file gets the permissions a plain ``open(path, "w")`` would give (0o666 less the umask), not
    :func:`tempfile.mkstemp`'s 0o600; a file replaced keeps its own.

    Parameters
    ----------
    path : str or pathlib.Path
        The file to replace (or create).
    parents : bool, optional
        Create a missing folder; default True.
    what : str, optional
        What names it in messages; default ``"output"``.

    Yields
    ------
    pathlib.Path
        The temporary path to write.

    Raises
    ------
    PosKernelsError
        If something at `path` is not a regular file.
    OSError
        If the folder is missing and not `parents` (the callers check the path first: :func:`check_output`).

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
