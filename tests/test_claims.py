"""The table of trained claims (``poskernels.claims``): its statistics, its calibration, its command, its coverage.

Oracle tests: each kind's verdict against the formula written out; the size the calibration measures on a normal
pool against the normal probability; a claim at its null passes as often as the null says.  The command checks any
``numbers.json`` and fails on numbers in which a claim is false.  The coverage test reads the three test files of
trained claims: they parametrize over the table and write no threshold of their own.
"""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from poskernels.claims import CLAIMS, SUITES, by_id, check_all, of_suite
from poskernels.claims.calibrate import calibrate
from poskernels.claims.cli import main
from poskernels.claims.kinds import KINDS
from poskernels.claims.record import Claim
from poskernels.errors import PosKernelsError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "src" / "poskernels" / "page" / "reference_numbers.json"


def _claim(kind: str, params: dict, get=lambda d: d) -> Claim:
    return Claim("tournament.demo", "tournament", "a sentence", "somewhere", kind, params, get, ())


def _se(x):
    return x.std(ddof=1) / math.sqrt(x.size)


# ---------------------------------------------------------------- the statistics against their formulas


@settings(max_examples=40)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.3), st.floats(0.0, 4.0))
def test_each_kind_is_its_formula(seed, off, k):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.3, 1.0, 10), rng.uniform(0.0, 0.9, 10)  # (seeds,)
    apart = (a.mean() - off - b.mean()) / math.hypot(_se(a), _se(b))
    assert KINDS["gap"].evaluate({"a": a, "b": b}, {"off": off, "k": k})[1] == (apart > k)
    d = a - b - off
    assert KINDS["paired"].evaluate({"a": a, "b": b}, {"off": off, "k": k})[1] == (d.mean() / _se(d) > k)
    assert KINDS["lower"].evaluate({"x": a}, {"c": 0.6, "k": k})[1] == (a.mean() - k * _se(a) >= 0.6)
    assert KINDS["upper"].evaluate({"x": a}, {"c": 0.6, "k": k})[1] == (a.mean() + k * _se(a) <= 0.6)
    assert KINDS["exceeds"].evaluate({"x": a}, {"c": 0.6, "k": k})[1] == (a.mean() + k * _se(a) > 0.6)
    assert KINDS["share"].evaluate({"x": (a > 0.5) * 1.0}, {"q": 0.7})[1] == (np.mean(a > 0.5) >= 0.7)
    assert KINDS["share"].evaluate({"x": (a > 0.5) * 1.0}, {"q": 0.7, "at_most": True})[1] == (np.mean(a > 0.5) <= 0.7)
    assert KINDS["median"].evaluate({"x": a}, {"lo": 0.5, "hi": 0.9})[1] == (0.5 < np.median(a) < 0.9)
    half = 0.01 + k * math.hypot(_se(a), 0.02)
    assert KINDS["near"].evaluate({"x": a}, {"t": 0.6, "tol": 0.01, "k": k, "extra": 0.02})[1] == (
        abs(a.mean() - 0.6) <= half
    )
    times = (a.mean() - k * _se(a)) > 2 * (b.mean() + k * _se(b))
    assert KINDS["times"].evaluate({"a": a, "b": b}, {"f": 2.0, "k": k})[1] == times
    assert KINDS["sd_above"].evaluate({"a": a, "b": b}, {"f": 1.5})[1] == (a.std(ddof=1) > 1.5 * b.std(ddof=1))


def test_mode_needs_the_target_alone_on_top():
    assert KINDS["mode"].evaluate({"x": np.array([0, 0, 1, 2])}, {"target": 0})[1]
    assert not KINDS["mode"].evaluate({"x": np.array([0, 0, 1, 1])}, {"target": 0})[1]  # a tie is not a mode
    assert not KINDS["mode"].evaluate({"x": np.array([1, 1, 0])}, {"target": 0})[1]


def test_a_target_the_numbers_give_is_read_from_them():
    v = {"x": np.array([0.50, 0.52, 0.51]), "t": np.float64(0.51), "extra": np.float64(0.0)}
    assert KINDS["near"].evaluate(v, {"k": 3.0})[1]
    assert not KINDS["near"].evaluate({**v, "t": np.float64(0.7)}, {"k": 3.0})[1]


# ---------------------------------------------------------------- size and power, against independent figures


