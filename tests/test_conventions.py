"""The conventions a Python user expects of the package: ``--version``, ``python -m poskernels``, ``py.typed``,
``-`` for standard output (``census --json -``, ``sweep export --out -``)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from importlib import resources

import numpy as np

import poskernels
from poskernels.cli import main
from test_sweep_store import _filled


def test_python_dash_m_and_version():
    proc = subprocess.run([sys.executable, "-m", "poskernels", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == f"poskernels {poskernels.__version__}"
    proc = subprocess.run([sys.executable, "-m", "poskernels", "census", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--json PATH" in proc.stdout


def test_py_typed_marker_ships():
    assert (resources.files("poskernels") / "py.typed").is_file()


def test_sweep_export_to_stdout(tmp_path, capsys, monkeypatch):
    s, acc = _filled(tmp_path / "s.sqlite", np.random.default_rng(4))
    s.close()
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "export", str(tmp_path / "s.sqlite"), "--format", "csv", "--out", "-"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))  # the table alone
    assert len(rows) == len(acc) and not (tmp_path / "-").exists() and "wrote" not in out


def test_transformers_vocabulary_in_grids_and_maps():
    from poskernels import extend, omega
    from poskernels.errors import PosKernelsError
    from poskernels.sweep.grid import parse_grid

    g = parse_grid('[fixed]\nscheme = "rope"\nrope_theta = 500\n[grid]\nextension = ["linear", "default"]\n')
    assert [(p["base"], p["extension"]) for p in g.points] == [(500.0, "pi"), (500.0, "none")]
    assert extend("linear", omega(8), 4, 32).name == "pi"
    try:
        parse_grid("[fixed]\nbsae = 500\n", "g.toml")
    except PosKernelsError as err:
        assert "did you mean 'base'" in str(err) and "line 2" in str(err)
    else:
        raise AssertionError("a misspelt setting was accepted")
