"""The layers of ARCHITECTURE.md as a contract: import-linter's contracts of pyproject.toml hold (``make lint`` runs the
same check as ``lint-imports``), and they do fail on an upward import (checked on a copy of the package)."""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
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


def _contract(name_start: str) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"].startswith(name_start))


def diagram_layers(markdown: str) -> list[list[str]]:
    """The layers of ARCHITECTURE.md's diagram (the code block of its "Layers" section), top first: each line is a
    floor's name, then its layers joined by ``>`` (a layer's independent modules by ``|``), then two spaces or more
    before what the line says of them; a package's trailing ``/`` is dropped."""
    section = markdown.split("## Layers", 1)[1]
    block = section.split("```", 2)[1]
    layers = []
    for line in block.strip("\n").splitlines():
        chain = re.split(r"\s{2,}", line.strip(), maxsplit=2)[1]
        layers += [[m.strip().rstrip("/") for m in layer.split("|")] for layer in chain.split(">")]
    return layers


def test_the_architecture_diagram_is_the_layers_contract():
    contract = [[m.strip() for m in layer.split("|")] for layer in _contract("layers")["layers"]]
    assert diagram_layers((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")) == contract


def test_the_diagram_reader_sees_a_difference():
    text = "## Layers\n\n```\nfaces        __main__ > cli/\nground       seeds | atomic/  what > errors\n```\n"
    assert diagram_layers(text) == [["__main__"], ["cli"], ["seeds", "atomic"]]


#: The package root holds only the ground modules, the entry points and the documented ``torch_rope``.
ROOT_MODULES = {"__init__", "__main__", "seeds", "pool", "torch_rope"}  # errors/ and atomic/ are ground packages


def test_the_package_root_holds_only_the_ground():
    found = {p.stem for p in (ROOT / "src" / "poskernels").glob("*.py")}
    assert found == ROOT_MODULES, f"modules at the package root that belong in a package: {found - ROOT_MODULES}"


def test_no_library_module_imports_the_command_line():
    contract = _contract("no library module imports the command line")
    assert contract["type"] == "forbidden" and contract["forbidden_modules"] == ["poskernels.cli"]
    packages = {p.name for p in (ROOT / "src" / "poskernels").iterdir() if (p / "__init__.py").is_file()}
    every = {f"poskernels.{m}" for m in (packages | ROOT_MODULES) - {"cli", "__init__", "__main__"}}
    assert set(contract["source_modules"]) == every  # every module but the command line and its entry point


def test_an_import_of_a_command_breaks_the_contract(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "poskernels", src / "poskernels", ignore=shutil.ignore_patterns("static", "data"))
    with open(src / "poskernels" / "lab" / "common.py", "a") as f:
        f.write("\nfrom ..cli import census  # noqa: E402  (a library module importing a command)\n")
    run = _lint(src, ROOT / "pyproject.toml")
    assert run.returncode == 1
    assert "poskernels.lab.common -> poskernels.cli.census" in run.stdout


def _importers(graph, package: str) -> set[str]:
    """The modules outside ``package`` that import it or one of its modules."""
    inside = {package} | graph.find_descendants(package)
    return {m for target in inside for m in graph.find_modules_that_directly_import(target)} - inside


def test_only_the_entry_points_import_a_command():
    """``poskernels.cli`` is imported by ``python -m poskernels`` alone; the face of ``python -m poskernels.claims``
    (``claims/cli.py``: its ``__main__`` cannot import up into ``cli/``) by that ``__main__`` alone."""
    graph = grimp.build_graph("poskernels")
    assert _importers(graph, "poskernels.cli") == {"poskernels.__main__"}
    assert _importers(graph, "poskernels.claims.cli") == {"poskernels.claims.__main__"}
