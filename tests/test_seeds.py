"""The seed block: one place reads it (env or --first-seed), validates it, and every trained section uses it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels import cli, page
from poskernels.errors import PosKernelsError
from poskernels.experiments.filings import horizon_stats
from poskernels.experiments.tournament import tournament_jobs
from poskernels.seeds import ENV, first_seed, mean_stderr, seed_block, stat_table
from quoting import assert_quotes


def test_the_environment_moves_the_block(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert first_seed() == 0 and seed_block() == tuple(range(10))
    monkeypatch.setenv(ENV, " 1000 ")
    assert seed_block()[:2] == (1000, 1001) and len(seed_block()) == 10
    assert seed_block(first=3) == tuple(range(3, 13))  # an explicit first seed wins over the environment
    assert {s for _, s in tournament_jobs()} == set(range(1000, 1010))
    assert page.Context().seeds == seed_block() and page.Context(first_seed=5).seeds[0] == 5


@pytest.mark.parametrize("raw", ["-1", "abc", "1.5", "0x10"])
def test_a_bad_environment_value_is_refused_with_the_value_quoted(monkeypatch, raw):
    monkeypatch.setenv(ENV, raw)
    with pytest.raises(PosKernelsError, match=ENV) as err:
        seed_block()
    assert_quotes(str(err.value), repr(raw))
    with pytest.raises(PosKernelsError, match="non-negative|>= 0"):
        first_seed(True)


def test_reproduce_reads_first_seed(monkeypatch, tmp_path, capsys):
    seen, compute = [], page.compute_section

    def record(ctx, section):
        seen.append(ctx.seeds)
        return compute(ctx, section)

    monkeypatch.setattr(page, "compute_section", record)
    monkeypatch.setattr(cli, "_REPRODUCE_WRITERS", [])
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
