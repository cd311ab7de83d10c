"""The claims table (``claims/rows/*.toml``) and its machinery: every row reads a shipped ``numbers.json``, and a
row the machinery cannot read is refused with one error that names the file, the claim and what is accepted.

Oracle tests: an input expression's value against the same reading written out in NumPy; a row with each kind of
mistake against the error it must raise.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from poskernels.claims import CLAIMS
from poskernels.claims.inputs import evaluate, parse
from poskernels.claims.table import ROWS, build, constants, load
from poskernels.errors import PosKernelsError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "src" / "poskernels" / "page" / "reference_numbers.json"
WHERE = "rows/beyond.toml"


@pytest.fixture(scope="module")
def numbers() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def _row(**change) -> dict:
    row = {
        "id": "beyond.demo",
        "sentence": "s",
        "where": "w",
        "kind": "upper",
        "params": {"c": "HOLD", "k": 3.0},
        "inputs": {"x": '"long/length/per_seed/fire/32" - "long/length/per_seed/fire/100000"'},
    }
    row.update(change)
    return {k: v for k, v in row.items() if v is not None}


def _refused(match: str, **change) -> None:
    with pytest.raises(PosKernelsError, match=match):
        build("beyond", [_row(**change)], constants("beyond"), WHERE)


def test_the_table_is_every_claim_one_row_each():
    assert load() == CLAIMS
    files = sorted(p.stem for p in ROWS.glob("*.toml"))
    assert files == sorted({c.suite for c in CLAIMS})


@pytest.mark.parametrize("claim", [c for c in CLAIMS if not c.optional], ids=lambda c: c.id)
def test_every_rows_inputs_resolve_in_the_shipped_numbers(claim, numbers):
    assert set(claim.needs) <= set(numbers), claim.needs
    values = claim.values(numbers)
    assert values is not None and set(values) == set(claim.inputs)
    assert all(np.isfinite(np.asarray(v, dtype=float)).any() for v in values.values())  # a number, not a gap


def test_an_optional_rows_inputs_still_parse_and_name_their_section():
    optional = [c for c in CLAIMS if c.optional]
    assert optional and all(c.needs == ("long",) for c in optional)


def test_a_row_is_built_as_its_text_says(numbers):
    claim = build("beyond", [_row()], constants("beyond"), WHERE)[0]
    per = numbers["long"]["length"]["per_seed"]["fire"]
    drop = np.asarray(per["32"], dtype=float) - np.asarray(per["100000"], dtype=float)
    assert claim.needs == ("long",) and claim.params == {"c": 0.05, "k": 3.0}
    assert np.array_equal(claim.values(numbers)["x"], drop)


def test_an_unknown_key_is_refused():
    _refused(r"rows/beyond.toml: claim 'beyond.demo': unknown key\(s\) \['thresold'\]; accepted: id,", thresold=1)


def test_a_missing_key_is_refused():
    _refused(r"lacks \['kind'\]", kind=None)


def test_a_duplicate_id_is_refused():
    with pytest.raises(PosKernelsError, match="claim 'beyond.demo' is given twice"):
        build("beyond", [_row(), _row()], constants("beyond"), WHERE)


def test_an_id_of_another_suite_is_refused():
    _refused(r"an id of this file starts 'beyond.'", id="tournament.demo")


def test_an_unknown_kind_is_refused():
    _refused(r"unknown kind 'uper'; accepted: lower, upper", kind="uper")


def test_a_parameter_its_kind_does_not_read_is_refused():
    _refused(r"kind 'upper' reads no parameter \['q'\]; accepted: c, k, sd_floor", params={"q": 0.5})


def test_an_unknown_constant_is_refused():
    _refused(r"parameter c = 'HLOD' names no constant", params={"c": "HLOD"})
    _refused(r"unknown name 'HLOD' in", inputs={"x": '"long/length/per_seed/fire/32" - HLOD'})


def test_inputs_its_kind_does_not_read_are_refused():
    _refused(
        r"kind 'upper' reads the inputs x \(and may read no other\); got a, b", inputs={"a": "long/x", "b": "long/y"}
    )


def test_an_input_that_is_not_an_expression_is_refused():
    _refused(r"is not an expression", inputs={"x": '"long/a" -'})


@pytest.mark.parametrize(
    "text, match",
    [
        ("__import__('os')", "unknown function '__import__'"),
        ('"long/a".mean()', "unknown function"),
        ('"long/a" ** 2', "is not read"),
        ('"secrets/a"', "not in a trained section; accepted first parts: tournament,"),
        ("True", "neither a path nor a number"),
    ],
)
def test_an_input_reads_only_the_modules_syntax(text, match):
    with pytest.raises(PosKernelsError, match=match):
        parse(text, {})


def test_an_input_evaluates_as_numpy_would():
    numbers = {
        "rebound": {"10": {"p": [3, 9.0], "c": [0, 1, 5]}, "2": {"p": [1, -1.0], "c": [7, 0, 0]}},
        "long": {"m": [[1.0, 2.0], [3.0, 5.0]], "a": [0.2, None, 0.9], "b": [0.1, 0.5, 0.9]},
    }
    e = parse('by_seed("rebound", "p", 1) < 0 < by_seed_max("rebound", "c", 0, 2)', {})
    assert e.sections == ("rebound",)
    assert evaluate(e, numbers).tolist() == [1.0, 0.0]  # seed 2 before seed 10; a chain holds only as a whole
    assert evaluate(parse('"long/m"[:, 1] - 2 * -"long/m"[0, 0]', {}), numbers).tolist() == [4.0, 7.0]
    got = evaluate(parse('"long/a" >= "long/b"', {}), numbers)
    assert got.tolist() == [1.0, 0.0, 1.0] and got.dtype == float  # a seed with no value compares false
    assert evaluate(parse("long/a", {}), numbers)[1] != evaluate(parse("long/a", {}), numbers)[1]  # NaN
    assert evaluate(parse('row_mean("long/m")', {}), numbers).tolist() == [1.5, 4.0]


def test_a_path_the_file_lacks_makes_the_claim_not_applicable():
    claim = build("beyond", [_row()], constants("beyond"), WHERE)[0]
    verdict = claim.check({"long": {"length": {"per_seed": {}}}})
    assert verdict.passed is None


def test_the_suites_constants_are_the_tables():
    from poskernels.claims.kerple_fire import HOLD
    from poskernels.claims.rotary_variants import RECOVERED

    assert HOLD == constants("beyond")["HOLD"] == constants("rotary_family")["beyond.HOLD"]
    assert RECOVERED == constants("rotary_family")["RECOVERED"]
