"""The layers of ARCHITECTURE.md as a contract: import-linter's contracts of pyproject.toml hold (``make lint`` runs the
same check as ``lint-imports``), and they do fail on an upward import (checked on a copy of the package)."""

import shutil
import subprocess
import sys
from pathlib import Path

import importlinter  # noqa: F401 - the test extra installs it; the contracts run in a subprocess

ROOT = Path(__file__).resolve().parents[1]


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess:
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True))"
    )
    env = {"PYTHONPATH": str(src), "PATH": ""}
    return subprocess.run([sys.executable, "-c", code, str(config)], env=env, capture_output=True, text=True, cwd=src)


def test_the_layers_and_acyclic_packages_hold():
    run = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_upward_import_breaks_the_contract(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "poskernels", src / "poskernels", ignore=shutil.ignore_patterns("static", "data"))
    with open(src / "poskernels" / "model" / "optim.py", "a") as f:
        f.write("\nfrom .. import page  # noqa: E402  (model -> page points up)\n")
    run = _lint(src, ROOT / "pyproject.toml")
    assert run.returncode == 1
    assert "poskernels.model is not allowed to import poskernels.page" in run.stdout
