"""The constants and initialisations of every scheme beyond the article, against the list in the docs.

``docs/guide/beyond.md`` lists each constant beside the paper's value with the reason for any difference; this test
reads that table and fails when a scheme's default is not the one listed, when a setting has no row, or when a row
differs from the paper's (or the paper fixes none) without a stated reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from poskernels.encodings import SCHEMES
from poskernels.model.config import HeadConfig

DOC = Path(__file__).resolve().parents[1] / "docs" / "guide" / "beyond.md"
SECTION = "## Constants and initialisations beside the papers'"
ROW = re.compile(
    r"^\| `(?P<scheme>[a-z0-9_]+)` \| `(?P<name>[^`]+)` \| (?P<ours>[^|]*)\| (?P<paper>[^|]*)\|(?P<why>.*)\|$"
)
BEYOND = [name for name, s in SCHEMES.items() if not s.in_article]


def rows(text: str) -> list[dict]:
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [{k: v.strip() for k, v in m.groupdict().items()} for m in map(ROW.match, body.splitlines()) if m]


ROWS = rows(DOC.read_text(encoding="utf-8"))


def default(scheme: str, name: str) -> float:
    """The scheme's value of a listed constant: a setting's default, a class constant, or ``init:NAME``."""
    s = SCHEMES[scheme]
    if name.startswith("init:"):
        params = s.init(HeadConfig(scheme=scheme), np.random.default_rng(0))
        return float(np.asarray(params[name.removeprefix("init:")]).ravel()[0])
    if name in s.settings:
        return float(s.settings[name].default)
    return float(getattr(type(s), name))


def test_the_table_is_read():
    assert len(ROWS) >= len(BEYOND)  # every scheme has at least one row
    assert {r["scheme"] for r in ROWS} == set(BEYOND)


@pytest.mark.parametrize("scheme", BEYOND)
def test_every_setting_has_a_row(scheme):
    listed = {r["name"] for r in ROWS if r["scheme"] == scheme}
    assert set(SCHEMES[scheme].settings) <= listed, f"{scheme}: settings without a row in {DOC.name}"


def problem(row: dict) -> str:
    """What is wrong with one row: its value is not the scheme's default, or it differs without a reason."""
    ours = float(row["ours"])
    actual = default(row["scheme"], row["name"])
    if actual != pytest.approx(ours, rel=1e-3, abs=1e-4):
        return f"{row['scheme']}: {row['name']} is {actual}, the docs list {ours}"
    fixed = row["paper"] not in ("—", "-", "")
    if (not fixed or float(row["paper"]) != ours) and not row["why"]:
        return f"{row['scheme']}: {row['name']} = {ours} against the paper's {row['paper']}, with no reason"
    return ""


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['scheme']}.{r['name']}")
def test_each_default_is_the_listed_one_and_a_difference_has_its_reason(row):
    assert not problem(row), problem(row)


def _row(table: list[dict], scheme: str, name: str) -> dict:
    return next(r for r in table if (r["scheme"], r["name"]) == (scheme, name))


def test_a_changed_default_or_a_missing_reason_fails():
    text = DOC.read_text(encoding="utf-8")
    # the docs listing xPos at 16 (the rescaled variant's value) while its default is the paper's 512
    moved = rows(
        text.replace("| `xpos` | `xpos_scale_base` | 512 | 512 |", "| `xpos` | `xpos_scale_base` | 16 | 512 |")
    )
    assert "the docs list 16" in problem(_row(moved, "xpos", "xpos_scale_base"))
    # FIRE from c = 1 with its reason removed
    bare = rows(re.sub(r"(\| `fire_c1` \| `C0` \| 1 \| 0\.1 \|)[^\n]*", r"\1 |", text))
    assert "with no reason" in problem(_row(bare, "fire_c1", "C0"))
    # a constant the paper leaves open, listed without a reason
    open_ = rows(re.sub(r"(\| `nope_ssmax` \| `init:ssmax_s` \| 0\.2885 \| — \|)[^\n]*", r"\1 |", text))
    assert "with no reason" in problem(_row(open_, "nope_ssmax", "init:ssmax_s"))
