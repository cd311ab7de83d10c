"""The seed block: read at the edge only (the command line, ``first_seed()``), checked, and passed to every section."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import poskernels
from poskernels import cli, page
from poskernels.errors import PosKernelsError
from poskernels.experiments import laboratory
from poskernels.experiments.filing_heads import _filing_jobs as filings_jobs
from poskernels.experiments.filing_horizon import horizon_stats
from poskernels.experiments.long_context import run_long_context
from poskernels.experiments.tournament import tournament_jobs
from poskernels.model.config import preset
from poskernels.seeds import ENV, first_seed, mean_stderr, seed_block, stat_table
from quoting import assert_quotes


def test_the_environment_moves_the_block_read_at_the_edge(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert first_seed() == 0 and seed_block(first=first_seed()) == tuple(range(10))
    monkeypatch.setenv(ENV, " 1000 ")
    assert first_seed() == 1000 and seed_block(first=first_seed())[:2] == (1000, 1001)
    assert first_seed(3) == 3 and seed_block(first=3) == tuple(range(3, 13))  # an explicit first seed wins
    assert page.Context(first_seed=5).seeds == tuple(range(5, 15))  # the context holds what it was given


def test_the_block_and_the_context_take_their_first_seed_as_an_argument():
    with pytest.raises(TypeError, match="first"):
        seed_block()  # no block from the environment: the caller names its first seed
    with pytest.raises(TypeError, match="first_seed"):
        page.Context()
    for bad in (-1, True, 2**63):
        with pytest.raises(PosKernelsError, match="first seed"):
            seed_block(first=bad)


@pytest.mark.parametrize("raw", ["-1", "abc", "1.5", "0x10"])
def test_a_bad_environment_value_is_refused_with_the_value_quoted(monkeypatch, raw):
    monkeypatch.setenv(ENV, raw)
    with pytest.raises(PosKernelsError, match=ENV) as err:
        first_seed()
    assert_quotes(str(err.value), repr(raw))
    with pytest.raises(PosKernelsError, match="non-negative|>= 0"):
        first_seed(True)


#: The package's edges: the only modules that may read ``$POSKERNELS_FIRST_SEED`` or call ``first_seed()``.
EDGES = ("seeds.py", "cli/reproduce.py", "cli/tournament.py")


def environment_reads(source: str) -> list[str]:
    """Where a module's source reads the seed block's environment variable: a call of ``first_seed`` (any
    spelling), an import of it or of ``ENV`` from the seeds module, or the variable's name as a string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "first_seed":
                found.append(f"line {node.lineno}: calls first_seed()")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "seeds":
            for alias in node.names:
                if alias.name in ("first_seed", "ENV"):
                    found.append(f"line {node.lineno}: imports {alias.name} from the seeds module")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() == ENV:
            found.append(f"line {node.lineno}: names {ENV}")
        elif isinstance(node, ast.Attribute) and node.attr == "ENV" and getattr(node.value, "id", "") == "seeds":
            found.append(f"line {node.lineno}: reads seeds.ENV")
    return found


def test_no_module_but_the_edges_reads_the_seed_environment():
    root = Path(poskernels.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 50  # the package itself, not an empty folder
    offenders = {
        str(path.relative_to(root)): hits
        for path in modules
        if str(path.relative_to(root)) not in EDGES and (hits := environment_reads(path.read_text()))
    }
    assert offenders == {}
    assert environment_reads((root / "cli" / "reproduce.py").read_text())  # the command line is where it is read


@pytest.mark.parametrize(
    "source",
    [
        "from ..seeds import first_seed\nx = first_seed()",
        "from poskernels import seeds\nx = seeds.first_seed()",
        "import os\nx = os.environ.get('POSKERNELS_FIRST_SEED')",
        "from .seeds import ENV\nimport os\nx = os.environ[ENV]",
        "from poskernels import seeds\nimport os\nx = os.getenv(seeds.ENV)",
    ],
)
def test_the_scan_sees_a_read_of_the_environment(source):
    assert environment_reads(source)
    assert not environment_reads("def f(ctx):\n    return ctx.first_seed  # POSKERNELS_FIRST_SEED in a comment")


def test_an_experiment_given_its_block_ignores_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, "not a seed")  # any read of it would raise
    assert {s for _, s in tournament_jobs(seeds=(3, 4))} == {3, 4}
    assert {s for _, s in filings_jobs((5,))} == {5}
    assert laboratory.result_path(tmp_path, seeds=(3, 4)) != laboratory.result_path(tmp_path, seeds=(3, 5))
    quick = preset("quick")
    data = run_long_context(None, seeds=[7, 8], lengths=(40,), offsets=(4,), count=5, config=quick, workers=1,
                            schemes=("alibi",))  # fmt: skip
    assert data["seeds"] == [7, 8]
    assert list(data["distance"]["horizon"]) == ["7", "8"] and len(data["length"]["per_seed"]["alibi"]["40"]) == 2
    ctx = page.Context(first_seed=11, log=lambda m: None)
    assert ctx.seeds[0] == 11 and page.assemble(ctx, keys=["prop1"])["prop1"]
    with pytest.raises(TypeError, match="seeds"):
        tournament_jobs()  # no default block to fall back on


def test_reproduce_reads_first_seed(monkeypatch, tmp_path, capsys):
    seen, compute = [], page.compute_section

    def record(ctx, section):
        seen.append(ctx.seeds)
        return compute(ctx, section)

    monkeypatch.setattr(page, "compute_section", record)
    monkeypatch.setattr(cli.reproduce, "_REPRODUCE_WRITERS", [])
    monkeypatch.setenv(ENV, "1000")
    assert cli.main(["reproduce", "--out", str(tmp_path), "--only", "prop1", "--first-seed", "7"]) == 0
    assert seen == [tuple(range(7, 17))]
    assert cli.main(["reproduce", "--out", str(tmp_path), "--only", "prop1"]) == 0
    assert seen[-1][0] == 1000
    assert cli.main(["reproduce", "--out", str(tmp_path), "--only", "prop1", "--first-seed", "-2"]) == 2
    assert_quotes(capsys.readouterr().err, "-2")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=20))
def test_mean_and_standard_error_against_their_definitions(values):
    mean, se = mean_stderr(values)
    k = len(values)
    assert math.isclose(mean, sum(values) / k, abs_tol=1e-12)
    var = sum((v - sum(values) / k) ** 2 for v in values) / (k - 1)
    assert math.isclose(se, math.sqrt(var / k), abs_tol=1e-12)
    means, errors = stat_table({"a": {"b": values, "c": [None] * k}})
    assert means["a"]["c"] is None and errors["a"]["c"] is None and math.isclose(errors["a"]["b"], se)


def test_horizon_statistics_skip_heads_without_far_queries():
    rows = [
        {"trained_on": on, "seed": s, "W": 1.0, "horizon": 2.0 * s, "inside_half": 1.0, "between": 1.0, "beyond": b}
        for on in ("filings", "synthetic")
        for s, b in ((0, 0.2), (1, None), (2, 0.4))
    ]
    st_ = horizon_stats(rows)
    assert list(st_) == ["filings", "synthetic"] and st_["filings"]["seeds"] == [0, 1, 2]
    assert np.isclose(st_["filings"]["mean"]["beyond"], 0.3) and st_["filings"]["per_seed"]["beyond"][1] is None
    assert np.isclose(st_["synthetic"]["stderr"]["horizon"], 2.0 / math.sqrt(3))
