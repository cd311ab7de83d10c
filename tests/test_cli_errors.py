"""The command line's error contract: exit 2 and one line for bad usage or input, exit 1 and one line for a failure
while running, a traceback only with ``--debug`` or ``POSKERNELS_DEBUG=1``; every output path checked before the
work starts, so nothing is computed (or half written) for a path that cannot be written."""

from __future__ import annotations

import functools
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from poskernels import cli
from poskernels.cli import sweep as sweep_cli
from poskernels.sweep import backends, runner


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def a_file(tmp_path):
    f = tmp_path / "plain.txt"
    f.write_text("x")
    return f


@pytest.mark.parametrize(
    "argv, words",
    [
        (["reproduce", "--only", "thm1", "--out", "{file}"], "is a file"),
        (["reproduce", "--only", "thm1", "--out", "{file}/sub"], "under a file"),
        (["reproduce", "--only", "thm1", "--cache", "{file}"], "is a file"),
        (["reproduce", "--only", "thm1", "--out", "/proc/poskernels-out"], "no file can be created"),
        (["census", "llama-2-7b", "--json", "{tmp}"], "is a folder"),
        (["census", "llama-2-7b", "--json", "{file}/c.json"], "under a file"),
        (["census", "llama-2-7b", "--json", "{tmp}/ok.json", "--plot", "{tmp}/p.xyz"], "unknown figure format 'xyz'"),
        (["census", "llama-2-7b", "--plot", "{tmp}"], "is a folder"),
        (["sweep", "{tmp}/g.toml", "--store", "{file}/s.sqlite"], "under a file"),
        (["sweep", "{tmp}/g.toml", "--store", "{tmp}/s.sqlite", "--cache", "{file}"], "is a file"),
        (["sweep", "export", "{tmp}/s.sqlite", "--out", "{tmp}"], "is a folder"),
        (["plot", "{tmp}/s.sqlite", "--out", "{tmp}/a.nope"], "unknown figure format 'nope'"),
    ],
)
def test_unwritable_outputs_are_refused_before_any_work(capsys, tmp_path, a_file, argv, words):
    argv = [a.format(file=a_file, tmp=tmp_path) for a in argv]
    status, out, err = _run(capsys, *argv)
    line = _one_line_error(err)
    assert status == 2 and words in line, line
    assert out == ""  # nothing computed or printed first
    assert not (tmp_path / "ok.json").exists()  # census --json ok.json --plot p.xyz writes no JSON


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    bad = tmp_path / "utf16.json"
    bad.write_bytes('{"head_dim": 128}'.encode("utf-16"))
    status, _, err = _run(capsys, "census", str(bad))
    assert status == 2 and "not UTF-8" in _one_line_error(err)
    grid = tmp_path / "g.toml"
    grid.write_text("[grid]\nseed = [0, 9223372036854775808]\n")
    status, _, err = _run(capsys, "sweep", str(grid), "--store", str(tmp_path / "s.sqlite"))
    assert status == 2 and "9223372036854775808" in _one_line_error(err)
    grid.write_text("[grid]\n" + "\n".join(f"{k} = {list(range(2, 2 + n))}" for k, n in
                                            (("seed", 100), ("test_size", 100), ("test_seed", 100))))  # fmt: skip
    status, _, err = _run(capsys, "sweep", str(grid), "--store", str(tmp_path / "s.sqlite"))
    assert status == 2 and "spans 1000000 points" in _one_line_error(err)
    assert not (tmp_path / "s.sqlite").exists()  # refused before a row was written


def test_a_damaged_store_exits_2(capsys, tmp_path):
    store = tmp_path / "s.sqlite"
    store.write_bytes(b"SQLite format 3\x00" + bytes(4000))
    status, _, err = _run(capsys, "plot", str(store), "--out", str(tmp_path / "p.png"))
    assert status == 2 and "sweep store" in _one_line_error(err)


def _boom(args):
    raise RuntimeError("a bug\nover two lines")


def test_a_bug_exits_1_with_one_line_and_a_traceback_only_on_request(capsys, monkeypatch):
    help_text, add_args, _ = cli.COMMANDS["census"]
    monkeypatch.setitem(cli.COMMANDS, "census", (help_text, add_args, _boom))
    status, _, err = _run(capsys, "census", "llama-2-7b")
    line = _one_line_error(err)
    assert status == 1 and "internal error: RuntimeError: a bug / over two lines" in line and "--debug" in line
    for argv in (["--debug", "census", "llama-2-7b"], ["census", "llama-2-7b", "--debug"]):
        status, _, err = _run(capsys, *argv)
        assert status == 1 and "Traceback" in err and "RuntimeError: a bug" in err
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    status, _, err = _run(capsys, "census", "llama-2-7b")
    assert status == 1 and "Traceback" in err


