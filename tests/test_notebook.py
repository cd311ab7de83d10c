"""The companion notebook runs headless, end to end, and prints the article's numbers from the package.

The notebook is kept in jupytext's percent format (``notebooks/positional_encodings.py``), which is also a plain
Python script: the test runs it with the Agg backend, the repository's cache of trained heads, and a temporary
output folder for its figures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from poskernels import page

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "positional_encodings.py"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("notebook")
    env = {**os.environ, "MPLBACKEND": "Agg", "POSKERNELS_NOTEBOOK_OUT": str(out)}
    proc = subprocess.run(
        [sys.executable, str(NOTEBOOK)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    return proc, out


def test_notebook_runs_headless(run):
    proc, _ = run
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_notebook_prints_the_articles_numbers(run):
    proc, _ = run
    text = proc.stdout
    assert "<p(3), p(10)> / (d/2) = 0.737" in text  # Figure A's readout at m = 3, n = 10
    assert "(2/d) kappa_d(7)      = 0.737" in text  # the same number through Theorem 1 (i)
    assert "shift is a rotation: True" in text and "|p(m)|^2 = d/2: True" in text  # Proposition 2 (i), (iii)
    assert "positions recovered from the counter: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]" in text  # Proposition 1 (i)
    # Article, after Theorem 5: NTK-aware factors at kappa = 4, and YaRN's
    assert "ntk   factors at kappa = 4: [1.0, 0.82, 0.673, 0.552, 0.453, 0.371, 0.305, 0.25]" in text
    assert "yarn  factors at kappa = 4: [0.349, 0.265, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]" in text


def test_notebook_prints_every_registered_section(run):
    proc, _ = run
    missing = re.findall(r"\[section '(\w+)' is not part of this installation\]", proc.stdout)
    assert not set(missing) & {s.key for s in page.SECTIONS}
    for s in page.SECTIONS:  # each registered section's table, exactly as `reproduce` prints it
        if s.key in ("prop1", "thm1", "def3"):
            assert s.render(s.compute(page.Context(log=lambda m: None))) in proc.stdout


def test_notebook_writes_its_figures(run):
    _, out = run
    assert (out / "kernel_ruler.png").stat().st_size > 10_000
