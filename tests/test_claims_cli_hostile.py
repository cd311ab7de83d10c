"""``python -m poskernels.claims`` on hostile numbers and outputs: one line, exit 2 (1 for a disk that fails).

Each file is the shipped reference numbers with one thing broken: a per-seed list all NaN or all null, an integer
of 400 digits, a per-seed dict in place of the file, a JSON that is not a numbers.json; each output is one the
project's writer refuses (a missing folder, a FIFO nobody reads, the input itself) or fails on (``/dev/full``).
"""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from poskernels.atomic import output as atomic_output
from poskernels.claims.cli import main

REFERENCE = json.loads((resources.files("poskernels") / "page" / "reference_numbers.json").read_text())


def _write(tmp_path: Path, data, name: str = "numbers.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _with_rope_seeds(value) -> dict:
    data = copy.deepcopy(REFERENCE)
    per = data["tournament"]["per_seed"]["rope"]
    for length, seeds in per.items():
        per[length] = [value] * len(seeds)
    return data


def _one_line_exit(capsys, argv, status: int = 2) -> str:
    assert main([str(a) for a in argv]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("value", [float("nan"), None], ids=["all-nan", "all-null"])
def test_per_seed_lists_with_no_number_are_damaged_numbers(tmp_path, capsys, value):
    err = _one_line_exit(capsys, [_write(tmp_path, _with_rope_seeds(value))])
    assert "cannot read its values" in err and "tournament.rope" in err


@pytest.mark.parametrize("digits", [309, 400, 4000])
def test_an_integer_past_float64_is_refused_where_it_is(tmp_path, capsys, digits):
    err = _one_line_exit(capsys, [_write(tmp_path, _with_rope_seeds(10**digits))])
    assert "tournament.per_seed.rope.32[0]" in err and f"({digits + 1} digits)" in err


def test_a_large_but_finite_integer_is_read_as_a_number(tmp_path, capsys):
    status = main([str(_write(tmp_path, _with_rope_seeds(10**300)))])  # absurd accuracy, but a number: claims judge
    assert status in (0, 1) and "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("section", ["tournament", "rescaled", "filings"])
def test_a_per_seed_dict_is_not_a_numbers_file(tmp_path, capsys, section):
    err = _one_line_exit(capsys, [_write(tmp_path, REFERENCE[section]["per_seed"])])
    assert "not a numbers.json" in err  # the tournament's names a section: "a per-seed dict"


@pytest.mark.parametrize(
    "data", [[1, 2], "numbers", 3.5, {"prop1": {}}, {"tournament": [1]}, {"a": {"b": None}}], ids=repr
)
def test_a_json_that_is_not_a_numbers_file_is_refused(tmp_path, capsys, data):
    _one_line_exit(capsys, [_write(tmp_path, data)])


def test_text_that_is_not_json_is_refused(tmp_path, capsys):
    path = tmp_path / "numbers.json"
    path.write_bytes(b"\xff\xfe not json")
    _one_line_exit(capsys, [path])


def test_json_into_a_missing_folder_is_refused_before_work(tmp_path, capsys):
    numbers = _write(tmp_path, REFERENCE)
    err = _one_line_exit(capsys, [numbers, "--json", tmp_path / "nowhere" / "v.json"])
    assert "does not exist" in err and not (tmp_path / "nowhere").exists()


def test_json_onto_the_numbers_file_is_refused_and_it_is_kept(tmp_path, capsys):
    numbers = _write(tmp_path, REFERENCE)
    before = numbers.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(numbers)
    for target in (numbers, link):
        err = _one_line_exit(capsys, [numbers, "--json", target])
        assert "the numbers file itself" in err
    assert numbers.read_bytes() == before


def test_json_into_a_fifo_nobody_reads_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(atomic_output, "FIFO_WAIT", 0.2)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    err = _one_line_exit(capsys, [_write(tmp_path, REFERENCE), "--json", fifo])
    assert "no process read the FIFO" in err and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_json_onto_a_full_disk_says_disk_full_and_exits_1(tmp_path, capsys):
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # Linux's always-full device
    err = _one_line_exit(capsys, [_write(tmp_path, REFERENCE), "--json", "/dev/full"], status=1)
    assert "disk full" in err


def test_json_written_through_the_writer_leaves_no_temporary_file(tmp_path, capsys):
    numbers = _write(tmp_path, REFERENCE)
    out = tmp_path / "verdicts.json"
    assert main([str(numbers), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["claims"] and sorted(p.name for p in tmp_path.iterdir()) == [
        "numbers.json",
        "verdicts.json",
    ]


def test_the_module_prints_one_line_and_exits_2_on_all_nan_seeds(tmp_path):
    path = _write(tmp_path, _with_rope_seeds(float("nan")))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "poskernels.claims", str(path)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
