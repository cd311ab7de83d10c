"""The one output writer (:mod:`poskernels.atomic`) under a hostile user, through every command that writes.

Nothing lost: an existing path that is not a regular file is written through (a link's target, a device, a FIFO)
or refused, never renamed over; an output that is an input is refused; a missing folder is refused and named;
every check runs before the first byte; ``-`` is standard output for every output option; read-only commands
never write to their input.  Every path here is made by the test in its temporary folder (links, FIFOs, device
nodes made with mknod, read-only files): never the machine's own ``/dev`` entries, which a failing run as root
would destroy.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import stat
import threading
import time
from pathlib import Path

import pytest

from poskernels import cli
from poskernels.atomic import Output, check_output, check_outputs, write_output
from poskernels.atomic import output as atomic_output
from poskernels.errors import PosKernelsError
from poskernels.sweep.grid import parse_grid
from poskernels.sweep.point import point_key
from poskernels.sweep.store import Store

PNG = b"\x89PNG"
GEMMA3 = {
    "model_type": "gemma3_text",
    "head_dim": 256,
    "max_position_embeddings": 131072,
    "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
    },
}


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _listing(folder: Path) -> dict:
    """Every entry under ``folder``: name -> (kind, size or link target), to show that nothing else appeared."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = os.lstat(p)
        kind = stat.S_IFMT(st.st_mode)
        out[str(p.relative_to(folder))] = (kind, os.readlink(p) if p.is_symlink() else st.st_size)
    return out


@pytest.fixture
def store(tmp_path) -> Path:
    """A sweep store with two finished points (WAL mode, as the sweep leaves it)."""
    path = tmp_path / "s.sqlite"
    points = parse_grid("[grid]\nseed = [0, 1]\n").points
    with Store(path) as s:
        pairs = [(point_key(p), p) for p in points]
        s.add_points(pairs, "v1")
        s.finish({k: {"metrics": {"accuracy": {"32": 0.5 + 0.1 * i}, "final_loss": 1.0}} for i, (k, _) in
                  enumerate(pairs)}, run_id=1)  # fmt: skip
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------- symbolic links


def test_a_link_is_written_through_and_stays_a_link(tmp_path, capsys):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    status, _, _ = _run(capsys, "census", "llama-2-7b", "--json", link)
    assert status == 0 and link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["target_length"] == 16384


def test_a_link_to_nothing_creates_its_target(tmp_path):
    link = tmp_path / "dangling.json"
    link.symlink_to(tmp_path / "made.json")
    write_output(link, "x")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "x"


def test_a_link_into_a_missing_folder_is_refused_naming_it(tmp_path):
    link = tmp_path / "dangling.json"
    link.symlink_to(tmp_path / "nowhere" / "made.json")
    with pytest.raises(PosKernelsError, match="nowhere' does not exist"):
        check_output(link, "--json")
    assert not (tmp_path / "nowhere").exists()


