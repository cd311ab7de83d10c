"""Atomic writes: every file the package writes goes through a temporary file beside it and :func:`os.replace`.

A reader (a second ``poskernels`` process, the lab's server, a browser) therefore sees the old file or the new one,
never half of one, and an interrupted write leaves the old file in place and no temporary file behind.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import PosKernelsError

__all__ = [
    "check_figure_path",
    "check_writable",
    "replacing",
    "savefig_atomic",
    "write_json_atomic",
    "write_text_atomic",
]


@contextmanager
def replacing(path) -> Iterator[Path]:
    """A temporary path in ``path``'s folder, renamed onto ``path`` when the block ends, deleted if it raises.

    The folder is created if missing.  The temporary name ends in ``.tmp``, so writers that pick a format from the
    suffix (matplotlib, ``np.savez``) must be told the format or be given an open file.  The file gets the
    permissions a plain ``open(path, "w")`` would give (0o666 less the umask), not :func:`tempfile.mkstemp`'s 0o600.

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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_beside(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _create_beside(path: Path) -> Path:
    """Create a new, empty ``.<name>.<random>.tmp`` in ``path``'s folder, with mode 0o666 less the umask."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # O_EXCL: never another's file
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(path, data) -> None:
    """Write ``data`` as JSON (indent 1, keys in their order, a final newline) to ``path`` atomically.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "n.json"
    >>> write_json_atomic(p, {"b": 1, "a": [0.5]})
    >>> json.loads(p.read_text())
    {'b': 1, 'a': [0.5]}
    """
    write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def savefig_atomic(fig, path, format: str | None = None, **kwargs) -> Path:
    """Save a matplotlib figure to ``path`` atomically; returns ``path``.

    ``format`` is passed to matplotlib explicitly, since the temporary name ends in ``.tmp``; None takes it from
    ``path``'s suffix, as ``savefig(path)`` would (``png`` without one).  ``kwargs`` go to
    :meth:`matplotlib.figure.Figure.savefig`.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> p = savefig_atomic(Figure(figsize=(1, 1)), Path(tempfile.mkdtemp()) / "f.png")
    >>> p.read_bytes()[:4], sorted(q.name for q in p.parent.iterdir())
    (b'\\x89PNG', ['f.png'])
    """
    path = Path(path)
    format = format or path.suffix[1:].lower() or "png"
    with replacing(path) as tmp:
        fig.savefig(tmp, format=format, **kwargs)
    return path


def check_writable(path, kind: str = "file", what: str = "output") -> Path:
    """Check, before any work, that ``path`` can be written as a ``kind`` (``"file"`` or ``"folder"``); returns it.

    Refused with :class:`~poskernels.errors.PosKernelsError`: a file path that is a folder, a folder path that is a
    file, a path under a file, a place where no file can be created (probed by creating and removing a temporary
    file in the nearest existing folder, so a read-only file system is caught as well as permissions).  Nothing is
    left behind.

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
    if path.is_dir() and kind == "file":
        raise PosKernelsError(f"{what}: {str(path)!r} is a folder; give a file path")
    if path.exists() and not path.is_dir() and kind == "folder":
        raise PosKernelsError(f"{what}: {str(path)!r} is a file; give a folder")
    nearest = path if kind == "folder" and path.is_dir() else path.parent
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise PosKernelsError(f"{what}: cannot write {str(path)!r} under a file: {str(nearest)!r} is not a folder")
    try:
        os.close(fd := os.open(probe := nearest / f".poskernels-probe-{secrets.token_hex(6)}.tmp",
                               os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # fmt: skip
        del fd
        os.unlink(probe)
    except OSError as err:
        raise PosKernelsError(
            f"{what}: cannot write {str(path)!r}: no file can be created in {str(nearest)!r} ({err.strerror or err})"
        ) from None
    return path


def _brief(path: Path) -> str:
    text = str(path)
    return repr(text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}")


def check_figure_path(path, what: str = "figure") -> Path:
    """:func:`check_writable`, and the suffix names a format matplotlib writes (none: PNG); returns ``path``.

    >>> check_figure_path("fig.xyz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: figure: unknown figure format 'xyz' of 'fig.xyz'; accepted: ...png, ...
    """
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(path)
    fmt = path.suffix[1:].lower() or "png"
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise PosKernelsError(
            f"{what}: unknown figure format {fmt!r} of {str(path)!r}; accepted: {', '.join(sorted(formats))}"
        )
    return check_writable(path, "file", what)
