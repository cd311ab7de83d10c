"""Flatten a sweep's store into a table: CSV with the standard library, Parquet with pyarrow.

One record per row of the store: the key, the status, the code version, every setting of the point as its
own column (``test_lengths`` a list: a list column in Parquet, JSON text in CSV), ``acc_<n>`` per test length
(empty where a head is undefined at that length, e.g. a learned table past its rows), ``final_loss``, and the
bookkeeping columns (attempts, failures, timings, worker, error).
"""

from __future__ import annotations

import csv
import json

from ..atomic import Output, check_output
from ..errors import PosKernelsError
from .settings import SETTINGS
from .store import Store, store_files
from .store_rows import refuse_store_output

__all__ = ["FORMATS", "export", "records"]

_BOOKKEEPING = ("attempts", "failures", "lost", "trained", "training", "train_seconds", "eval_seconds", "worker",
                "run_id", "submitted_at", "started_at", "finished_at", "error")  # fmt: skip


def records(store: Store) -> tuple[list[str], list[dict]]:
    """Column names and one flat dict per row of ``store``.

    Parameters
    ----------
    store : Store
        The sweep's results.

    Returns
    -------
    tuple of (list of str, list of dict)
        The column names (the key, the status, every setting, then ``acc_<length>`` per test length and the final
        loss), and one dict per row with those keys.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from poskernels.sweep.grid import parse_grid
    >>> with Store(pathlib.Path(tempfile.mkdtemp()) / "s.sqlite") as s:
    ...     p = parse_grid("").points[0]
    ...     _ = s.add_points([("k", p)], "v")
    ...     s.finish({"k": {"metrics": {"accuracy": {"32": 0.5, "64": None}, "final_loss": 1.0}}}, run_id=1)
    ...     names, rows = records(s)
    >>> [n for n in names if n.startswith("acc_")], rows[0]["acc_32"], rows[0]["acc_64"], rows[0]["status"]
    (['acc_32', 'acc_64'], 0.5, None, 'done')
    """
    lengths: set[int] = set()
    sources = False
    out = []
    for r in store.rows():
        rec = {"key": r["key"], "status": r["status"], "code_version": r["code_version"]}
        for name in SETTINGS:
            value = r["config"].get(name)
            rec[name] = value
        if "scheme_source" in r["config"]:  # a user's scheme: the digest of what it computed (scheme_digest)
            sources = True
            rec["scheme_source"] = r["config"]["scheme_source"]
        metrics = r["metrics"] or {}
        for n, acc in (metrics.get("accuracy") or {}).items():
            lengths.add(int(n))
            rec[f"acc_{n}"] = acc
        rec["final_loss"] = metrics.get("final_loss")
        rec.update({k: r[k] for k in _BOOKKEEPING})
        out.append(rec)
    names = ["key", "status", "code_version", *SETTINGS, *(["scheme_source"] if sources else []),
             *(f"acc_{n}" for n in sorted(lengths)), "final_loss", *_BOOKKEEPING]  # fmt: skip
    return names, [{n: rec.get(n) for n in names} for rec in out]


def _write_csv(names, rows, fh) -> None:
    w = csv.DictWriter(fh, fieldnames=names)
    w.writeheader()
    w.writerows({k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows)


def _write_parquet(names, rows, fh) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise PosKernelsError(
            "Parquet export needs pyarrow: pip install 'poskernels[parquet]' (or use --format csv, which needs nothing)"
        ) from None
    table = pa.Table.from_pydict({n: [r[n] for r in rows] for n in names})
    pq.write_table(table, fh)


#: Writers by format name: the writer and the mode it writes in (text with no newline translation, or bytes).
FORMATS = {"csv": (_write_csv, "w"), "parquet": (_write_parquet, "wb")}


def export(store: Store, path, fmt: str = "csv") -> int:
    """Write ``store`` to ``path`` as ``fmt`` (``csv`` or ``parquet``) through the one writer; returns the rows.

    Parameters
    ----------
    store : Store
        The sweep's results.
    path : str, pathlib.Path or Output
        A path, ``"-"`` (the table alone on standard output, bytes for Parquet) or a checked
        :class:`~poskernels.atomic.Output`.
    fmt : {"csv", "parquet"}, optional
        The format; default ``"csv"`` (Parquet needs pyarrow).

    Returns
    -------
    int
        The number of rows written.

    Raises
    ------
    PosKernelsError
        If `fmt` is unknown, or `path` is one of the store's files (refused before anything is read) or cannot be
        written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from poskernels.sweep.grid import parse_grid
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with Store(root / "s.sqlite") as s:
    ...     _ = s.add_points([("k", parse_grid("").points[0])], "v")
    ...     export(s, root / "rows.csv")
    1
    >>> (root / "rows.csv").read_text().split(",")[:3]
    ['key', 'status', 'code_version']
    """
    if fmt not in FORMATS:
        raise PosKernelsError(f"unknown export format {fmt!r}; accepted: {', '.join(FORMATS)}")
    refuse_store_output(path, store.path, "--out")
    out = path if isinstance(path, Output) else check_output(path, "--out", inputs=store_files(store.path))
    names, rows = records(store)
    write, mode = FORMATS[fmt]
    with out.open(mode, newline="") as fh:
        write(names, rows, fh)
    return len(rows)
