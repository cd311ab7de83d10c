"""``reproduce --out DIR`` never writes through a link out of ``DIR`` (numbers.json, payload.json, figures/...).

Each case plants a link (or a folder link, or a link made after the check) in the output folder, runs the cheapest
reproduce (``--only prop1 --no-train``, no training) or the writer itself, and checks that the file the link points
to is byte for byte what it was, and that the refusal is one line with exit 2, before any table is printed.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from poskernels.atomic import check_output, confined, write_output
from poskernels.cli import main
from poskernels.errors import PosKernelsError

CHEAP = ["reproduce", "--only", "prop1", "--no-train", "-q"]


def _victim(tmp_path: Path, name: str = "victim.json") -> Path:
    away = tmp_path / "elsewhere"
    away.mkdir(exist_ok=True)
    victim = away / name
    victim.write_text("precious\n")
    return victim


def _run(capsys, out: Path) -> tuple[int, str, str]:
    status = main([*CHEAP, "--out", str(out)])
    got = capsys.readouterr()
    return status, got.out, got.err


@pytest.mark.parametrize("name", ["numbers.json", "payload.json"])
def test_a_file_linked_out_of_the_folder_is_refused_before_work(tmp_path, capsys, name):
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path)
    (out / name).symlink_to(victim)
    status, stdout, err = _run(capsys, out)
    assert status == 2 and "link out of the output folder" in err and err.count("\n") == 1
    assert stdout == "" and victim.read_text() == "precious\n" and (out / name).is_symlink()


def test_a_relative_link_climbing_out_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path)
    (out / "numbers.json").symlink_to(Path("..") / "elsewhere" / victim.name)
    status, _, err = _run(capsys, out)
    assert status == 2 and victim.read_text() == "precious\n"


def test_a_dangling_link_out_of_the_folder_is_refused_and_creates_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "elsewhere" / "new.json"
    target.parent.mkdir()
    (out / "numbers.json").symlink_to(target)
    status, _, _ = _run(capsys, out)
    assert status == 2 and not target.exists()


def test_the_figures_folder_as_a_link_out_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    away = _victim(tmp_path).parent
    (out / "figures").symlink_to(away, target_is_directory=True)
    status, _, err = _run(capsys, out)
    assert status == 2 and "figures" in err and sorted(p.name for p in away.iterdir()) == ["victim.json"]


def test_a_figure_linked_out_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    victim = _victim(tmp_path, "kernel_ruler.png")
    (out / "figures" / "kernel_ruler.png").symlink_to(victim)
    status, _, err = _run(capsys, out)
    assert status == 2 and "kernel_ruler.png" in err and victim.read_text() == "precious\n"


def test_links_inside_the_folder_and_a_linked_folder_are_followed(tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (real / "kept.json").write_text("old")
    (real / "numbers.json").symlink_to("kept.json")  # a link to a file inside the folder: written through
    out = tmp_path / "out"
    out.symlink_to(real, target_is_directory=True)  # the folder itself a link: its target is the folder
    status, _, err = _run(capsys, out)
    assert status == 0, err
    assert (real / "numbers.json").is_symlink() and '"prop1"' in (real / "kept.json").read_text()
    assert (real / "payload.json").is_file() and (real / "figures").is_dir()


def test_a_hard_link_to_a_file_outside_keeps_that_file(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path)
    os.link(victim, out / "numbers.json")  # the same inode: a write in place would change the victim
    status, _, _ = _run(capsys, out)
    assert status == 0 and victim.read_text() == "precious\n" and '"prop1"' in (out / "numbers.json").read_text()


def test_a_link_made_after_the_check_is_refused_at_the_write(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path)
    with confined(out):
        checked = check_output(out / "numbers.json", "--out numbers.json", parents=True)
        (out / "numbers.json").symlink_to(victim)  # swapped in between the check and the write
        with pytest.raises(PosKernelsError, match="link out of the output folder"):
            checked.write("overwritten")
    assert victim.read_text() == "precious\n"


def test_the_confinement_holds_in_another_thread_and_ends_with_its_block(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path)
    (out / "figures").symlink_to(victim.parent, target_is_directory=True)
    errors = []

    def draw():
        try:
            write_output(out / "figures" / "f.png", b"png", "figure")
        except PosKernelsError as err:
            errors.append(err)

    with confined(out):
        worker = threading.Thread(target=draw)
        worker.start()
        worker.join()
    assert len(errors) == 1 and not (victim.parent / "f.png").exists()
    write_output(out / "figures" / "f.png", b"png", "figure")  # outside the block a link is followed, as before
    assert (victim.parent / "f.png").read_bytes() == b"png"


def test_a_path_outside_the_folder_is_not_concerned(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    other = tmp_path / "other.json"
    with confined(out):
        write_output(other, "x")
    assert other.read_text() == "x"