def test_size_on_a_normal_pool_is_the_normal_probability():
    # blocks of ten from a normal pool: "mean - 2 SE >= c" passes as often as Student's t says
    rng = np.random.default_rng(3)
    blocks = [{"v": rng.normal(0.9, 0.05, 10)} for _ in range(200)]  # 2,000 pooled seeds
    c = _claim("lower", {"c": 0.85, "k": 2.0}, lambda d: {"x": d["v"]})
    out = calibrate(blocks, [c], draws=4000)
    # mean - 2 SE >= c  <=>  t = (mean - c) / SE >= 2 with noncentrality (0.9 - 0.85) / (0.05 / sqrt(10))
    nc = 0.05 / (0.05 / math.sqrt(10))
    expected = 1 - stats.nct.sf(2.0, 9, nc)
    assert out["claims"][0]["size"] == pytest.approx(expected, abs=0.015)
    # at its null (the mean at c) it passes as often as t > 2 with 9 degrees of freedom
    assert out["claims"][0]["false_pass"] == pytest.approx(stats.t.sf(2.0, 9), abs=0.015)
    # it fails 13% of the blocks where it holds: not resolved by ten seeds, so not asserted, and it fails no suite
    assert not out["claims"][0]["resolved"] and out["joint_size"] == 0.0


def test_the_joint_size_is_over_the_asserted_claims(monkeypatch):
    import poskernels.claims.calibrate as cal

    rng = np.random.default_rng(3)
    blocks = [{"v": rng.normal(0.9, 0.05, 10)} for _ in range(200)]
    c = _claim("lower", {"c": 0.85, "k": 2.0}, lambda d: {"x": d["v"]})
    found = Claim("tournament.found", "tournament", "s", "w", "lower", {"c": 2.0}, lambda d: {"x": d["v"]}, (),
                  finding="reported, not asserted")  # fmt: skip
    monkeypatch.setattr(cal, "MAX_SIZE", 1.0)  # every size allowed: the first claim is asserted (false pass 3.8%)
    out = cal.calibrate(blocks, [c, found], draws=4000)
    assert out["claims"][0]["resolved"] and out["claims"][1]["size"] == 1.0  # the finding fails every block
    assert out["joint_size"] == pytest.approx(out["claims"][0]["size"])  # the finding's failures do not count


def test_a_gap_at_its_null_passes_as_often_as_k_allows():
    rng = np.random.default_rng(4)
    blocks = [{"a": rng.normal(0.8, 0.05, 10), "b": rng.normal(0.5, 0.05, 10)} for _ in range(100)]
    wide, narrow = _claim("gap", {"k": 3.0}), _claim("gap", {"k": 0.0})
    rows = calibrate(blocks, [wide, narrow], draws=3000)["claims"]
    assert rows[0]["size"] == 0.0 and rows[0]["false_pass"] < 0.01 and rows[0]["resolved"]
    assert rows[1]["false_pass"] == pytest.approx(0.5, abs=0.05) and not rows[1]["resolved"]  # k = 0: a coin


def test_a_share_at_its_null_rate_is_binomial():
    rng = np.random.default_rng(5)
    blocks = [{"v": (rng.random(10) < 0.97) * 1.0} for _ in range(100)]
    c = _claim("share", {"q": 0.9}, lambda d: {"x": d["v"]})
    row = calibrate(blocks, [c], draws=4000)["claims"][0]
    assert row["false_pass"] == pytest.approx(stats.binom.sf(8, 10, 0.5), abs=0.01)  # nine of ten heads by a coin


# ---------------------------------------------------------------- the table


def test_every_claim_says_what_it_stands_for():
    assert len({c.id for c in CLAIMS}) == len(CLAIMS) >= 100
    for c in CLAIMS:
        assert c.id.startswith(c.suite + ".") and c.sentence and c.where and c.null, c.id
        assert c.kind in KINDS and c.needs, c.id
    assert set(SUITES) == {c.suite for c in CLAIMS}
    with pytest.raises(PosKernelsError, match="unknown kind"):
        Claim("tournament.x", "tournament", "s", "w", "mean", {}, lambda d: d, ())
    with pytest.raises(PosKernelsError, match="no claim"):
        by_id("tournament.nothing")


