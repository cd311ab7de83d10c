"""Page sections prop1, thm1, thm2 (deterministic part): numbers.json keys, and the article's printed values.

These are the snapshot tests of Proposition 1, Theorem 1 and Theorem 2: each article figure below is
compared at the precision the article prints it, and each comes through the section's ``compute``, which
calls the theory functions (tests/test_counting.py, test_kernel.py and test_commutant.py hold the oracle
and property tests of those functions).
"""

from __future__ import annotations

import json

import pytest

import poskernels.page as page
from conftest import FIRST_SEED
from poskernels.page import clocks, order
from poskernels.page.registry import Context


@pytest.fixture(scope="module")
def numbers():
    ctx = Context(first_seed=FIRST_SEED)
    return {s.key: s.compute(ctx) for s in page.SECTIONS if s.key in ("prop1", "thm1", "thm2") and not s.trained}


def _sig(x: float, digits: int = 3) -> float:
    return float(f"{x:.{digits - 1}e}")


def test_sections_are_registered_in_article_order():
    keys = [s.key for s in page.SECTIONS]
    assert keys.index("prop1") < keys.index("thm1") < keys.index("thm2")


def test_every_design_key_is_there_and_json_ready(numbers):
    # ARCHITECTURE.md: prop1.bag_reader[n]; thm1.kernel[d][delta], limit, ruler, octave_cost,
    # max_column_cosine[W]; thm2.random_defect, numerical_rank_64, condition_number[W]
    offsets = {"1", "4", "16", "64", "256", "1024"}
    assert set(numbers["prop1"]["bag_reader"]) == {"32", "64", "128", "256"}
    thm1 = numbers["thm1"]
    assert set(thm1["kernel"]) == {"64", "512", "8192"}
    assert all(set(row) == offsets for row in thm1["kernel"].values())
    assert set(thm1["limit"]) == offsets and set(thm1["ruler"]) == offsets
    assert set(thm1["max_column_cosine"]) == {"64", "4096"}
    assert type(thm1["octave_cost"]) is float
    thm2 = numbers["thm2"]
    assert type(thm2["random_defect"]) is float and type(thm2["numerical_rank_64"]) is int
    assert set(thm2["condition_number"]) == {"16", "64", "256", "4096"}
    assert all(type(v) is float for v in thm2["condition_number"].values())
    assert json.loads(json.dumps(numbers)) == numbers


def test_prop1_snapshot(numbers):
    # article, "Order, and how a mask leaks it": the best bag reader is 0.547 at length 32 and 0.234 at 256
    bag = numbers["prop1"]["bag_reader"]
    assert round(bag["32"], 3) == 0.547
    assert round(bag["256"], 3) == 0.234


# article, after Theorem 1: the table of (2/d) kappa_d(Delta) for Delta = 1, 4, 16, 64, 256, 1024
KERNEL_TABLE = {
    "64": [0.966, 0.748, 0.605, 0.435, 0.354, 0.263],
    "512": [0.973, 0.768, 0.631, 0.485, 0.313, 0.186],
    "8192": [0.974, 0.771, 0.635, 0.487, 0.335, 0.185],
    "limit": [0.974, 0.772, 0.635, 0.487, 0.335, 0.185],
    "ruler": [0.937, 0.787, 0.636, 0.486, 0.335, 0.185],
}


def test_thm1_snapshot(numbers):
    thm1 = numbers["thm1"]
    offsets = ["1", "4", "16", "64", "256", "1024"]
    got = {d: [round(thm1["kernel"][d][x], 3) for x in offsets] for d in ("64", "512", "8192")}
    got["limit"] = [round(thm1["limit"][x], 3) for x in offsets]
    got["ruler"] = [round(thm1["ruler"][x], 3) for x in offsets]
    assert got == KERNEL_TABLE
    # "each doubling of the distance costs the same ln 2/ln b = 0.075 of similarity"
    assert round(thm1["octave_cost"], 3) == 0.075
    # "at d = 16 the largest cosine between two columns exceeds 0.999 over 64 positions and is still 0.739 over 4096"
    assert thm1["max_column_cosine"]["64"] > 0.999
    assert round(thm1["max_column_cosine"]["4096"], 3) == 0.739


