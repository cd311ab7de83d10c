"""Output folders whose files stay inside them: :func:`confined` and :func:`check_inside`.

``reproduce --out DIR`` writes ``DIR/numbers.json``, ``DIR/payload.json`` and ``DIR/figures/*``.  A link among them
that points out of ``DIR`` (``DIR/numbers.json -> ~/.bashrc``, ``DIR/figures -> /etc``) would have the command
replace a file it was never asked to touch, so an output folder's files are written inside it, never through a link
out of it.  ``DIR`` itself may be a link (its own target is the folder); a link inside ``DIR`` to another place
inside ``DIR`` is followed as any link is.

While a :func:`confined` block is open (in any thread: the figures ``reproduce`` draws early run in one),
:func:`~poskernels.atomic.check_output` refuses every path under the folder whose real location is outside it.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from poskernels.atomic import check_output
>>> root, away = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
>>> (root / "numbers.json").symlink_to(away / "victim.json")
>>> with confined(root):
...     check_output(root / "numbers.json", "--out")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
poskernels.errors.PosKernelsError: --out: '...numbers.json' is a link out of the output folder '...' (to ...
>>> check_output(root / "numbers.json", "--json").how  # outside a confined block a link is followed, as before
'replace'
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import PosKernelsError
from .brief import _brief

__all__ = ["check_inside", "confined"]

_LOCK = threading.Lock()
_ROOTS: list[tuple[Path, Path]] = []  # (the folder as given, made absolute; its real location)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@contextmanager
def confined(folder) -> Iterator[Path]:
    """While the block runs, no output path under ``folder`` may resolve outside it; yields its real location.

    Parameters
    ----------
    folder : str or pathlib.Path
        The output folder (``reproduce --out``).

    Yields
    ------
    pathlib.Path
        The folder's real location, every link followed.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "out").mkdir(); (root / "out" / "link").symlink_to(root)
    >>> with confined(root / "out") as real:
    ...     check_inside(root / "out" / "link" / "a.json", "--json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --json: '...a.json' is a link out of the output folder '...out' (to ...
    """
    entry = (Path(os.path.abspath(folder)), Path(os.path.realpath(folder)))
    with _LOCK:
        _ROOTS.append(entry)
    try:
        yield entry[1]
    finally:
        with _LOCK:
            _ROOTS.remove(entry)


def check_inside(path, what: str, folder=None) -> None:
    """Refuse ``path`` if it lies (as written) under ``folder`` or an open :func:`confined` folder but its real
    location, every link followed, is outside that folder.

    Parameters
    ----------
    path : str or pathlib.Path
        An output path.
    what : str
        What names it in messages (``"--json"``).
    folder : str or pathlib.Path, optional
        One more folder to check against; default None (the :func:`confined` ones only).

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If `path` is written through a link out of its folder.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "out").mkdir(); (root / "out" / "link").symlink_to(root)
    >>> check_inside(root / "out" / "a.json", "--json", root / "out") is None
    True
    >>> check_inside(root / "out" / "link" / "a.json", "--json", root / "out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --json: '...a.json' is a link out of the output folder '...out' (to ...
    """
    with _LOCK:
        roots = list(_ROOTS)
    if folder is not None:
        roots.append((Path(os.path.abspath(folder)), Path(os.path.realpath(folder))))
    written = Path(os.path.abspath(path))
    for given, real_root in roots:
        if not _inside(written, given):
            continue
        real = Path(os.path.realpath(written))  # every link on the way followed (a folder link too)
        if not _inside(real, real_root):
            raise PosKernelsError(
                f"{what}: {_brief(written)} is a link out of the output folder {_brief(given)} (to {_brief(real)}); "
                "an output folder's files are written inside it, never through a link out of it: remove the link"
            )
