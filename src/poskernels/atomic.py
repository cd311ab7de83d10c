"""Atomic writes: every file the package writes goes through a temporary file beside it and :func:`os.replace`.

A reader (a second ``poskernels`` process, the lab's server, a browser) therefore sees the old file or the new one,
never half of one, and an interrupted write leaves the old file in place and no temporary file behind.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["replacing", "savefig_atomic", "write_json_atomic", "write_text_atomic"]


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
