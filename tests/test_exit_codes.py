"""One rule for exit codes, as a table: every command x hostile input category -> one line on stderr and its status.

The rule (:mod:`poskernels.cli`): what the user gave that cannot be used (an argument, an environment variable,
a file, a store row) is bad input, exit 2; what the machine or the network does while running (a full disk, a
scheduler that does not answer) is a failure, exit 1, and a full disk says "disk full", never "damaged".  Ctrl-C
exits 130; a reader that leaves early (``| head``) ends every command with 0.  Disk full is simulated by
monkeypatching the writer and SQLite's connection, never by filling a disk.
"""

from __future__ import annotations

import functools
import json
import signal
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from poskernels import cli
from poskernels.cli import sweep as sweep_cli
from poskernels.sweep import backends, runner
from poskernels.sweep import store as store_module
from poskernels.sweep.grid import parse_grid
from poskernels.sweep.point import point_key
from poskernels.sweep.store import Store

BIG = "9" * 5000


def _status(capsys, argv, monkeypatch=None, env=None) -> tuple[int, str, str]:
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as stop:  # argparse's usage errors
        status = stop.code
    out, err = capsys.readouterr()
    return status, out, err


def _last_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "no error line"
    return lines[-1]


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A folder with a grid, a finished store and the files the table's command lines name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text("[fixed]\nsteps = 5\n[grid]\nseed = [0, 1]\n")
    (tmp_path / "bad.toml").write_text("[grid\nseed = 1\n")
    (tmp_path / "type.toml").write_text('[grid]\nseed = ["zero"]\n')
    (tmp_path / "range.toml").write_text("[grid]\nd = [-4]\n")
    (tmp_path / "huge.toml").write_text(f"[grid]\nseed = [{BIG}]\n")
    (tmp_path / "cfg.json").write_text('{"head_dim": 64, "max_position_embeddings": 2048}')
    (tmp_path / "malformed.json").write_text('{"head_dim": ')
    (tmp_path / "type.json").write_text('{"head_dim": "wide", "max_position_embeddings": 2048}')
    (tmp_path / "range.json").write_text('{"head_dim": -64, "max_position_embeddings": 2048}')
    (tmp_path / "huge.json").write_text('{"head_dim": 64, "max_position_embeddings": ' + BIG + "}")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    (tmp_path / "junk.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(4000))
    points = parse_grid("[grid]\nseed = [0, 1]\n").points
    with Store(tmp_path / "s.sqlite") as s:
        pairs = [(point_key(p), p) for p in points]
        s.add_points(pairs, "v1")
        s.finish({k: {"metrics": {"accuracy": {"32": 0.5}, "final_loss": 1.0}} for k, _ in pairs}, run_id=1)
    return tmp_path


# command, category, argv, environment, status, words of the one line
TABLE = [
    # reproduce
    ("reproduce", "malformed", ["reproduce", "--first-seed", "abc"], {}, 2, "invalid int value"),
    ("reproduce", "malformed", ["reproduce", "--only", "thm1"], {"POSKERNELS_FIRST_SEED": "1e3"}, 2, "non-negative"),
    ("reproduce", "out of range", ["reproduce", "--first-seed", "-1"], {}, 2, ">= 0"),
    ("reproduce", "huge", ["reproduce", "--only", "thm1", "--first-seed", "9" * 300], {}, 2, "below 2**63"),
    ("reproduce", "huge", ["reproduce", "--only", "thm1"], {"POSKERNELS_FIRST_SEED": BIG}, 2, "(5000 characters)"),
    ("reproduce", "huge", ["reproduce", "--only", "thm1", "--first-seed", BIG], {}, 2, "invalid int value"),
    ("reproduce", "huge", ["reproduce", "--only", "thm1"], {"POSKERNELS_FIRST_SEED": "0" * 5000 + "1" * 20}, 2,
     "64-bit seeds"),
    ("reproduce", "out of range", ["reproduce", "--only", "tournament", "--first-seed", str(2**63 - 5)], {}, 2,
     "passes the largest seed"),
    ("reproduce", "wrong type", ["reproduce", "--only", "thm1"], {"POSKERNELS_FIRST_SEED": "0x10"}, 2, "'0x10'"),
    ("reproduce", "wrong type", ["reproduce", "--only", "tournement"], {}, 2, "did you mean 'tournament'"),
    ("reproduce", "wrong type", ["reproduce", "--only", "tournament", "--no-train"], {}, 2, "computes nothing"),
    ("reproduce", "wrong type", ["reproduce", "--out", "cfg.json"], {}, 2, "is a file"),
    ("reproduce", "wrong type", ["reproduce", "--only", "thm1", "--out", "-"], {}, 2, "cannot hold one"),
    ("reproduce", "wrong type", ["reproduce", "--only", "thm1", "--cache", "-"], {}, 2, "cannot hold one"),
    # census
    ("census", "malformed", ["census", "malformed.json"], {}, 2, "not valid JSON"),
    ("census", "malformed", ["census", "llama-2-7b", "--target-length", "x"], {}, 2, "invalid int value"),
    ("census", "out of range", ["census", "range.json"], {}, 2, "-64"),
    ("census", "out of range", ["census", "llama-2-7b", "--target-length", "0"], {}, 2, "positive integer"),
    ("census", "out of range", ["census", "llama-2-7b", "--width", "-3"], {}, 2, "--width"),
    ("census", "huge", ["census", "huge.json"], {}, 2, "huge.json"),
    ("census", "huge", ["census", "llama-2-7b", "--target-length", BIG], {}, 2, "invalid int value"),
    ("census", "wrong type", ["census", "type.json"], {}, 2, "'wide'"),
    ("census", "wrong type", ["census", "cfg.json", "--json", "cfg.json"], {}, 2, "is the input"),
    ("census", "missing", ["census", "absent.json"], {}, 2, "absent.json"),
    # sweep
    ("sweep", "malformed", ["sweep", "bad.toml", "--store", "n.sqlite"], {}, 2, "bad.toml"),
    ("sweep", "malformed", ["sweep", "g.toml", "--store", "n.sqlite", "--scheduler", "garbage://x"], {}, 2,
     "not a Dask scheduler address"),
    ("sweep", "out of range", ["sweep", "range.toml", "--store", "n.sqlite"], {}, 2, "-4"),
    ("sweep", "out of range", ["sweep", "g.toml", "--store", "n.sqlite", "--stack", "0"], {}, 2, "--stack"),
    ("sweep", "out of range", ["sweep", "g.toml", "--store", "n.sqlite", "--workers", "0"], {}, 2, "--workers"),
    ("sweep", "out of range", ["sweep", "g.toml", "--store", "n.sqlite", "--scheduler", "tcp://127.0.0.1:99999"],
     {}, 2, "not in 1..65535"),
    ("sweep", "huge", ["sweep", "huge.toml", "--store", "n.sqlite"], {}, 2, "huge.toml"),
    ("sweep", "huge", ["sweep", "g.toml", "--store", "n.sqlite", "--scheduler", "x" * 5000], {}, 2,
     "(5000 characters)"),
    ("sweep", "wrong type", ["sweep", "type.toml", "--store", "n.sqlite"], {}, 2, "'zero'"),
    ("sweep", "wrong type", ["sweep", "g.toml", "--store", "junk.sqlite"], {}, 2, "sweep store"),
    ("sweep", "wrong type", ["sweep", "g.toml", "--store", "g.toml"], {}, 2, "is the input"),
    ("sweep", "wrong type", ["sweep", "g.toml", "--store", "-"], {}, 2, "cannot hold a store"),
    ("sweep", "unreachable scheduler", ["sweep", "g.toml", "--store", "n.sqlite", "--scheduler",
                                       "tcp://127.0.0.1:9"], {}, 1, "cannot reach the Dask scheduler"),
    # sweep export
    ("export", "malformed", ["sweep", "export", "junk.sqlite", "--out", "o.csv"], {}, 2, "sweep store"),
    ("export", "malformed", ["sweep", "export", "empty.sqlite", "--out", "o.csv"], {}, 2, "not a sweep store"),
    ("export", "wrong type", ["sweep", "export", "s.sqlite", "--format", "xls", "--out", "o.csv"], {}, 2,
     "invalid choice"),
    ("export", "wrong type", ["sweep", "export", "s.sqlite", "--out", "s.sqlite"], {}, 2, "is the input"),
    ("export", "missing", ["sweep", "export", "absent.sqlite", "--out", "o.csv"], {}, 2, "no sweep store"),
    ("export", "missing", ["sweep", "export", "s.sqlite"], {}, 2, "usage"),
    # plot
    ("plot", "malformed", ["plot", "junk.sqlite", "--out", "o.png"], {}, 2, "sweep store"),
    ("plot", "malformed", ["plot", "empty.sqlite", "--out", "o.png"], {}, 2, "not a sweep store"),
    ("plot", "wrong type", ["plot", "s.sqlite", "--out", "o.csv"], {}, 2, "unknown figure format 'csv'"),
    ("plot", "missing", ["plot", "absent.sqlite", "--out", "o.png"], {}, 2, "no sweep store"),
    # lab
    ("lab", "malformed", ["lab", "--port", "http"], {}, 2, "invalid int value"),
    ("lab", "out of range", ["lab", "--port", "70000"], {}, 2, "70000"),
    ("lab", "huge", ["lab", "--port", BIG], {}, 2, "invalid int value"),
    ("lab", "wrong type", ["lab", "--payload", "cfg.json", "--port", "-1"], {}, 2, "port"),
    ("lab", "missing", ["lab", "--payload", "absent.json"], {}, 2, "no payload file"),
    ("lab", "wrong type", ["lab", "--host", "not a host\x01", "--port", "0"], {}, 2, "cannot serve"),
]


@pytest.mark.parametrize("command, category, argv, env, status, words", TABLE,
                         ids=[f"{c}-{k}-{i}" for i, (c, k, *_) in enumerate(TABLE)])  # fmt: skip
def test_the_exit_code_table(world, capsys, monkeypatch, command, category, argv, env, status, words):
    monkeypatch.setattr(sweep_cli, "dask_backend", functools.partial(backends.dask_backend, timeout=2))
    got, out, err = _status(capsys, argv, monkeypatch, env)
    line = _one_line(err)
    assert got == status and words in line, (argv, got, line)
    assert "internal error" not in line and "damaged" not in line or "sweep store" in line
    assert not (world / "n.sqlite").exists()  # refused before the store was made


# ---------------------------------------------------------------------------------------------- damaged rows


ROW_EDITS = [
    ("config", "'not json'", "config is not valid JSON"),
    ("config", "'[1, 2]'", "not a JSON object"),
    ("config", "'{\"scheme\": 5}'", "scheme = 5 is not str"),
    ("config", "'{\"d\": 16}'", "no scheme"),
    ("config", "json_set(config, '$.d', 'wide')", "setting d = 'wide' is not int"),
    ("config", "json_set(config, '$.lr', 'fast')", "setting lr = 'fast' is not float"),
    ("config", "json_set(config, '$.test_lengths', json('[\"a\"]'))", "setting test_lengths"),
    ("config", "x'ff00'", "config is bytes"),
    ("config", f"'{{\"scheme\": \"rope\", \"d\": {'9' * 5000}}}'", "config is not valid JSON"),
    ("config", "'" + "[" * 100000 + "'", "config is not valid JSON"),
    ("metrics", "'{\"accuracy\": [1]}'", "accuracy is [1]"),
    ("metrics", "'{\"accuracy\": {\"abc\": 0.5}}'", "the length 'abc'"),
    ("metrics", "'{\"accuracy\": {\"0\": 0.5}}'", "the length '0'"),
    ("key", "NULL", "its key is NoneType"),
    ("metrics", "'{\"accuracy\": {\"32\": \"high\"}}'", "accuracy at 32 is 'high'"),
    ("metrics", "'{\"accuracy\": {\"32\": 7}}'", "accuracy at 32 is 7"),
    ("metrics", "'{\"accuracy\": {\"32\": NaN}}'", "accuracy at 32 is nan"),
    ("metrics", "'{\"final_loss\": \"low\"}'", "final_loss is 'low'"),
    ("metrics", "'\"done\"'", "metrics is str"),
    ("attempts", "'many'", "attempts is 'many'"),
    ("finished_at", "'yesterday'", "finished_at is 'yesterday'"),
    ("run_id", "'first'", "run_id is 'first'"),
    ("train_seconds", "'slow'", "train_seconds is 'slow'"),
    ("seed", "'x'", "seed is 'x'"),
]


@pytest.mark.parametrize("column, value, words", ROW_EDITS, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(ROW_EDITS)])
def test_a_row_edited_by_hand_is_a_damaged_row_for_export_and_plot(world, capsys, column, value, words):
    db = sqlite3.connect(world / "s.sqlite")
    db.execute(f"UPDATE points SET {column} = {value} WHERE rowid = 1")
    db.commit()
    db.close()
    for argv in (["sweep", "export", "s.sqlite", "--out", "o.csv"], ["sweep", "export", "s.sqlite", "--out", "-"],
                 ["plot", "s.sqlite", "--out", "o.png"]):  # fmt: skip
        status, out, err = _status(capsys, argv)
        line = _one_line(err)
        assert status == 2 and "damaged row" in line and words in line, (argv, line)
        assert out == ""
    assert not (world / "o.csv").exists() and not (world / "o.png").exists()


