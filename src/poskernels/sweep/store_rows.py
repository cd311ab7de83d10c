"""What a sweep store's failures mean, and what a row must hold: SQLite's errors sorted into damage (bad input,
exit 2) and the machine's failures (a full disk, a lock, an I/O error: exit 1), and the check of every row read
back, so a row edited by hand is reported as a damaged row, never as a foreign error of a writer downstream.
"""

from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path

from ..errors import PosKernelsError
from .settings import SETTINGS

__all__ = ["check_row", "store_failure", "store_files"]


#: SQLite's primary result codes that are not damage (``sqlite3.Error.sqlite_errorcode & 0xff``).
_BUSY, _LOCKED, _READONLY, _IOERR, _FULL, _CANTOPEN = 5, 6, 8, 10, 13, 14


def store_failure(err: Exception, path) -> Exception:
    """The error to raise for SQLite's ``err`` on the store at ``path``: damage is bad input, the rest is not.

    A full disk is an :class:`OSError` (``ENOSPC``, exit 1) saying "disk full" and that the store is intact; a
    locked store or an I/O error is an :class:`OSError` too; a store that cannot be written (read-only) is a
    :class:`PosKernelsError` saying so; only what SQLite reports as damage (or garbled text) says "damaged".

    Parameters
    ----------
    err : Exception
        The :mod:`sqlite3` error.
    path : str or path-like
        The store's file, quoted in the message.

    Returns
    -------
    OSError or PosKernelsError
        The error to raise in its place (``from err``).

    Examples
    --------
    >>> import sqlite3
    >>> full = sqlite3.OperationalError("database or disk is full")
    >>> e = store_failure(full, "s.sqlite"); type(e).__name__, e.errno == errno.ENOSPC, "disk full" in str(e)
    ('OSError', True, True)
    >>> "damaged" in str(store_failure(sqlite3.DatabaseError("file is not a database"), "s.sqlite"))
    True
    """
    shown = repr(str(path))
    code = getattr(err, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(err)
    if primary == _FULL or "disk is full" in text:
        return OSError(errno.ENOSPC, f"disk full: the sweep store {shown} could not be written (SQLite says: {text}); "
                       "the store is intact: free some space and run the same command again")  # fmt: skip
    if primary in (_BUSY, _LOCKED) or "database is locked" in text:
        return OSError(errno.EBUSY, f"the sweep store {shown} is locked by another process (SQLite says: {text}); "
                       "wait for it to finish and run again")  # fmt: skip
    if (primary == _IOERR or "disk I/O error" in text) and _no_space(path):  # SQLite's I/O error on a full disk
        return OSError(errno.ENOSPC, f"disk full: the sweep store {shown} could not be written (SQLite says: {text}, "
                       "and its folder has no space left); free some space and run the same command again")  # fmt: skip
    if primary == _IOERR or "disk I/O error" in text:
        return OSError(errno.EIO, f"the sweep store {shown} could not be read or written (SQLite says: {text})")
    if primary == _READONLY or "readonly database" in text:
        return PosKernelsError(f"the sweep store {shown} cannot be written (SQLite says: {text}); it is read-only "
                               "here (file or folder permissions, or a reader such as export or plot)")  # fmt: skip
    if primary == _CANTOPEN:
        return PosKernelsError(f"cannot open the sweep store {shown} (SQLite says: {text})")
    return PosKernelsError(f"the sweep store {shown} is damaged (SQLite says: {text}); move it away and run again")


#: Free space below which an I/O error of the store's folder is read as a full disk (a page and its journal).
_FULL_BELOW = 1 << 20


def _no_space(path) -> bool:
    """Whether the folder of ``path`` has (almost) no space left for the store to write in."""
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(os.fspath(path))) or ".")
    except (OSError, TypeError, ValueError, AttributeError):
        return False
    return st.f_bavail * st.f_frsize < _FULL_BELOW or (st.f_favail == 0 and st.f_files > 0)


def store_files(path) -> list[Path]:
    """The store's file and the ones SQLite and the driver keep beside it (``-wal``, ``-shm``, ``.lock``).

    An output of ``export`` or ``plot`` must be none of them (:func:`poskernels.atomic.check_output`'s ``inputs``).

    Parameters
    ----------
    path : str or path-like
        The store's file.

    Returns
    -------
    list of Path

    Examples
    --------
    >>> [p.name for p in store_files("s.sqlite")]
    ['s.sqlite', 's.sqlite-wal', 's.sqlite-shm', 's.sqlite.lock']
    """
    path = Path(path)
    return [path, *(path.with_name(path.name + tail) for tail in ("-wal", "-shm", ".lock"))]


def refuse_store_output(out, store, what: str = "--out") -> None:
    """Refuse an output that is one of the store's files by name, whether SQLite has made it yet or not.

    A ``-wal`` or ``-shm`` exists only while the store is open, so the output check's comparison of files cannot
    see it.

    Parameters
    ----------
    out : str, path-like, Output or None
        The output given (None or ``"-"``: nothing to check).
    store : str or path-like
        The store's file.
    what : str
        The option named in the error.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If ``out`` is one of :func:`store_files`.

    Examples
    --------
    >>> refuse_store_output("plot.png", "s.sqlite")
    >>> refuse_store_output("s.sqlite-wal", "s.sqlite")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --out: 's.sqlite-wal' is the sweep store's own file (s.sqlite-wal of ...
    """
    given = getattr(out, "given", out)
    if given is None or str(given) == "-":
        return
    try:
        target = os.path.realpath(os.fspath(given))
    except (TypeError, ValueError):
        return  # not a path: the output check names it
    for f in store_files(store):
        if os.path.realpath(f) == target:
            raise PosKernelsError(f"{what}: {str(given)!r} is the sweep store's own file ({f.name} of "
                                  f"{str(store)!r}); writing it would destroy the store")  # fmt: skip