def test_a_write_that_fails_while_running_exits_1(capsys, monkeypatch, tmp_path):
    from contextlib import contextmanager

    @contextmanager
    def full_disk(path, **kwargs):  # the temporary file fills the disk as it is written
        yield tmp_path / "tmp"
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("poskernels.atomic.output.replacing", full_disk)
    (tmp_path / "c.json").write_text("old")
    status, _, err = _run(capsys, "census", "llama-2-7b", "--json", str(tmp_path / "c.json"))
    line = _one_line_error(err)
    assert status == 1 and "disk full (No space left on device)" in line
    assert (tmp_path / "c.json").read_text() == "old"


def _failing_job(job):
    raise MemoryError(f"cannot hold {len(job['points'])} point(s)")


def test_failed_sweep_points_print_their_reason(capsys, monkeypatch, tmp_path):
    threads = backends.Backend("threads:1", 1, lambda: ThreadPoolExecutor(1))
    monkeypatch.setattr(sweep_cli, "local_backend", lambda workers=None: threads)
    monkeypatch.setattr(sweep_cli, "run_sweep", functools.partial(runner.run_sweep, job=_failing_job, every=0.01))
    grid = tmp_path / "g.toml"
    grid.write_text("[fixed]\nsteps = 5\n[grid]\nseed = [0, 1]\n")
    status, _, err = _run(capsys, "sweep", str(grid), "--store", str(tmp_path / "s.sqlite"))
    assert status == 1
    assert "sweep: 2 point(s) failed with: MemoryError: cannot hold " in err, err  # one stacked job or two
    assert "(first: scheme=nope" in err, err


def test_usage_errors_exit_2_through_the_console():
    proc = subprocess.run(
        [sys.executable, "-m", "poskernels.cli", "census", "llama-2-7b", "--target-length", "9" * 5000],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "invalid int value" in proc.stderr


def test_any_census_or_plot_command_line_ends_in_0_or_2_without_a_traceback(tmp_path, capsys, monkeypatch):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    monkeypatch.chdir(tmp_path)  # a bare word given as an output path ("nan") is written here, not in the checkout

    (tmp_path / "cfg.json").write_text('{"head_dim": 64, "max_position_embeddings": 2048}')
    (tmp_path / "junk.json").write_bytes(b"\xff\xfe{\x00")
    (tmp_path / "store.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(100))
    word = st.sampled_from(["llama-2-7b", "mistral-7b", "nope", "", "-", "--", "0", "-1", "1e9", "9" * 5000, "nan"])
    path = st.sampled_from(["cfg.json", "junk.json", "missing.json", ".", "cfg.json/x.json", "out.json", "f.png",
                            "f.svg", "f.xyz", "f", "store.sqlite"]).map(lambda p: str(tmp_path / p))  # fmt: skip
    census_argv = st.tuples(
        st.one_of(word, path),
        st.lists(
            st.tuples(st.sampled_from(["--target-length", "--json", "--plot", "--bogus"]), st.one_of(word, path)),
            max_size=3,
        ),  # fmt: skip
    ).map(lambda t: ["census", t[0]] + [x for pair in t[1] for x in pair])
    plot_argv = st.tuples(path, st.one_of(word, path)).map(lambda t: ["plot", t[0], "--out", t[1]])

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(argv=st.one_of(census_argv, plot_argv))
    def probe(argv):
        try:
            status = cli.main(argv)
        except SystemExit as stop:  # argparse's usage errors
            status = stop.code
        err = capsys.readouterr().err
        assert status in (0, 2) and "Traceback" not in err, (argv, status, err)  # none of these fails at run time

    probe()


def test_a_reader_that_leaves_early_gets_no_error_line():
    # `poskernels census NAME --json - | head -c 100`: the pipe closes under us; no "Broken pipe" line, no traceback
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "poskernels", "census", "llama-3.1-8b", "--json", "-"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.read(100)
    proc.stdout.close()  # the reader leaves
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert first.startswith(b"{")
    assert err == "", err
