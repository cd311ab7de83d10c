"""No stale result after an edit, and no result that is not one: the digest that keys a user's trained heads and
sweep rows covers everything the scheme computes with, a sweep store's rows are what they say, and a sweep's
outputs never land on the store's own files."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from hostile_schemes import HEAD
from poskernels.cli import main
from poskernels.encodings import SCHEMES
from poskernels.errors import PosKernelsError
from poskernels.model.config import preset
from poskernels.model.scheme_file import load_scheme_file
from poskernels.model.scheme_identity import scheme_digest
from poskernels.model.trained import head_path

#: A bias whose slope is a module constant (and, in the variants, a helper module's or a data file's).
SLOPE = (
    HEAD
    + """
SLOPE = {SLOPE}
{EXTRA}

class Sloped(Scheme):
    name, title, article, where, colour = "sloped", "a sloped bias", "none", "score", "#ddcc77"

    def bias(self, params, cfg, q, r):
        return -slope() * r

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {{}}
"""
)


def _write(path: Path, slope: str = "0.5", extra: str = "def slope():\n    return SLOPE\n") -> Path:
    path.write_text(SLOPE.format(SLOPE=slope, EXTRA=extra))
    return path


def _key(path: Path) -> tuple[str, Path]:
    load_scheme_file(path)
    return scheme_digest("sloped"), head_path(Path("c"), preset("tournament", "sloped"), 0)


def test_editing_a_module_constant_a_bias_reads_changes_the_key(clean_registry, tmp_path):
    path = _write(tmp_path / "sloped.py")
    before = _key(path)
    _write(path, slope="0.25")  # the class body is the same; the constant it reads is not
    after = _key(path)
    assert before[0] != after[0] and before[1] != after[1]
    assert SCHEMES["sloped"].bias({}, None, None, 4.0) == -1.0  # the edited file's class is the one registered
    _write(path, slope="0.5")
    assert _key(path) == before  # the same source, the same key


def test_editing_a_helper_module_the_file_imports_changes_the_key(clean_registry, tmp_path, monkeypatch):
    helper = tmp_path / "slope_helper_g33.py"
    helper.write_text("VALUE = 0.5\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = _write(
        tmp_path / "sloped.py", extra="import slope_helper_g33\ndef slope():\n    return slope_helper_g33.VALUE\n"
    )
    before = _key(path)
    helper.write_text("VALUE = 0.5  # the same value; an edit all the same\n")
    import importlib
    import sys

    importlib.reload(sys.modules["slope_helper_g33"])
    assert _key(path)[0] != before[0]


def test_what_the_scheme_reads_while_it_runs_is_in_the_key(clean_registry, tmp_path):
    data = tmp_path / "slope.txt"
    data.write_text("0.5")
    path = _write(tmp_path / "sloped.py", extra=f"def slope():\n    return float(open({str(data)!r}).read())\n")
    before = _key(path)
    data.write_text("0.125")  # no source changed: the computed signature did
    assert _key(path)[0] != before[0]


def test_a_sweep_row_of_an_edited_scheme_has_a_key_of_its_own(clean_registry, tmp_path):
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.point import point_key, with_source

    path = _write(tmp_path / "sloped.py")
    grid = f'[sweep]\nscheme_file = "{path}"\n[grid]\nscheme = ["sloped"]\n'
    key = point_key(with_source(parse_grid(grid, str(tmp_path / "g.toml")).points[0]))
    _write(path, slope="0.25")
    del SCHEMES["sloped"]
    assert point_key(with_source(parse_grid(grid, str(tmp_path / "g.toml")).points[0])) != key
    built_in = parse_grid("", "<grid>").points[0]
    assert with_source(built_in) == built_in  # a built-in scheme's rows keep their keys


def _store(tmp_path: Path, metrics: str | None) -> Path:
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.store import Store

    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        s.add_points([("k", parse_grid("").points[0])], "v")
        s.finish({"k": {"metrics": {"accuracy": {"32": 0.5}, "final_loss": 1.0}}}, run_id=1)
    con = sqlite3.connect(path)
    con.execute("UPDATE points SET metrics = ?", (metrics,))
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize("metrics", [None, "{}", '{"accuracy": {}}', '{"final_loss": 1.0}'])
def test_export_never_writes_a_done_row_without_metrics(metrics, tmp_path, capsys):
    store = _store(tmp_path, metrics)
    out = tmp_path / "out.csv"
    assert main(["sweep", "export", str(store), "--format", "csv", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "marked done but holds no metrics" in err and "damaged row" in err, err
    assert not out.exists()


@pytest.mark.parametrize("tail", ["-wal", "-shm", ".lock"])
def test_export_refuses_the_stores_own_files_made_yet_or_not(tail, tmp_path, capsys):
    store = _store(tmp_path, '{"accuracy": {"32": 0.5}, "final_loss": 1.0}')
    out = Path(str(store) + tail)
    assert not out.exists()  # SQLite makes it while the store is open: the output check alone cannot see it
    assert main(["sweep", "export", str(store), "--format", "csv", "--out", str(out)]) == 2
    assert "the sweep store's own file" in capsys.readouterr().err
    assert main(["plot", str(store), "--out", str(out)]) == 2  # a plot: refused too (here by its format)
    assert not out.exists()


def test_sqlites_io_error_on_a_full_disk_says_disk_full(tmp_path, monkeypatch):
    import os

    from poskernels.sweep.store import store_failure

    err = sqlite3.OperationalError("disk I/O error")
    err.sqlite_errorcode = 778  # SQLITE_IOERR_WRITE, what SQLite says when a write meets ENOSPC
    full = os.statvfs_result((4096, 4096, 1000, 0, 0, 1000, 10, 10, 0, 255))  # no block free
    monkeypatch.setattr(os, "statvfs", lambda path: full)
    e = store_failure(err, tmp_path / "s.sqlite")
    assert isinstance(e, OSError) and e.errno == errno.ENOSPC and str(e).startswith(f"[Errno {errno.ENOSPC}] disk full")
    room = os.statvfs_result((4096, 4096, 10**6, 10**6, 10**6, 1000, 10, 10, 0, 255))
    monkeypatch.setattr(os, "statvfs", lambda path: room)
    e = store_failure(err, tmp_path / "s.sqlite")
    assert e.errno == errno.EIO and "disk full" not in str(e)  # an I/O error with room left is what it is


def test_a_store_error_of_disk_full_reads_disk_full_on_the_command_line(tmp_path, monkeypatch, capsys):
    import os

    from poskernels.cli import sweep as sweep_cli

    def full(*args, **kwargs):
        err = sqlite3.OperationalError("disk I/O error")
        err.sqlite_errorcode = 778
        from poskernels.sweep.store import store_failure

        raise store_failure(err, tmp_path / "s.sqlite")

    grid = tmp_path / "g.toml"
    grid.write_text("[fixed]\nsteps = 2\n")
    monkeypatch.setattr(os, "statvfs", lambda path: os.statvfs_result((4096, 4096, 1000, 0, 0, 1000, 10, 10, 0, 255)))
    monkeypatch.setattr(sweep_cli, "run_sweep", full)
    assert main(["sweep", str(grid), "--store", str(tmp_path / "s.sqlite")]) == 1
    err = capsys.readouterr().err
    assert "error: disk full" in err and "SQLite says" in err, err


def test_a_file_defines_what_it_defines_after_a_failed_edit(clean_registry, tmp_path):
    path = _write(tmp_path / "sloped.py")
    load_scheme_file(path)
    path.write_text("class Oops(:\n")
    with pytest.raises(PosKernelsError, match="not valid Python"):
        load_scheme_file(path)
    assert "sloped" in SCHEMES  # the older version stays registered: nothing half-replaced