def _parametrized_suites(path: Path) -> set[str]:
    """The suites a test file parametrizes its claim tests over: ``holds("x")`` and ``reported("x")``."""
    found = {"holds": set(), "reported": set()}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in found and node.args:
            found[node.func.id].add(node.args[0].value)
    return found["holds"] & found["reported"]


def _threshold_literals(path: Path) -> list[str]:
    """Comparisons against a number other than 0 and 1 outside a call (``pytest.approx`` tolerances are calls), and
    above 1e-6 (rounding tolerances such as ``bound + 1e-12`` are not thresholds)."""
    out = []

    def numbers(node):
        if isinstance(node, ast.Call):
            return []
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return [node.value] if abs(node.value) > 1e-6 and node.value != 1.0 else []
        return [v for child in ast.iter_child_nodes(node) for v in numbers(child)]

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            values = [v for part in (node.left, *node.comparators) for v in numbers(part)]
            if values:
                out.append(f"{path.name}:{node.lineno} compares with {values}")
    return out


def test_the_three_test_files_assert_the_table_and_write_no_threshold():
    for suite, file in SUITES.items():
        path = ROOT / file
        assert _parametrized_suites(path) == {suite}, file  # every claim of the suite, resolved or not
        assert _threshold_literals(path) == [], file
    assert sum(len(of_suite(s)) for s in SUITES) == len(CLAIMS)


def test_the_coverage_check_sees_a_threshold(tmp_path):
    p = tmp_path / "t.py"
    p.write_text("def test_x(a):\n    assert a.mean() >= 0.95 and a.std() == pytest.approx(0.1, abs=0.01)\n")
    assert _threshold_literals(p) == ["t.py:2 compares with [0.95]"]


# ---------------------------------------------------------------- the command


def _reference() -> dict:
    return json.loads(REFERENCE.read_text())


def test_the_command_fails_numbers_in_which_a_claim_is_false(tmp_path, capsys):
    numbers = _reference()
    numbers["tournament"]["per_seed"]["alibi"]["256"] = [0.5] * len(numbers["tournament"]["seeds"])
    path = tmp_path / "numbers.json"
    path.write_text(json.dumps(numbers))
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  tournament.alibi_median_head_holds_0.95_at_256" in out
    verdict = by_id("tournament.alibi_median_head_holds_0.95_at_256").check(numbers)
    assert verdict.passed is False and verdict.statistic == pytest.approx(0.5)


