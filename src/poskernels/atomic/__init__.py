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
  ``atomic.output.FIFO_WAIT`` seconds for a reader;
- refused with :class:`~poskernels.errors.PosKernelsError`: a folder, a block device, a socket, a file made
  read-only (no write bit, even for root), a path whose folder does not exist (named; only ``parents=True``
  creates it, for an output folder such as ``reproduce --out DIR`` and the package's own caches), a path under a
  file, a folder where no file can be created, an output that is the same file as an input (device and inode,
  through links), two outputs of one command that are one file, and two outputs on standard output;
- inside an output folder (:func:`confined`, as ``reproduce --out DIR`` writes): a path whose real location, every
  link followed, is outside the folder (:mod:`poskernels.atomic.confine`).

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
import json
import os
from pathlib import Path

from ..errors import PosKernelsError
from .check import _probe_folder, check_output, check_outputs
from .confine import check_inside, confined
from .output import FIFO_WAIT, STDOUT, Output, _brief, replacing

__all__ = [
    "FIFO_WAIT",
    "STDOUT",
    "Output",
    "check_figure_path",
    "check_inside",
    "check_output",
    "check_outputs",
    "check_writable",
    "confined",
    "replacing",
    "save_figure",
    "savefig_atomic",
    "write_json_atomic",
    "write_output",
    "write_text_atomic",
]


def write_output(path, data: str | bytes, what: str = "output", *, inputs=(), parents: bool = False) -> Output:
    """:func:`check_output` then :meth:`Output.write`; returns the :class:`Output`.

    Parameters
    ----------
    path : str or pathlib.Path
        Where to write (``"-"``: standard output).
    data : str or bytes
        The whole content.
    what : str, optional
        What names the path in messages (``"--json"``); default ``"output"``.
    inputs : iterable of paths, optional
        The files the command reads; writing one of them is refused.
    parents : bool, optional
        Create missing folders; default False (refused, naming the folder).

    Returns
    -------
    Output
        The output written.

    Raises
    ------
    PosKernelsError
        If the path cannot be written (see :func:`check_output`) or the write fails.

    Examples
    --------
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

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    out : Output, str or pathlib.Path
        Where to save it; a path is checked first (:func:`check_figure_path`).
    format : str, optional
        The format matplotlib writes; default None (from the suffix).
    **kwargs
        Passed to :meth:`matplotlib.figure.Figure.savefig`.

    Returns
    -------
    Output
        The output written.

    Raises
    ------
    PosKernelsError
        If the path cannot be written or its suffix names no format matplotlib writes.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> p = Path(tempfile.mkdtemp()) / "f.svg"
    >>> save_figure(Figure(figsize=(1, 1)), p).how, p.read_text()[:5]
    ('replace', '<?xml')
    """
    if not isinstance(out, Output):
        out = check_output(out, "figure", figure=True)
    with out.open("wb") as fh:
        fig.savefig(fh, format=format or out.suffix or "png", **kwargs)
    return out


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through :class:`Output` (its folders created).

    Parameters
    ----------
    path : str or pathlib.Path
        Where to write.
    text : str
        The whole content.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If the path cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "new" / "a.txt"
    >>> write_text_atomic(p, "whole")
    >>> p.read_text()
    'whole'
    """
    write_output(path, text, parents=True)


def write_json_atomic(path, data) -> None:
    """Write ``data`` as JSON (indent 1, keys in their order, a final newline) to ``path`` through :class:`Output`.

    Parameters
    ----------
    path : str or pathlib.Path
        Where to write (its folders created).
    data : object
        Anything :func:`json.dumps` writes.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If the path cannot be written.

    Examples
    --------
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

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or pathlib.Path
        Where to save it.
    format : str, optional
        The format; default None (from the suffix).
    **kwargs
        Passed to :meth:`matplotlib.figure.Figure.savefig`.

    Returns
    -------
    pathlib.Path
        `path`.

    Raises
    ------
    PosKernelsError
        If the path cannot be written.

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

    Parameters
    ----------
    path : str or pathlib.Path
        The path given.
    kind : {"file", "folder"}, optional
        What will be written there; default ``"file"``.
    what : str, optional
        What names it in messages; default ``"output"``.
    parents : bool, optional
        Missing folders will be created; default True.

    Returns
    -------
    pathlib.Path
        `path`.

    Raises
    ------
    PosKernelsError
        If `path` cannot be written as a `kind` (the message says why).

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
    if str(path) == STDOUT:
        raise PosKernelsError(f"{what}: a folder is written here, and - (standard output) cannot hold one")
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


def check_figure_path(path, what: str = "figure") -> Path:
    """:func:`check_output` of a figure: the suffix names a format matplotlib writes (none: PNG); returns ``path``.

    Parameters
    ----------
    path : str or pathlib.Path
        The figure's path.
    what : str, optional
        What names it in messages; default ``"figure"``.

    Returns
    -------
    pathlib.Path
        `path`.

    Raises
    ------
    PosKernelsError
        If `path` cannot be written or its suffix names no format matplotlib writes (the formats accepted listed).

    Examples
    --------
    >>> check_figure_path("fig.xyz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: figure: unknown figure format 'xyz' of 'fig.xyz'; accepted: ...png, ...
    """
    check_output(path, what, figure=True, parents=True)
    return Path(path)
