"""The sweep's store: one SQLite row per grid point, written in transactions by the driver alone.

A row is keyed by :func:`poskernels.sweep.point.point_key` (a hash of the point's configuration),
so running a grid again finds the rows it already has.  Its ``status`` moves
``pending -> running -> done`` (or ``failed``); ``running`` means "handed to an executor", and a
row left ``running`` by a killed driver is simply run again.  Every change is one transaction, and
a job's rows are finished together, so a crash leaves each row either as it was or complete.
The database runs in WAL mode with ``synchronous = FULL``: a reader (``export``, ``plot``) never
blocks the sweep, and a committed row survives the process being killed.

Columns: ``key``, ``config`` (JSON of the point), ``scheme``, ``seed``, ``status``,
``code_version``, ``metrics`` (JSON: ``accuracy`` per test length, ``final_loss``), ``error``,
``attempts`` (times handed to an executor), ``failures`` (times it raised), ``lost`` (times its
worker died under it), ``trained`` (1 if this row's head was trained, 0 if read from a cache),
``training`` (a key shared by the rows read from one trained head),
``train_seconds``, ``eval_seconds``, ``worker``, ``run_id`` (the run that finished it),
``submitted_at``, ``started_at``, ``finished_at`` (epoch seconds).  Table ``runs`` logs each
invocation with its grid text.  A store may hold the points of several grids (a grid run again with
more seeds adds rows); ``export`` and ``plot`` show every row.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import stat
import time
from pathlib import Path
from urllib.parse import quote

from ..errors import PosKernelsError, check_int
from .store_rows import check_row, store_failure, store_files

__all__ = ["COLUMNS", "Store", "store_failure", "store_files"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS points (
    key TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    scheme TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    code_version TEXT NOT NULL,
    metrics TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    lost INTEGER NOT NULL DEFAULT 0,
    trained INTEGER,
    training TEXT,
    train_seconds REAL,
    eval_seconds REAL,
    worker TEXT,
    run_id INTEGER,
    submitted_at REAL,
    started_at REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    code_version TEXT NOT NULL,
    grid TEXT NOT NULL,
    executor TEXT NOT NULL
);
"""

#: Columns of ``points``, in table order.
COLUMNS = ("key", "config", "scheme", "seed", "status", "code_version", "metrics", "error", "attempts",
           "failures", "lost", "trained", "training", "train_seconds", "eval_seconds", "worker", "run_id",
           "submitted_at", "started_at", "finished_at")  # fmt: skip