def test_a_loop_of_links_is_refused(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(PosKernelsError, match="--json: cannot"):
        check_output(tmp_path / "a", "--json")


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    p = tmp_path / "f.json"
    p.write_text("old")
    p.chmod(0o640)
    write_output(p, "new")
    assert p.read_text() == "new" and stat.S_IMODE(p.stat().st_mode) == 0o640


# ---------------------------------------------------------------------------------------------- FIFOs and devices


def test_a_fifo_is_written_through_to_its_reader(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    status, _, _ = _run(capsys, "census", "llama-2-7b", "--json", fifo)
    reader.join(30)
    assert status == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, never renamed over
    assert json.loads(got[0])["kappa"] == 4.0


def test_a_fifo_no_one_reads_is_refused_after_a_bounded_wait(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(atomic_output, "FIFO_WAIT", 0.3)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    status, _, err = _run(capsys, "census", "llama-2-7b", "--plot", fifo.with_name("pipe"))  # returns: the wait ends
    assert status == 2 and "no process read the FIFO" in _one_line(err)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _device(tmp_path: Path, name: str, minor: int) -> Path:
    """A character device node in the test's folder (null: minor 3, full: minor 7), or skip where mknod is denied."""
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        with open(path, "rb" if minor == 7 else "wb"):
            pass
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here ({err}); the FIFO tests cover writing in place")
    return path


def test_a_device_is_written_in_place_never_replaced(tmp_path, capsys):
    null = _device(tmp_path, "null", 3)
    for argv in (["census", "llama-2-7b", "--json", null], ["census", "llama-2-7b", "--plot", null.with_suffix("")]):
        status, _, _ = _run(capsys, *argv)
        assert status == 0 and stat.S_ISCHR(os.lstat(null).st_mode)
    assert _listing(tmp_path) == {"null": (stat.S_IFCHR, 0)}  # no temporary file left, no file made


def test_a_full_device_says_disk_full_and_exits_1(tmp_path, capsys):
    full = _device(tmp_path, "full", 7)
    for argv in (["census", "llama-2-7b", "--json", full], ["census", "llama-2-7b", "--plot", full]):
        status, _, err = _run(capsys, *argv)
        line = _one_line(err)
        assert status == 1 and "disk full" in line and "damaged" not in line, line
        assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_a_socket_or_a_folder_is_refused(tmp_path):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.sock"))
        with pytest.raises(PosKernelsError, match="is a socket"):
            check_output(tmp_path / "s.sock", "--out")
    finally:
        sock.close()
    with pytest.raises(PosKernelsError, match="is a folder"):
        check_output(tmp_path, "--out")


# ---------------------------------------------------------------------------------------------- refusals


def test_a_read_only_file_is_refused_and_kept(tmp_path, capsys):
    p = tmp_path / "locked.json"
    p.write_text("keep")
    p.chmod(0o444)  # refused even for root, who could rename over it
    status, _, err = _run(capsys, "census", "llama-2-7b", "--json", p)
    assert status == 2 and "read-only" in _one_line(err)
    assert p.read_text() == "keep"


@pytest.mark.parametrize(
    "argv",
    [
        ["census", "llama-2-7b", "--json", "{tmp}/no/x.json"],
        ["census", "llama-2-7b", "--plot", "{tmp}/no/x.png"],
        ["sweep", "export", "{store}", "--out", "{tmp}/no/x.csv"],
        ["plot", "{store}", "--out", "{tmp}/no/x.png"],
        ["sweep", "{tmp}/g.toml", "--store", "{tmp}/no/s.sqlite"],
    ],
)
def test_a_missing_folder_is_refused_named_and_not_created(tmp_path, capsys, store, argv):
    (tmp_path / "g.toml").write_text("[grid]\nseed = [0]\n")
    status, out, err = _run(capsys, *(a.format(tmp=tmp_path, store=store) for a in argv))
    assert status == 2 and f"{tmp_path / 'no'}' does not exist" in _one_line(err) and out == ""
    assert not (tmp_path / "no").exists()


def test_reproduce_refuses_a_folder_where_numbers_json_goes_before_any_work(tmp_path, capsys):
    (tmp_path / "numbers.json").mkdir()
    status, out, err = _run(capsys, "reproduce", "--only", "thm1", "--out", tmp_path)
    assert status == 2 and "numbers.json" in _one_line(err) and "is a folder" in err and out == ""


def test_reproduce_out_creates_its_folder(tmp_path, capsys):
    status, _, _ = _run(capsys, "reproduce", "--only", "thm1", "--out", tmp_path / "a" / "b", "--quiet")
    assert status == 0 and (tmp_path / "a" / "b" / "numbers.json").is_file()


@pytest.mark.parametrize("path, words", [("", "the path is empty"), ("a\x00b", "NUL byte"),
                                         ("new/", "ends in a slash"), ("x" * 300 + ".json", "File name too long")])
def test_an_empty_or_nul_path_is_refused(path, words):
    with pytest.raises(PosKernelsError, match=words):
        check_output(path, "--json")


def test_an_input_that_is_a_fifo_no_one_writes_reads_as_empty_and_never_hangs(tmp_path):
    from poskernels.errors import read_text

    fifo = tmp_path / "grid.toml"
    os.mkfifo(fifo)
    assert read_text(fifo, "grid") == ""  # it returns, with no writer ever there: it did not wait for one
    writer = threading.Thread(target=lambda: fifo.write_text("[grid]\nseed = [0]\n"), daemon=True)
    writer.start()
    for _ in range(100):  # until the writer is there (it waits for a reader in open()), then read to its end
        text = read_text(fifo, "grid")
        if text:
            break
        time.sleep(0.05)
    assert text == "[grid]\nseed = [0]\n"
    writer.join(5)


def test_a_path_under_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(PosKernelsError, match="under a file"):
        check_output(tmp_path / "f" / "x.json", "--json")


# ---------------------------------------------------------------------------------------------- output = input


def _config(tmp_path: Path, data=None) -> Path:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(data or {"head_dim": 64, "max_position_embeddings": 2048}))
    return cfg


@pytest.mark.parametrize("how", ["same", "link", "hardlink", "dotted"])
def test_census_never_writes_over_its_config(tmp_path, capsys, how):
    cfg = _config(tmp_path)
    before = cfg.read_bytes()
    out = {"same": cfg, "link": tmp_path / "l.json", "hardlink": tmp_path / "h.json",
           "dotted": tmp_path / "." / "cfg.json"}[how]  # fmt: skip
    if how == "link":
        out.symlink_to(cfg)
    elif how == "hardlink":
        os.link(cfg, out)
    status, stdout, err = _run(capsys, "census", cfg, "--json", out)
    assert status == 2 and "is the input" in _one_line(err) and stdout == ""
    assert cfg.read_bytes() == before
    svg = tmp_path / "cfg.svg"  # a config whose name is a figure's: --plot may not draw over it either
    svg.write_bytes(before)
    status, stdout, err = _run(capsys, "census", svg, "--plot", svg)
    assert status == 2 and "is the input" in _one_line(err) and svg.read_bytes() == before


@pytest.mark.parametrize("tail", ["", "-wal", "-shm"])
def test_export_never_writes_over_its_store(tmp_path, capsys, store, tail):
    target = store.with_name(store.name + tail)
    if not target.exists():
        target.write_bytes(b"")
    before = _digest(store)
    status, _, err = _run(capsys, "sweep", "export", store, "--out", target)
    assert status == 2 and "is the input" in _one_line(err)
    assert _digest(store) == before


def test_plot_never_writes_over_its_store(tmp_path, capsys, store):
    png_store = tmp_path / "s.png"
    os.link(store, png_store)
    status, _, err = _run(capsys, "plot", png_store, "--out", png_store)
    assert status == 2 and "is the input" in _one_line(err)
    link = tmp_path / "l.png"
    link.symlink_to(store)
    status, _, err = _run(capsys, "plot", store, "--out", link)
    assert status == 2 and "is the input" in _one_line(err)


def test_a_sweep_never_keeps_its_store_in_its_grid(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text("[grid]\nseed = [0]\n")
    status, _, err = _run(capsys, "sweep", grid, "--store", grid)
    assert status == 2 and "is the input" in _one_line(err)
    assert grid.read_text() == "[grid]\nseed = [0]\n"


def test_two_outputs_of_one_command_cannot_be_one_file(tmp_path, capsys):
    a = tmp_path / "a.png"
    status, _, err = _run(capsys, "census", "llama-2-7b", "--json", a, "--plot", a)
    assert status == 2 and "also the path of --json" in _one_line(err) and not a.exists()
    (tmp_path / "l.png").symlink_to(a)
    a.write_text("keep")
    status, _, err = _run(capsys, "census", "llama-2-7b", "--json", a, "--plot", tmp_path / "l.png")
    assert status == 2 and "also the path of --json" in _one_line(err) and a.read_text() == "keep"
    status, out, err = _run(capsys, "census", "llama-2-7b", "--json", "-", "--plot", "-")
    assert status == 2 and "only one output can go to standard output" in _one_line(err) and out == ""


# ---------------------------------------------------------------------------------------------- "-" everywhere


def test_every_output_option_takes_dash_for_standard_output(tmp_path, capsys, monkeypatch, store):
    monkeypatch.chdir(tmp_path)
    status, out, _ = _run(capsys, "census", "llama-2-7b", "--json", "-")
    assert status == 0 and json.loads(out)["kappa"] == 4.0
    status, out, _ = _run(capsys, "sweep", "export", store, "--out", "-")
    assert status == 0 and out.splitlines()[0].startswith("key,status,")
    assert not (tmp_path / "-").exists()


def test_the_figure_on_standard_output_is_the_bytes_of_a_png(tmp_path, capsysbinary, monkeypatch, store):
    monkeypatch.chdir(tmp_path)
    for argv in (["census", "llama-2-7b", "--plot", "-"], ["plot", str(store), "--out", "-"]):
        assert cli.main(argv) == 0
        out = capsysbinary.readouterr().out
        assert out.startswith(PNG) and out.endswith(b"IEND\xaeB`\x82")  # the PNG alone: no text line after it
    assert not (tmp_path / "-").exists()


# ---------------------------------------------------------------------------------------------- before any byte


def test_every_check_runs_before_the_first_byte(tmp_path, capsys):
    cfg = _config(tmp_path, GEMMA3)
    status, out, err = _run(capsys, "census", cfg, "--json", tmp_path / "a.json", "--plot", tmp_path / "b.png")
    assert status == 2 and "--layer-type" in _one_line(err) and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json"]  # a.json was not written first


def test_a_writer_that_fails_leaves_the_old_file_and_nothing_else(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")
    out = check_output(p)
    with pytest.raises(RuntimeError), out.open("w") as fh:
        fh.write("half")
        raise RuntimeError("the writer failed")
    assert p.read_text() == "old" and sorted(q.name for q in tmp_path.iterdir()) == ["f.txt"]


def test_a_writer_that_fails_writes_no_byte_to_standard_output(capsys):
    with pytest.raises(RuntimeError), check_output("-").open("w") as fh:
        fh.write("half")
        raise RuntimeError("the writer failed")
    assert capsys.readouterr().out == ""


def test_a_path_that_turns_into_a_fifo_before_the_rename_is_not_renamed_over(tmp_path):
    p = tmp_path / "f.txt"
    out = check_output(p)
    with pytest.raises(PosKernelsError, match="not a regular file"), out.open("w") as fh:
        fh.write("x")
        os.mkfifo(p)  # another process put a FIFO there meanwhile
    assert stat.S_ISFIFO(os.lstat(p).st_mode) and sorted(q.name for q in tmp_path.iterdir()) == ["f.txt"]


# ---------------------------------------------------------------------------------------------- read-only inputs


@pytest.mark.parametrize("content", [b"", b"not sqlite at all", b"SQLite format 3\x00" + bytes(100)])
def test_export_and_plot_never_write_to_their_input(tmp_path, capsys, content):
    path = tmp_path / "s.sqlite"
    path.write_bytes(content)
    for argv in (["sweep", "export", path, "--out", tmp_path / "o.csv"], ["plot", path, "--out", tmp_path / "o.png"]):
        status, _, err = _run(capsys, *argv)
        assert status == 2 and "sweep store" in _one_line(err)
        assert path.read_bytes() == content  # no schema, no WAL mode written into it
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]


def test_a_missing_store_is_not_created_by_export_or_plot(tmp_path, capsys):
    for argv in (["sweep", "export", tmp_path / "s.sqlite", "--out", "-"], ["plot", tmp_path / "s.sqlite"]):
        status, _, err = _run(capsys, *argv)
        assert status == 2 and "no sweep store" in _one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_export_and_plot_leave_a_store_byte_for_byte(tmp_path, capsys, store):
    before = _digest(store)
    assert _run(capsys, "sweep", "export", store, "--out", tmp_path / "o.csv")[0] == 0
    assert _run(capsys, "plot", store, "--out", tmp_path / "o.png")[0] == 0
    assert _digest(store) == before and (tmp_path / "o.png").read_bytes().startswith(PNG)


def test_a_read_only_store_opened_by_a_reader_cannot_be_written(store):
    with Store(store, create=False) as s, pytest.raises(PosKernelsError, match="read-only"):
        s.add_points([("new", {**parse_grid("").points[0], "seed": 99})], "v")


# ---------------------------------------------------------------------------------------------- the API


def test_check_outputs_returns_one_output_per_path_given(tmp_path):
    outs = check_outputs({"--json": tmp_path / "a.json", "--plot": (tmp_path / "b.png", "figure"), "--x": None})
    assert sorted(outs) == ["--json", "--plot"] and all(isinstance(o, Output) for o in outs.values())
    with pytest.raises(PosKernelsError, match="unknown figure format 'txt'"):
        check_outputs({"--plot": (tmp_path / "b.txt", "figure")})


def test_export_reads_a_store_while_a_sweep_holds_its_write_transaction(tmp_path, capsys, store):
    writer = sqlite3.connect(store, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE points SET worker = 'busy'")  # not committed: the reader sees the committed rows
        status, out, err = _run(capsys, "sweep", "export", store, "--out", "-")
        assert status == 0 and len(out.splitlines()) == 3 and "busy" not in out
    finally:
        writer.execute("ROLLBACK")
        writer.close()