def test_the_command_writes_json_and_never_over_its_input(tmp_path, capsys):
    path = tmp_path / "numbers.json"
    path.write_text(REFERENCE.read_text())
    code = main([str(path), "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and len(data["claims"]) == len(CLAIMS)
    assert code == (1 if any(c["passed"] is False and c["asserted"] for c in data["claims"]) else 0)  # findings: 0
    out = tmp_path / "verdicts.json"
    assert main([str(path), "--json", str(out)]) == code
    assert json.loads(out.read_text()) == data
    before = path.read_text()
    assert main([str(path), "--json", str(path)]) == 2 and path.read_text() == before
    assert "the numbers file itself" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, message",
    [
        ("{", "not valid JSON"),
        ("[1, 2]", "not a numbers.json"),
        ('{"prop1": {}}', "none of the sections"),
        ('{"tournament": [1]}', "must be JSON objects"),
        ('{"tournament": {"seeds": [0]}}', "cannot read their values"),
        ('{"filings": {"per_seed": 5}}', "cannot read their values"),
    ],
)
def test_the_command_refuses_what_is_not_a_numbers_json(tmp_path, capsys, content, message):
    path = tmp_path / "numbers.json"
    path.write_text(content)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err


def test_the_command_refuses_a_missing_file_and_a_folder(tmp_path, capsys):
    assert main([str(tmp_path / "absent.json")]) == 2
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "absent.json" in err and "folder" in err


def test_python_dash_m_runs_the_command(tmp_path):
    path = tmp_path / "numbers.json"
    path.write_text("[]")
    run = subprocess.run([sys.executable, "-m", "poskernels.claims", str(path)], capture_output=True, text=True)
    assert run.returncode == 2 and "not a numbers.json" in run.stderr


def test_a_section_present_in_part_is_not_applicable_not_passed():
    numbers = _reference()
    verdicts = {v.claim: v for v in check_all({"long": numbers["long"]})}
    reads_more = [k for k in verdicts if set(by_id(k).needs) != {"long"}]  # the claims that read other sections
    assert reads_more and all(verdicts[k].passed is None for k in reads_more)


# ---------------------------------------------------------------- zero spread over seeds is no free comparison


def _flat(value: float, n: int = 10) -> np.ndarray:
    return np.full(n, value)  # (seeds,) every seed alike


def test_zero_spread_makes_no_comparison_free():
    # the cases a consistent numbers.json made pass: RoPE flat, ALiBi at chance, "RoPE ends below ALiBi"
    flat_rope, chance = _flat(0.60), _flat(1 / 8)
    assert not KINDS["gap"].evaluate({"a": chance, "b": flat_rope}, {})[1]  # a below b: never "a above b"
    assert KINDS["gap"].evaluate({"a": chance, "b": flat_rope}, {})[0] < 0
    # "RoPE falls from 128 to 256" with RoPE flat at both lengths: no gap
    assert not KINDS["gap"].evaluate({"a": flat_rope, "b": flat_rope}, {})[1]
    assert not KINDS["paired"].evaluate({"a": flat_rope, "b": flat_rope}, {})[1]
    # "Shaw beats T5" with two equal seeds below T5
    assert not KINDS["gap"].evaluate({"a": _flat(0.5, 2), "b": np.array([0.6, 0.7])}, {})[1]
    assert not KINDS["paired"].evaluate({"a": _flat(0.5, 2), "b": np.array([0.6, 0.7])}, {})[1]
    # a difference smaller than the floor's margin does not pass either: 3 x 0.01 x sqrt(2 / 10) = 0.0134
    assert not KINDS["gap"].evaluate({"a": _flat(0.51), "b": _flat(0.50)}, {})[1]
    assert KINDS["gap"].evaluate({"a": _flat(0.52), "b": _flat(0.50)}, {})[1]
    # a mean at its bound with no spread is not "k SE" inside it
    assert not KINDS["upper"].evaluate({"x": _flat(0.05)}, {"c": 0.05})[1]
    assert not KINDS["lower"].evaluate({"x": _flat(0.05)}, {"c": 0.05})[1]
    assert not KINDS["times"].evaluate({"a": _flat(0.2), "b": _flat(0.1)}, {"f": 2.0})[1]
    # one seed gives no spread at all: nothing passes on it
    for kind, v in (("lower", {"x": np.array([0.9])}), ("gap", {"a": np.array([0.9]), "b": np.array([0.1])})):
        assert not KINDS[kind].evaluate(v, {"c": 0.5})[1]


@settings(max_examples=30)
@given(st.integers(0, 2**32 - 1))
def test_the_floor_is_the_standard_error_where_the_seeds_spread_less(seed):
    from poskernels.claims.kinds import SD_FLOOR

    rng = np.random.default_rng(seed)
    x = 0.7 + rng.normal(0, 0.02, 10) * rng.uniform(0, 1)  # (seeds,) spread below or above the floor
    se = max(_se(x), SD_FLOOR / math.sqrt(x.size))
    assert KINDS["lower"].evaluate({"x": x}, {"c": 0.6, "k": 3.0})[0] == pytest.approx(x.mean() - 3 * se, abs=1e-12)
    assert KINDS["upper"].evaluate({"x": x}, {"c": 0.6, "k": 3.0, "sd_floor": 0.0})[0] == pytest.approx(
        x.mean() + 3 * _se(x), abs=1e-12
    )


def test_a_tie_needs_the_difference_shown_inside_its_margin():
    a, b = np.array([0.97, 0.98, 0.96, 0.97]), np.array([0.98, 0.98, 0.97, 0.99])
    joined = math.hypot(max(_se(a), 0.01 / 2), max(_se(b), 0.01 / 2))  # each error at least the floor's
    stat, ok = KINDS["tie"].evaluate({"a": a, "b": b}, {"margin": 0.05, "k": 3.0})
    assert stat == pytest.approx(abs(a.mean() - b.mean()) + 3 * joined) and ok
    assert not KINDS["tie"].evaluate({"a": a, "b": b}, {"margin": 0.02, "k": 3.0})[1]
    moved = KINDS["tie"].null({"a": a, "b": b}, {"margin": 0.05}, np.random.default_rng(0))
    assert abs(moved["a"].mean() - b.mean()) == pytest.approx(0.05)  # apart by the margin: the tie is false
    assert not KINDS["tie"].evaluate(moved, {"margin": 0.05, "k": 3.0})[1]
    # equal seeds on both sides: the floor's error still counts against the margin
    assert not KINDS["tie"].evaluate({"a": _flat(0.5), "b": _flat(0.5)}, {"margin": 0.01})[1]


def test_a_spread_ratio_is_tested_against_its_own_null():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.5, 0.10, 10), rng.normal(0.9, 0.02, 10)
    params = {"f": 1.78, "null_f": 1.0}
    assert KINDS["sd_above"].evaluate({"a": a, "b": b}, params)[1]
    moved = KINDS["sd_above"].null({"a": a, "b": b}, params, rng)
    assert np.std(moved["a"], ddof=1) == pytest.approx(np.std(b, ddof=1))  # the same spread: the claim is false
    assert not KINDS["sd_above"].evaluate(moved, params)[1]
    assert not KINDS["sd_above"].evaluate({"a": a, "b": _flat(0.9)}, {"f": 20.0})[1]  # b flat: its floor, not 0