def _guarded(method):
    """Turn SQLite's errors into :func:`store_failure`'s, and a row altered on disk into a damaged-row error."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as err:
            raise store_failure(err, self.path) from None
        except UnicodeDecodeError as err:
            raise PosKernelsError(f"the sweep store {str(self.path)!r} holds damaged text ({err})") from None
        except OverflowError as err:  # a value past SQLite's 64-bit integers
            raise PosKernelsError(f"the sweep store {str(self.path)!r} cannot hold a value: {err}") from None

    return wrapper


class Store:
    """A sweep's SQLite file.

    Parameters
    ----------
    path : str or Path
        The database file (created with its folder if absent).
    create : bool
        False to refuse a missing file (``export`` and ``plot`` read an existing store).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with Store(pathlib.Path(tempfile.mkdtemp()) / "s.sqlite") as s:
    ...     s.add_points([("k1", {"scheme": "rope", "seed": 0})], "v1")
    ...     s.submit(["k1"])
    ...     s.finish({"k1": {"metrics": {"accuracy": {"32": 1.0}}, "trained": True}}, run_id=1)
    ...     s.counts()
    1
    {'done': 1}
    """

    def __init__(self, path, create: bool = True):
        self.path = Path(path)
        self.readonly = not create
        self._lock = None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        except OSError as err:  # a name too long, a loop of links, a component that is a file
            if not isinstance(err, NotADirectoryError):
                raise PosKernelsError(f"cannot use the sweep store path: {err.strerror or err}") from None
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise PosKernelsError(f"the sweep store {str(self.path)!r} is a folder; give a file path")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise PosKernelsError(f"the sweep store {str(self.path)!r} is not a regular file (a device, a FIFO, a "
                                  "socket); SQLite needs a file")  # fmt: skip
        if st is None and not create:
            raise PosKernelsError(f"no sweep store at {str(self.path)!r}")
        if st is None and not self.path.parent.is_dir():
            raise PosKernelsError(
                f"cannot create the sweep store {str(self.path)!r}: its folder {str(self.path.parent)!r} does not "
                "exist (create it first)"
            )
        if st is not None:
            _check_header(self.path)
        try:
            if self.readonly:  # export and plot: the file is opened read-only, so nothing is ever written to it
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
            else:
                self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as err:
            raise store_failure(err, self.path) from None
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except (sqlite3.Error, UnicodeDecodeError) as err:  # a damaged page may garble text, too
            self.db.close()
            if isinstance(err, sqlite3.Error) and not isinstance(store_failure(err, self.path), PosKernelsError):
                raise store_failure(err, self.path) from None
            raise PosKernelsError(f"{str(self.path)!r} is not a sweep store (SQLite says: {err})") from None
        if (tables or self.readonly) and (version != SCHEMA_VERSION or "points" not in tables):
            self.db.close()
            raise PosKernelsError(
                f"{str(self.path)!r} is not a sweep store of schema {SCHEMA_VERSION} (found version {version}, "
                f"tables {sorted(tables)})"
            )
        try:
            if not self.readonly:
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = FULL")
            if not tables and not self.readonly:  # one script, one transaction: the tables and the schema version
                self.db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
            if self.readonly:  # a reader checks every page now, so a damaged store is reported before any work
                problem = self.db.execute("PRAGMA quick_check").fetchone()[0]
                if problem != "ok":
                    raise sqlite3.DatabaseError(problem)
        except (sqlite3.Error, UnicodeDecodeError) as err:
            self.db.close()
            if isinstance(err, UnicodeDecodeError):
                err = sqlite3.DatabaseError(str(err))
            raise store_failure(err, self.path) from None

    # -- plumbing -------------------------------------------------------------------------------
    def _transaction(self):
        return _Transaction(self.db)

    def close(self) -> None:
        self.db.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- runs -----------------------------------------------------------------------------------
    def lock(self) -> None:
        """Claim the store for one driver until this process ends or :meth:`close`.

        An advisory ``flock`` on ``PATH.lock``: the kernel drops it when the process dies, even by
        SIGKILL, so a killed driver never leaves the store locked, and two drivers never share it.
        """
        if self._lock is not None:
            return
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: one driver per store is the user's to ensure
            return
        fh = open(self.path.with_name(self.path.name + ".lock"), "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise PosKernelsError(f"another sweep is running on the store {str(self.path)!r}") from None
        self._lock = fh

    @_guarded
    def begin_run(self, grid_text: str, code_version: str, executor: str) -> int:
        """Log a new invocation (a run still marked running was killed: it is marked so); returns its id."""
        with self._transaction():
            self.db.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")
            cur = self.db.execute(
                "INSERT INTO runs (started_at, status, code_version, grid, executor) VALUES (?, 'running', ?, ?, ?)",
                (time.time(), code_version, grid_text, executor),
            )
        return int(cur.lastrowid)

    @_guarded
    def end_run(self, run_id: int, status: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE runs SET finished_at = ?, status = ? WHERE id = ?", (time.time(), status, run_id))

    @_guarded
    def runs(self) -> list[dict]:
        cur = self.db.execute("SELECT id, started_at, finished_at, status, code_version, executor FROM runs")
        return [dict(zip([c[0] for c in cur.description], row)) for row in cur.fetchall()]

    @_guarded
    def query(self, sql: str, args=()) -> list[tuple]:
        """Rows of a read-only ``sql`` statement (SQLite errors become :class:`PosKernelsError`)."""
        return self.db.execute(sql, args).fetchall()

    # -- points ---------------------------------------------------------------------------------
    @_guarded
    def add_points(self, points, code_version: str) -> int:
        """Insert ``(key, point)`` pairs not yet stored as ``pending``; returns how many were new."""
        for _, p in points:
            check_int("a point's seed", p["seed"], 0, 2**63 - 1, "SQLite's signed 64-bit integers, below 2**63")
        with self._transaction():
            before = self.db.total_changes
            self.db.executemany(
                "INSERT OR IGNORE INTO points (key, config, scheme, seed, status, code_version) "
                "VALUES (?, ?, ?, ?, 'pending', ?)",
                [(k, json.dumps(p, sort_keys=True), p["scheme"], p["seed"], code_version) for k, p in points],
            )
            return self.db.total_changes - before

    @_guarded
    def todo(self, keys, code_version: str, retry_failed: bool = False) -> tuple[list[str], int]:
        """Keys among ``keys`` still to run, in the given order, and how many of them are stale.

        Done rows of ``code_version`` are kept; done rows of another version are stale (run again);
        failed rows are run again only with ``retry_failed`` (their failure count then restarts).
        """
        rows = dict(self.db.execute("SELECT key, status || '|' || code_version FROM points").fetchall())
        out, stale, retry = [], 0, []
        for key in keys:
            status, version = rows[key].split("|", 1)
            if status == "done" and version == code_version:
                continue
            if status == "failed" and version == code_version and not retry_failed:
                continue
            stale += status == "done"
            if status == "failed":
                retry.append(key)
            out.append(key)
        if retry:
            with self._transaction():
                self.db.executemany("UPDATE points SET failures = 0 WHERE key = ?", [(k,) for k in retry])
        return out, stale

    @_guarded
    def submit(self, keys) -> None:
        """Mark rows as handed to an executor (``attempts`` + 1)."""
        with self._transaction():
            self.db.executemany(
                "UPDATE points SET status = 'running', attempts = attempts + 1, submitted_at = ? WHERE key = ?",
                [(time.time(), k) for k in keys],
            )

    @_guarded
    def finish(self, results: dict, run_id: int, code_version: str | None = None) -> None:
        """Record finished rows, all in one transaction.

        ``results[key]`` holds ``metrics`` (JSON-ready) and optionally ``trained``, ``train_seconds``,
        ``eval_seconds``, ``worker``, ``started_at``, ``finished_at``.
        """
        now = time.time()
        with self._transaction():
            for key, r in results.items():
                self.db.execute(
                    "UPDATE points SET status = 'done', metrics = ?, error = NULL, trained = ?, training = ?, "
                    "train_seconds = ?, eval_seconds = ?, worker = ?, run_id = ?, started_at = ?, finished_at = ?, "
                    "code_version = COALESCE(?, code_version) WHERE key = ?",
                    (json.dumps(r["metrics"], sort_keys=True), int(bool(r.get("trained", True))),
                     r.get("training"), r.get("train_seconds"), r.get("eval_seconds"), r.get("worker"), run_id,
                     r.get("started_at"), r.get("finished_at", now), code_version, key),
                )  # fmt: skip

    @_guarded
    def fail(self, keys, error: str, final: bool, run_id: int) -> None:
        """Count one failure of each row; ``final`` records it as failed with ``error``, else pending."""
        status = "failed" if final else "pending"
        with self._transaction():
            self.db.executemany(
                "UPDATE points SET failures = failures + 1, status = ?, error = ?, run_id = ?, "
                "finished_at = CASE WHEN ? THEN ? ELSE finished_at END WHERE key = ?",
                [(status, error, run_id, final, time.time(), k) for k in keys],
            )

    @_guarded
    def lose(self, keys, error: str | None = None) -> None:
        """Count a worker's death under each row; with ``error`` the rows are recorded as failed."""
        with self._transaction():
            self.db.executemany(
                "UPDATE points SET lost = lost + 1, status = ?, error = COALESCE(?, error) WHERE key = ?",
                [("failed" if error else "pending", error, k) for k in keys],
            )

    @_guarded
    def release(self, keys) -> None:
        """Put rows handed out but not finished back to ``pending`` (after an interruption)."""
        with self._transaction():
            self.db.executemany(
                "UPDATE points SET status = 'pending' WHERE key = ? AND status = 'running'", [(k,) for k in keys]
            )

    @_guarded
    def counts(self) -> dict:
        """Rows per status."""
        return dict(self.db.execute("SELECT status, COUNT(*) FROM points GROUP BY status ORDER BY status").fetchall())

    @_guarded
    def rows(self, status: str | None = None) -> list[dict]:
        """Every row (or those of one ``status``) as dicts, ``config`` and ``metrics`` decoded, by key."""
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        cur = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM points {where} ORDER BY rowid", args)
        return [check_row(self.path, dict(zip(COLUMNS, row))) for row in cur.fetchall()]


def _check_header(path: Path) -> None:
    """Refuse, before SQLite opens it, a file that is empty or does not start as an SQLite database does."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as err:
        raise PosKernelsError(f"cannot read the sweep store {str(path)!r}: {err.strerror or err}") from None
    if head and head != b"SQLite format 3\x00":
        raise PosKernelsError(f"{str(path)!r} is not a sweep store (not an SQLite database: it starts {head[:8]!r})")


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception, KeyboardInterrupt included)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        if self.db.in_transaction:  # one a Ctrl-C left open (it landed after BEGIN, before the block): undo it
            self.db.execute("ROLLBACK")
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, value, tb):
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
        return False