def test_parquet_export_of_an_edited_row_is_refused_not_a_foreign_error(world, capsys):
    pytest.importorskip("pyarrow")
    db = sqlite3.connect(world / "s.sqlite")
    db.execute("UPDATE points SET train_seconds = 'slow' WHERE rowid = 2")
    db.commit()
    db.close()
    status, _, err = _status(capsys, ["sweep", "export", "s.sqlite", "--format", "parquet", "--out", "o.parquet"])
    assert status == 2 and "damaged row" in _one_line(err)


# ---------------------------------------------------------------------------------------------- disk full


@contextmanager
def _full_disk(path, **kwargs):
    """:func:`poskernels.atomic.replacing` on a full disk: the temporary file's write fails with ENOSPC."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(path).with_name(".full.tmp")
    try:
        yield tmp
        raise OSError(28, "No space left on device", str(path))
    finally:
        tmp.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "--only", "thm1", "--out", "res", "--quiet"],
        ["census", "llama-2-7b", "--json", "c.json"],
        ["census", "llama-2-7b", "--plot", "c.png"],
        ["sweep", "export", "s.sqlite", "--out", "o.csv"],
        ["plot", "s.sqlite", "--out", "o.png"],
    ],
)
def test_a_full_disk_says_disk_full_and_exits_1(world, capsys, monkeypatch, argv):
    monkeypatch.setattr("poskernels.atomic.output.replacing", _full_disk)
    status, _, err = _status(capsys, argv)
    line = _last_line(err)
    assert status == 1 and "disk full" in line and "damaged" not in err, line


class _FullConnection:
    """An SQLite connection whose writes of finished rows fail as SQLite does on a full disk."""

    def __init__(self, db):
        self._db = db

    def __getattr__(self, name):
        return getattr(self._db, name)

    def execute(self, sql, *args):
        if "status = 'done'" in sql:
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def executemany(self, sql, *args):
        return self._db.executemany(sql, *args)

    def executescript(self, sql):
        return self._db.executescript(sql)


def _one_thread(workers=None):
    from concurrent.futures import ThreadPoolExecutor

    return backends.Backend("threads:1", 1, lambda: ThreadPoolExecutor(1))


def test_a_sweep_on_a_full_disk_says_disk_full_and_its_store_is_intact(world, capsys, monkeypatch):
    connect = sqlite3.connect
    monkeypatch.setattr(store_module.sqlite3, "connect", lambda *a, **k: _FullConnection(connect(*a, **k)))
    monkeypatch.setattr(sweep_cli, "local_backend", _one_thread)
    monkeypatch.setattr(sweep_cli, "run_sweep", functools.partial(runner.run_sweep, job=_instant, every=0.01))
    status, _, err = _status(capsys, ["sweep", "g.toml", "--store", "full.sqlite"])
    line = _last_line(err)
    assert status == 1 and "disk full" in line and "damaged" not in err and "move it away" not in err, err
    monkeypatch.undo()
    with Store(world / "full.sqlite", create=False) as s:  # intact: opens, reads, its rows back to pending
        assert s.counts() == {"pending": 2}


def _instant(job):
    import time

    now = time.time()
    return {"trained": 1, "worker": "t", "started_at": now, "finished_at": now,
            "results": {k: {"accuracy": {"32": 1.0}, "final_loss": 0.1, "trained": True, "training": "t",
                            "train_seconds": 0.0, "eval_seconds": 0.0} for k, _ in job["points"]}}  # fmt: skip


def test_store_failures_are_classified_by_what_sqlite_says(tmp_path):
    def failure(message):
        return store_module.store_failure(sqlite3.OperationalError(message), tmp_path / "s.sqlite")

    full, locked, io = failure("database or disk is full"), failure("database is locked"), failure("disk I/O error")
    assert isinstance(full, OSError) and full.errno == 28 and "disk full" in str(full) and "intact" in str(full)
    assert isinstance(locked, OSError) and "locked" in str(locked) and isinstance(io, OSError)
    assert "damaged" in str(failure("database disk image is malformed"))
    assert "read-only" in str(failure("attempt to write a readonly database"))


# ---------------------------------------------------------------------------------------------- Ctrl-C, pipes


@pytest.mark.parametrize("command", ["reproduce", "census", "sweep", "plot", "lab"])
def test_ctrl_c_exits_130_with_one_line(world, capsys, monkeypatch, command):
    def interrupted(args):
        raise KeyboardInterrupt

    help_text, add_args, _ = cli.COMMANDS[command]
    monkeypatch.setitem(cli.COMMANDS, command, (help_text, add_args, interrupted))
    argv = {"reproduce": ["reproduce"], "census": ["census", "llama-2-7b"], "sweep": ["sweep", "g.toml", "--store",
            "n.sqlite"], "plot": ["plot", "s.sqlite"], "lab": ["lab"]}[command]  # fmt: skip
    status, _, err = _status(capsys, argv)
    assert status == 130 and "interrupted" in _one_line(err)


@pytest.mark.parametrize(
    "argv",
    [
        ["census", "llama-3.1-8b"],
        ["census", "llama-3.1-8b", "--json", "-"],
        ["census", "llama-2-7b", "--plot", "-"],
        ["sweep", "export", "{store}", "--out", "-"],
        ["plot", "{store}", "--out", "-"],
        ["reproduce", "--only", "thm1", "prop1", "--out", "{tmp}/res"],
    ],
)
def test_a_reader_that_leaves_early_ends_every_command_with_0(world, argv):
    # `poskernels ... | head -c 10`: the pipe closes under us; exit 0, no "Broken pipe" line, no traceback
    argv = [a.format(store=world / "s.sqlite", tmp=world) for a in argv]
    proc = subprocess.Popen([sys.executable, "-m", "poskernels", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=world)  # fmt: skip
    first = proc.stdout.read(10)
    proc.stdout.close()  # the reader leaves
    err = proc.stderr.read().decode()
    status = proc.wait(timeout=120)
    assert first and status == 0 and "Traceback" not in err and "Broken pipe" not in err, (status, err)


def test_the_quiet_flag_drops_the_wrote_lines_but_not_the_errors(world, capsys):
    status, out, err = _status(capsys, ["--quiet", "census", "llama-2-7b", "--json", "c.json"])
    assert status == 0 and err == "" and json.loads((world / "c.json").read_text())["kappa"] == 4.0
    status, out, err = _status(capsys, ["census", "llama-2-7b", "--json", "c.json", "--quiet"])
    assert status == 0 and err == ""
    status, out, err = _status(capsys, ["census", "llama-2-7b", "--json", "c.json"])
    assert status == 0 and "wrote json" in err
    status, _, err = _status(capsys, ["-q", "census", "absent.json"])
    assert status == 2 and "absent.json" in _one_line(err)
    status, out, err = _status(capsys, ["reproduce", "--only", "thm1", "--out", "r", "-q"])
    assert status == 0 and err == "" and "wrote" not in out


def test_sigint_through_the_console_exits_130(world):
    proc = subprocess.Popen([sys.executable, "-m", "poskernels", "lab", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=world, text=True)  # fmt: skip
    assert "serving" in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130


def test_a_quiet_sweep_prints_nothing_but_its_failures(world, capsys, monkeypatch):
    monkeypatch.setattr(sweep_cli, "local_backend", _one_thread)
    monkeypatch.setattr(sweep_cli, "run_sweep", functools.partial(runner.run_sweep, job=_instant, every=0.01))
    status, out, err = _status(capsys, ["sweep", "g.toml", "--store", "q.sqlite", "--quiet"])
    assert status == 0 and out == "" and err == ""
    status, out, err = _status(capsys, ["sweep", "g.toml", "--store", "q2.sqlite"])
    assert status == 0 and "2/2 points done" in err