# ---------------------------------------------------------------- findings and the pool the calibration measured


def test_a_finding_is_never_asserted_and_says_why():
    import claimcheck

    for suite in SUITES:
        asserted = {c.id for c in claimcheck.holds(suite)}
        for c in of_suite(suite):
            if c.finding:
                assert c.id not in asserted and len(c.finding) > 20, c.id
            if c.id in asserted:  # asserted: measured, and passing at most 5% of the time when false
                assert claimcheck.FALSE_PASS[c.id] <= 0.05


def test_the_findings_table_lists_every_claim_not_asserted(tmp_path):
    from poskernels.page.claims_page import unresolved_markdown

    rows = [
        {"id": "a.resolved", "threshold": "t", "size": 0.0, "false_pass": 0.01, "resolved": True, "finding": ""},
        {"id": "a.weak", "threshold": "t", "size": 0.0, "false_pass": 0.4, "resolved": False, "finding": ""},
        {"id": "a.paper", "threshold": "t", "size": 0.0, "false_pass": 0.0, "resolved": True, "finding": "why so"},
        {"id": "a.unread", "threshold": "t", "size": None, "false_pass": None, "resolved": None, "finding": ""},
    ]
    path = tmp_path / "cal.json"
    path.write_text(json.dumps({"claims": rows, "seeds": 30, "draws": 10, "joint_size": 0.0, "max_false_pass": 0.05}))
    table = unresolved_markdown(path=path)
    assert "`a.weak`" in table and "not resolved by ten seeds" in table
    assert "`a.paper`" in table and "why so" in table
    assert "`a.unread`" in table and "not measured on the pool" in table  # not asserted: no rate to assert on
    assert "`a.resolved`" not in table


def test_the_calibration_keeps_an_earlier_pools_rows_only_for_the_same_statistic():
    import importlib.util

    spec = importlib.util.spec_from_file_location("claim_calibration", ROOT / "examples" / "claim_calibration.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    same, changed, measured = CLAIMS[0], next(c for c in CLAIMS if c.kind == "tie"), CLAIMS[1]
    old = {
        "seeds": 100,
        "first_seeds": [2000, 3000],
        "claims": [
            {"id": same.id, "kind": same.kind, "threshold": same.threshold, "size": 0.0, "false_pass": 0.01},
            {"id": changed.id, "kind": "agree", "threshold": "|mean a - mean b| <= 4 joined SE", "false_pass": 0.89},
            {"id": measured.id, "kind": measured.kind, "threshold": measured.threshold, "false_pass": 0.5},
        ],
    }
    empty = {"size": None, "false_pass": None}
    out = {"claims": [{"id": same.id, **empty}, {"id": changed.id, **empty}, {"id": measured.id, "size": 0.0,
                                                                            "false_pass": 0.02}]}  # fmt: skip
    rows = script.keep_rows(out, old, [same, changed, measured])["claims"]
    assert rows[0]["false_pass"] == 0.01 and rows[0]["kept_from"] == [2000, 3000]  # the same statistic: kept
    assert rows[1]["false_pass"] is None  # "agree" then, "tie" now: the old rate says nothing of the new claim
    assert rows[2]["false_pass"] == 0.02 and "kept_from" not in rows[2]  # measured on this pool: its own
    assert out["kept_seeds"] == 100