def _damaged_row(path, key, why: str) -> PosKernelsError:
    return PosKernelsError(f"the sweep store {str(path)!r} holds a damaged row (key {str(key)[:40]!r}): {why}; "
                           "was it edited by hand? run the sweep again with a new store")  # fmt: skip


def _is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def check_row(path, r: dict) -> dict:
    """``r`` with ``config`` and ``metrics`` decoded and every field of the type the store writes, else refuse.

    Parameters
    ----------
    path : str or path-like
        The store's file, quoted in an error.
    r : dict
        A row as SQLite hands it back (``config`` and ``metrics`` as JSON text); decoded in place.

    Returns
    -------
    dict
        ``r``.

    Raises
    ------
    PosKernelsError
        If a field is not of the type the store writes (a row edited by hand): the row is named damaged.

    Examples
    --------
    >>> row = {"key": "k1", "config": '{"scheme": "rope", "d": 16}', "metrics": None, "status": "pending",
    ...        **dict.fromkeys(_BOOKKEEPING_TYPES)}
    >>> check_row("s.sqlite", dict(row))["config"]
    {'scheme': 'rope', 'd': 16}
    >>> check_row("s.sqlite", {**row, "config": '{"scheme": "rope", "d": "16"}'})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the sweep store 's.sqlite' holds a damaged row (key 'k1'): setting d = '16'
    is not int; was it edited by hand? run the sweep again with a new store
    """
    key = r["key"]
    if not isinstance(key, str):
        raise _damaged_row(path, key, f"its key is {type(key).__name__}, not text")
    for name in ("config", "metrics"):
        text = r[name]
        if text is None and name == "metrics":
            continue
        if not isinstance(text, str):
            raise _damaged_row(path, key, f"{name} is {type(text).__name__}, not JSON text")
        try:
            r[name] = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise _damaged_row(path, key, f"{name} is not valid JSON ({str(err)[:80]})") from None
        if not isinstance(r[name], dict):
            raise _damaged_row(path, key, f"{name} is {type(r[name]).__name__}, not a JSON object")
    for name, value in r["config"].items():
        setting = SETTINGS.get(name)
        if setting is None or value is None:
            continue
        kind = setting.kind
        ok = (isinstance(value, str) if kind is str else _is_number(value) and isinstance(value, int)
              if kind is int else _is_number(value) if kind is float else
              isinstance(value, list) and all(_is_number(v) and isinstance(v, int) for v in value))  # fmt: skip
        if not ok:
            raise _damaged_row(path, key, f"setting {name} = {_shown(value)} is not {kind.__name__}")
    if not isinstance(r["config"].get("scheme"), str):
        raise _damaged_row(path, key, "config has no scheme")
    if not isinstance(r["config"].get("scheme_source", ""), str):  # a user's scheme's digest (point.with_source)
        raise _damaged_row(path, key, f"scheme_source is {_shown(r['config']['scheme_source'])}, not text")
    metrics = r["metrics"]
    if metrics is not None:
        accuracy = metrics.get("accuracy", {})
        if not isinstance(accuracy, dict):
            raise _damaged_row(path, key, f"accuracy is {_shown(accuracy)}, not an object of length -> accuracy")
        for n, acc in accuracy.items():
            if not (n.isascii() and n.isdigit() and 0 < len(n) <= 18 and int(n) > 0):
                raise _damaged_row(path, key, f"accuracy has the length {_shown(n)}, not a positive integer")
            if acc is not None and not (_is_number(acc) and 0 <= acc <= 1):
                raise _damaged_row(path, key, f"accuracy at {n} is {_shown(acc)}, not a number in [0, 1] or null")
        loss = metrics.get("final_loss")
        if loss is not None and not _is_number(loss):
            raise _damaged_row(path, key, f"final_loss is {_shown(loss)}, not a finite number or null")
    if r.get("status") == "done" and (metrics is None or not metrics.get("accuracy")):
        raise _damaged_row(path, key, f"it is marked done but holds no metrics ({_shown(metrics)})")
    for name, kinds in _BOOKKEEPING_TYPES.items():
        value = r[name]
        if value is not None and not (isinstance(value, kinds) and (not isinstance(value, float)
                                                                   or math.isfinite(value))):  # fmt: skip
            raise _damaged_row(path, key, f"{name} is {_shown(value)}, not {' or '.join(k.__name__ for k in kinds)}")
    return r


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:45]}...{text[-10:]}"


_INT, _REAL, _TEXT = (int,), (int, float), (str,)


#: The type SQLite hands back for each bookkeeping column the store writes (a hand edit can store any type).
_BOOKKEEPING_TYPES = {"seed": _INT, "scheme": _TEXT, "code_version": _TEXT, "error": _TEXT, "attempts": _INT,
                      "failures": _INT, "lost": _INT, "trained": _INT, "training": _TEXT, "train_seconds": _REAL,
                      "eval_seconds": _REAL, "worker": _TEXT, "run_id": _INT, "submitted_at": _REAL,
                      "started_at": _REAL, "finished_at": _REAL}  # fmt: skip
