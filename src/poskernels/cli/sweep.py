"""``poskernels sweep``: one head per point of a grid into a resumable store, or a store exported (``plot`` draws it).

::

    poskernels sweep GRID.toml --store PATH [--scheduler ADDRESS] [--workers N] [--cache DIR] [--retry-failed]
    poskernels sweep export STORE --format csv|parquet --out FILE
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from ..atomic import check_output
from ..errors import PosKernelsError, check_positive_int
from ..sweep.backends import dask_backend, local_backend
from ..sweep.export import FORMATS, export
from ..sweep.grid import load_grid
from ..sweep.runner import run_sweep
from ..sweep.store import Store, store_files
from ..sweep.store_rows import refuse_store_output

__all__ = ["HELP", "add_arguments", "failure_reasons", "run"]

HELP = "train and read one head per point of a grid (TOML) into a resumable SQLite store; or export a store"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``sweep`` subcommand's arguments (a run, or ``export``) to ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    None

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> a = p.parse_args(["export", "s.sqlite"])
    >>> a.grid, a.export_store.name, a.format, a.stack
    ('export', 's.sqlite', 'csv', 16)
    """
    p.epilog = (
        "Run:    poskernels sweep GRID.toml --store PATH [--scheduler tcp://HOST:PORT] [--workers N]\n"
        "Export: poskernels sweep export STORE --format csv|parquet --out FILE\n"
        "An interrupted sweep resumes where it stopped when the same command is run again."
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("grid", metavar="GRID.toml|export", help="the grid file, or 'export' followed by a store")
    p.add_argument("export_store", nargs="?", metavar="STORE", type=Path, help="(export) the store to export")
    p.add_argument("--store", type=Path, help="the SQLite store of results (created if absent)")
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="a Dask distributed scheduler (default: a local process pool)"
    )
    p.add_argument(
        "--workers",
        type=int,
        help="local processes (default: the CPUs); with --scheduler, the jobs to run at once (default: its threads)",
    )
    p.add_argument("--cache", type=Path, help="folder of trained heads shared with 'reproduce' (visible to workers)")
    p.add_argument("--retry-failed", action="store_true", help="run again the points recorded as failed")
    p.add_argument(
        "--stack", type=int, default=16, help="most trainings (seeds of one configuration) per job (default: 16)"
    )
    p.add_argument("--format", choices=sorted(FORMATS), default="csv", help="(export) output format (default: csv)")
    p.add_argument("--out", help="(export) the file to write ('-': the table alone on standard output)")


def run(args: argparse.Namespace) -> int:
    """Run ``poskernels sweep``: train and read every point of a grid into a store, or export a store.

    Parameters
    ----------
    args : argparse.Namespace
        Arguments parsed by :func:`add_arguments` (``quiet`` too, when set: no progress lines).

    Returns
    -------
    int
        ``0``, or ``1`` when a point failed (each distinct reason is printed, :func:`failure_reasons`).

    Raises
    ------
    PosKernelsError
        If ``export`` lacks its store or ``--out``, ``--store`` is missing or not a regular file, or the grid,
        ``--stack`` or ``--workers`` is refused.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> run(p.parse_args(["grid.toml"]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --store PATH is required: the SQLite file that keeps the results
    """
    if args.grid == "export":
        if args.export_store is None or args.out is None:
            raise PosKernelsError("usage: poskernels sweep export STORE --format csv|parquet --out FILE")
        refuse_store_output(args.out, args.export_store, "--out")  # its -wal or -shm, made by SQLite or not yet
        out = check_output(args.out, "--out", inputs=store_files(args.export_store))
        with Store(args.export_store, create=False) as store:
            n = export(store, out, args.format)
        if not out.is_stdout and not getattr(args, "quiet", False):
            print(f"wrote {n} rows to {args.out}", file=sys.stderr)
        return 0
    if args.export_store is not None:
        raise PosKernelsError(f"unexpected argument {str(args.export_store)!r} (did you mean --store?)")
    if args.store is None:
        raise PosKernelsError("--store PATH is required: the SQLite file that keeps the results")
    if check_output(args.store, "--store", inputs=[args.grid]).how != "replace":  # SQLite needs a regular file
        what = "- (standard output)" if str(args.store) == "-" else f"{str(args.store)!r}, not a regular file,"
        raise PosKernelsError(f"--store: {what} cannot hold a store; SQLite keeps it in a file")
    grid = load_grid(args.grid)
    check_positive_int("--stack", args.stack)
    if args.workers is not None:
        check_positive_int("--workers", args.workers)
    backend = local_backend(args.workers) if args.scheduler is None else dask_backend(args.scheduler, args.workers)
    try:
        with Store(args.store) as store:
            quiet = {"stream": io.StringIO()} if getattr(args, "quiet", False) else {}  # no progress lines
            s = run_sweep(grid, store, backend, cache_dir=args.cache, retry_failed=args.retry_failed, stack=args.stack,
                          **quiet)  # fmt: skip
            reasons = failure_reasons(store) if s.failed else []
    finally:
        backend.close()
    rate = (s.done - s.done_before) / s.seconds if s.seconds > 0 else 0.0
    if not getattr(args, "quiet", False):
        print(
            f"sweep: {s.done}/{s.points} points done ({s.done - s.done_before} this run, {s.trained} heads trained, "
            f"{rate:.2f} points/s), {s.failed} failed; store {args.store}",
            file=sys.stderr,
        )
    for line in reasons:  # the reason of a failure, not only its count (the store keeps the whole traceback)
        print(line, file=sys.stderr)
    return 1 if s.failed else 0


def failure_reasons(store: Store, shown: int = 5) -> list[str]:
    """One line per distinct reason the store's failed points give (their error's first line), most common first.

    Parameters
    ----------
    store : Store
        An open sweep store.
    shown : int
        The most reasons listed; a last line counts the others.

    Returns
    -------
    list of str
        Empty when no point failed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with Store(pathlib.Path(tempfile.mkdtemp()) / "s.sqlite") as s:
    ...     _ = s.add_points([("k1", {"scheme": "rope", "seed": 0}), ("k2", {"scheme": "rope", "seed": 1})], "v")
    ...     s.fail(["k1", "k2"], "MemoryError: steps = 10**12\\nTraceback ...", final=True, run_id=1)
    ...     failure_reasons(s)
    ['sweep: 2 point(s) failed with: MemoryError: steps = 10**12 (first: scheme=rope, seed=0)']
    """
    reasons: dict[str, list[dict]] = {}
    for row in store.rows("failed"):
        first = (row["error"] or "no reason recorded").strip().splitlines()[0]
        reasons.setdefault(first, []).append(row["config"])
    lines = []
    for reason, configs in sorted(reasons.items(), key=lambda kv: -len(kv[1]))[:shown]:
        example = ", ".join(f"{k}={configs[0][k]}" for k in ("scheme", "d", "n_train", "seed") if k in configs[0])
        lines.append(f"sweep: {len(configs)} point(s) failed with: {reason} (first: {example})")
    if len(reasons) > shown:
        lines.append(f"sweep: ... and {len(reasons) - shown} other reason(s); 'poskernels sweep export' lists them all")
    return lines
