"""The article's printed figures of its deterministic statements, each equal to ours at the article's precision.

``poskernels.page.printed.PRINTED`` holds what the article prints (its text) and where ``numbers.json`` holds ours;
the documentation's pages show the two side by side.  Checked here on a fresh computation of the deterministic
sections (not the shipped file), and the renderer's marks are checked to fire on a number that differs.
"""

from __future__ import annotations

import copy

import pytest

from conftest import FIRST_SEED
from poskernels import page
from poskernels.errors import PosKernelsError
from poskernels.page import printed


@pytest.fixture(scope="module")
def fresh() -> dict:
    return page.assemble(page.Context(log=lambda m: None, first_seed=FIRST_SEED), include_trained=False)


@pytest.mark.parametrize("part", printed.PARTS)
def test_every_printed_figure_is_ours_at_its_precision(fresh, part):
    table = printed.markdown(fresh, part)
    rows = table.splitlines()[2:]
    assert len(rows) == len(printed.PRINTED[part]) >= 2
    assert not [r for r in rows if r.endswith(" * |")], table


def test_a_differing_figure_is_marked(fresh):
    changed = copy.deepcopy(fresh)
    changed["prop1"]["bag_reader"]["32"] = 0.55
    assert "| best bag reader, exact, at n = 32 | 0.550 | 0.547 * |" in printed.markdown(changed, "order")
    changed["thm1"]["max_column_cosine"]["64"] = 0.998  # below the article's bound "> 0.999"
    assert "| 0.998 | > 0.999 * |" in printed.markdown(changed, "clocks")
    with pytest.raises(PosKernelsError, match="numbers.json has no prop1.bag_reader.32"):
        printed.markdown({"prop1": {"bag_reader": {}}}, "order")
    with pytest.raises(PosKernelsError, match="unknown part of the article 'window'"):
        printed.markdown(fresh, "window")


def test_the_article_counts_every_statement_part():
    # the four parts of the article with deterministic statements, every figure of the article's Theorem 1 table
    assert printed.PARTS == ("order", "clocks", "relative", "rotations")
    assert sum(1 for label, path, _ in printed.PRINTED["clocks"] if path[:2] == ("thm1", "kernel")) == 18