def test_thm2_snapshot(numbers):
    thm2 = numbers["thm2"]
    # after Theorem 2: "at d = 16 a random matrix has delta = 0.968"; "numerical rank 14" over 64 positions
    assert round(thm2["random_defect"], 3) == 0.968
    assert thm2["numerical_rank_64"] == 14
    # "its exact condition number falls from 3.69e29 over 16 positions, through 7.14e18 over 64, to 1.24e11
    # over 256 and 17.7 over 4096"
    cond = {W: _sig(v) for W, v in thm2["condition_number"].items()}
    assert cond == {"16": 3.69e29, "64": 7.14e18, "256": 1.24e11, "4096": 17.7}


def test_render_prints_the_tables(numbers):
    prop1 = order._prop1_render(numbers["prop1"])
    thm1 = clocks._thm1_render(numbers["thm1"])
    thm2 = clocks._thm2_render(numbers["thm2"])
    assert "0.547" in prop1 and "0.234" in prop1
    assert "limit I_b(Delta)" in thm1 and "0.937" in thm1 and "0.739" in thm1 and "0.075" in thm1
    assert "3.69e+29" in thm2 and "7.14e+18" in thm2 and "17.7" in thm2
    assert "float64" in thm2


def test_exact_condition_numbers_are_cached_and_a_corrupt_entry_is_rebuilt(tmp_path):
    ctx = Context(cache_dir=tmp_path, log=lambda m: None, first_seed=FIRST_SEED)
    first = clocks._thm2(ctx)["condition_number"]
    (path,) = (tmp_path / "results").glob("condition-*.json")
    blob = json.loads(path.read_text())
    blob["data"]["16"] = 1.0  # an altered number: its digest no longer matches
    path.write_text(json.dumps(blob))
    assert clocks._thm2(ctx)["condition_number"] == first  # recomputed in 200 digits, not trusted
    assert json.loads(path.read_text())["data"] == first  # and rewritten


def test_bag_reader_is_cached_bit_for_bit_and_a_corrupt_entry_is_rebuilt(tmp_path, monkeypatch):
    ctx = Context(cache_dir=tmp_path, log=lambda m: None, first_seed=FIRST_SEED)
    computed = order._prop1(Context(cache_dir=None, first_seed=FIRST_SEED))  # no cache: the counting itself
    assert order._prop1(ctx) == computed  # built and saved
    (path,) = (tmp_path / "results").glob("bag-reader-*.json")

    def counted(n):
        raise AssertionError("the bag reader was computed again although it was cached")

    monkeypatch.setattr(order, "bag_reader_accuracy", counted)
    assert order._prop1(ctx) == computed  # read back: every float the same double
    blob = json.loads(path.read_text())
    blob["data"]["32"] = 0.5  # an altered number: its digest no longer matches
    path.write_text(json.dumps(blob))
    monkeypatch.undo()
    assert order._prop1(ctx) == computed  # recomputed, not trusted
    assert json.loads(path.read_text())["data"] == computed["bag_reader"]  # and rewritten


def test_cosine_integral_limit_is_cached_bit_for_bit(tmp_path, monkeypatch):
    ctx = Context(cache_dir=tmp_path, log=lambda m: None, first_seed=FIRST_SEED)
    computed = clocks._thm1(Context(cache_dir=None, first_seed=FIRST_SEED))["limit"]
    assert clocks._thm1(ctx)["limit"] == computed
    (path,) = (tmp_path / "results").glob("cosine-integral-*.json")
    monkeypatch.setattr(clocks, "I_b", lambda offsets: 1 / 0)  # cached: I_b (and scipy.special) is not called
    assert clocks._thm1(ctx)["limit"] == computed
