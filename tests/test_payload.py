"""The laboratory's payload: the shipped reference agrees with viz_payload(), and what it carries is right.

How the comparison is made: ``viz_payload()`` with no argument computes the sections the payload reads
(``PAYLOAD_KEYS``) through the page, with the repository's default cache (``.cache/poskernels``, the one
``poskernels reproduce`` uses) and the seed block of ``$POSKERNELS_FIRST_SEED``.  The deterministic parts
(``DETERMINISTIC_PARTS``) must equal the shipped reference exactly; the trained accuracies must agree within
``K = 3`` joined standard errors of the two seed blocks (the shipped one is seeds 0-9, made on another machine);
the parts drawn from one seed's weights must have the reference's shape.  ``reproduce`` never rewrites the
reference; ``make reference-payload`` copies a full run's ``results/payload.json`` in.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CACHE, FIRST_SEED
from poskernels import page
from poskernels.errors import PosKernelsError
from poskernels.lab import PAYLOAD_PATH, common, payload, viz_payload, write_payload
from poskernels.lab.trained import filing_case
from seedstats import FLOOR, leaves, within

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(PAYLOAD_PATH.read_text())


@pytest.fixture(scope="module")
def untrained() -> dict:
    return viz_payload({})


@pytest.fixture(scope="module")
def fresh() -> dict:
    return viz_payload(None, cache_dir=CACHE, first_seed=FIRST_SEED)


def test_deterministic_parts_equal_the_shipped_payload_exactly(fresh, committed):
    for key in ("version", "precision", "figures", "titles", *payload.DETERMINISTIC_PARTS):
        assert fresh[key] == committed[key], f"lab/static/payload.json differs in {key!r}: `make reference-payload`"


def _shape(node):
    """The structure of a JSON tree: keys, list lengths and value kinds, no values."""
    if isinstance(node, dict):  # keys that are seeds count, not their numbers
        shape = [("seed" if k.isdigit() else k, _shape(v)) for k, v in node.items() if k not in ("caption", "x", "y")]
        return sorted(shape, key=repr)
    if isinstance(node, list):
        return [len(node)] + ([_shape(node[0])] if node and isinstance(node[0], dict | list) else [])
    if isinstance(node, str) and node.isdigit():
        return "seed"
    return type(node).__name__ if not isinstance(node, int | float) or isinstance(node, bool) else "number"


def test_trained_parts_agree_with_the_shipped_payload_within_seed_error(fresh, committed):
    assert fresh["sections"] == committed["sections"]
    a, b = fresh["readouts"], committed["readouts"]
    half = 0.5 * 10.0 ** -payload.PRECISION["accuracy"]  # each side was rounded to the page's decimals
    for table, errors in (("accuracy", "stderr"), ("rescaled", "rescaled_stderr")):
        assert a[table].keys() == b[table].keys()
        for path, mean, se in leaves(a[table], a[errors]):
            ref = b[table]
            ref_se = b[errors]
            for key in path:
                ref, ref_se = ref[key], ref_se[key]
            assert within(mean, se, ref, ref_se, floor=FLOOR + 2 * half), (table, path, mean, se, ref, ref_se)
    for key in ("drift", "scores", "readouts", "filing"):  # one seed's curves and answers: the same views
        assert _shape(fresh[key]) == _shape(committed[key]) or key == "readouts", key
    assert len(fresh["readouts"]["seeds"]) == len(committed["readouts"]["seeds"]) >= 10


def test_payload_is_json_normal(untrained, committed):
    for p in (untrained, committed):
        text = json.dumps(p, allow_nan=False)
        assert json.loads(text) == p


def test_every_float_is_rounded_to_the_page_precision(committed):
    # every float carries at most the decimals of its kind (frequencies: 6 significant digits)
    def floats(node):
        if isinstance(node, dict):
            for v in node.values():
                yield from floats(v)
        elif isinstance(node, list):
            for v in node:
                yield from floats(v)
        elif isinstance(node, float):
            yield node

    worst = max(len(repr(x).split(".")[-1]) if "e" not in repr(x) else 99 for x in floats(committed))
    assert worst <= 6 + 3  # the finest is omega_7 = 0.000316228 (6 significant digits)
    clocks = committed["clocks"]
    assert all(len(repr(v).split(".")[-1]) <= payload.PRECISION["kernel"] for v in clocks["readout"])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, payload.SLIDER_MAX), st.integers(0, payload.SLIDER_MAX))
def test_clock_readout_is_the_inner_product_of_two_codes(m, n):
    # Oracle: <p(m), p(n)> / (d/2) summed in 40-digit arithmetic, for the (m, n) the sliders can take;
    # the page looks the readout up by |n - m| (Theorem 1 (i)), which this checks at every pair.
    p = payload._clocks(payload.Sources({}, None))
    d, b = p["d"], mpmath.mpf(p["b"])
    with mpmath.workdps(40):
        exact = sum(
            mpmath.cos(m * b ** (-mpmath.mpf(2 * j) / d)) * mpmath.cos(n * b ** (-mpmath.mpf(2 * j) / d))
            + mpmath.sin(m * b ** (-mpmath.mpf(2 * j) / d)) * mpmath.sin(n * b ** (-mpmath.mpf(2 * j) / d))
            for j in range(d // 2)
        ) / (d // 2)
    assert abs(p["readout"][abs(n - m)] - float(exact)) <= 0.5e-3 + 1e-12


def test_figure_a_readout_matches_the_article(untrained):
    # Article, Figure A: m = 3, n = 10, readout 0.737
    c = untrained["clocks"]
    assert (c["positions"]["m"], c["positions"]["n"]) == (3, 10)
    assert c["readout"][10 - 3] == 0.737


def test_ruler_view_holds_the_article_kernel_table(untrained):
    # Article, Theorem 1 (ii)'s table ("The notebook computes:"), Delta = 1, 4, 16, 64, 256, 1024
    r = untrained["ruler"]
    at = [r["offsets"].index(x) for x in (1, 4, 16, 64, 256, 1024)]
    table = {
        "64": [0.966, 0.748, 0.605, 0.435, 0.354, 0.263],
        "512": [0.973, 0.768, 0.631, 0.485, 0.313, 0.186],
        "8192": [0.974, 0.771, 0.635, 0.487, 0.335, 0.185],
    }
    for d, row in table.items():
        assert [r["kernel"][d][i] for i in at] == row
    assert [r["limit"][i] for i in at] == [0.974, 0.772, 0.635, 0.487, 0.335, 0.185]
    assert [r["ruler"][i] for i in at] == [0.937, 0.787, 0.636, 0.486, 0.335, 0.185]
    assert r["octave_cost"] == 0.075  # "each doubling ... costs the same ln 2 / ln b ~ 0.075"
    # the page draws within the limits the payload gives
    ys = [v for d in r["dims"] for v in r["kernel"][d]] + r["limit"] + r["ruler"]
    assert r["y"]["min"] <= min(ys) and max(ys) <= r["y"]["max"]
    assert r["x"]["log"] and r["x"]["min"] == min(r["offsets"]) and r["x"]["max"] == max(r["offsets"])


def test_census_matches_theorem_5(untrained):
    c = untrained["census"]
    # Article, after Theorem 5: wavelengths at d = 16 (printed to 1 decimal up to 628.3, then to integers)
    printed = [6.3, 19.9, 62.8, 198.7, 628.3, 1987, 6283, 19869]
    assert [round(w, 0 if p == int(p) else 1) for w, p in zip(c["wavelengths"], printed)] == printed
    assert c["full_turn"] == [True, True] + [False] * 6  # "two planes of eight complete a turn"
    # Article: NTK-aware factors at kappa = 4, and YaRN's
    assert c["factors"]["4"]["ntk"] == [1.0, 0.820, 0.673, 0.552, 0.453, 0.371, 0.305, 0.250]
    assert c["factors"]["4"]["yarn"] == [0.349, 0.265] + [0.25] * 6
    for k in c["kappas"]:  # Theorem 5 (ii)/(iii): PI divides every plane by kappa; NTK keeps plane 0, slowest / kappa
        assert c["factors"][k]["pi"] == [round(1 / int(k), 3)] * 8
        assert c["factors"][k]["ntk"][0] == 1.0 and c["factors"][k]["ntk"][-1] == round(1 / int(k), 3)
        assert c["lengths"][k] == int(k) * c["L"]


def test_untrained_payload_marks_trained_parts_absent(untrained):
    for key in ("drift", "scores", "readouts", "filing", "long"):
        assert set(untrained[key]) == {"absent"} and untrained[key]["absent"]
    assert untrained["figures"] == {
        "A": ["clocks", "ruler", "drift"],
        "B": ["scores", "readouts", "census", "filing", "long"],
    }
    assert untrained["sections"] == []


def _article_numbers() -> dict:
    # The article's printed values, shaped as numbers.json holds them (ARCHITECTURE.md), to test the plumbing
    # independently of training: tournament table ("Past the training window"), the re-read table, and
    # seed 0's rebound ("falls from 114.10 at r = 1 to a first trough of 5.91 at r = 34 ... -55.86 at r = 90
    # ... 84.14 at r = 181"; Figure B: "score at r = 31, the window's edge 7.70").
    return {
        "tournament": {
            "accuracy": {
                "nope": {"32": 0.542, "64": 0.367, "128": 0.286, "256": 0.237},
                "sinusoidal": {"32": 0.996, "64": 0.201, "128": 0.134, "256": 0.142},
                "learned": {"32": 0.989, "64": None, "128": None, "256": None},
                "rope": {"32": 1.000, "64": 0.947, "128": 0.872, "256": 0.466},
                "alibi": {"32": 0.999, "64": 0.979, "128": 0.978, "256": 0.978},
            }
        },
        "rescaled": {
            "accuracy": {
                "rope_pi": {"64": 0.998, "128": 0.980, "256": 0.917},
                "rope_ntk": {"64": 0.970, "128": 0.966, "256": 0.977},
                "rope_yarn": {"64": 0.998, "128": 0.979, "256": 0.914},
            }
        },
        "rebound": {
            "0": {
                "score_r1": 114.10,
                "score_r31": 7.70,
                "first_trough": [34, 5.91],
                "deepest": [90, -55.86],
                "peak": [181, 84.14],
            }  # fmt: skip
        },
    }


def test_readouts_carry_the_numbers_and_the_caption_quotes_them():
    p = viz_payload(_article_numbers())
    r = p["readouts"]
    assert [r["accuracy"]["rope"][n] for n in r["lengths"]] == [1.0, 0.947, 0.872, 0.466]
    assert (r["score_r1"], r["score_edge"], r["peak"]) == (114.1, 7.7, [181, 84.14])
    assert [x["key"] for x in r["readers"]] == [
        "nope", "sinusoidal", "learned", "rope", "alibi", "rope_pi", "rope_ntk", "rope_yarn",
    ]  # fmt: skip
    assert r["readers"][5]["label"] == "RoPE + PI"
    assert "84.14 at r = 181" in r["caption"] and "114.10 at r = 1" in r["caption"]
    assert p["sections"] == ["rebound", "rescaled", "tournament"]


def test_filing_case_checks_its_input():
    case = {"tokens": ["Acme", "grew", "Bolt"], "marked": [True, False, True], "companies": ["Acme", "Bolt"],
            "truth": [None, 0, 1], "answers": {"rope": {"0": [None, "Acme", 0]}}}  # fmt: skip
    out = filing_case(case)
    assert out["company"] == [0, None, 1] and out["answers"]["rope"]["0"] == [None, 0, 0]
    with pytest.raises(PosKernelsError, match="one entry per token"):
        filing_case({**case, "truth": [None, 0]})
    # a head may answer a symbol that labels no company of this filing (the cue task has 8 symbols)
    odd = filing_case({**case, "answers": {"rope": {"0": [None, 5, 0]}}})
    assert odd["answers"]["rope"]["0"][1] == 5 and odd["labels"][5] == "symbol 5 (no company here)"
    assert odd["labels"][:2] == ["Acme", "Bolt"] and len(odd["labels"]) == 8
    with pytest.raises(PosKernelsError, match="nor a symbol 0..7"):
        filing_case({**case, "answers": {"rope": {"0": [None, 8, 0]}}})
    with pytest.raises(PosKernelsError, match="not in the form") as err:
        filing_case({k: v for k, v in case.items() if k != "companies"})
    assert "'companies'" in str(err.value) and "case_study" in str(err.value)  # what lacks, and who writes it


def test_viz_payload_rejects_other_sources():
    with pytest.raises(PosKernelsError, match="got list"):
        viz_payload([1, 2])


def test_write_payload_never_touches_the_package_copy(tmp_path, monkeypatch):
    target = tmp_path / "pkg" / "payload.json"
    monkeypatch.setattr(payload, "PAYLOAD_PATH", target)
    monkeypatch.setattr(page, "SECTIONS", [page.Section("tournament", "t", lambda c: {}, str)])
    ctx = page.Context(cache_dir=tmp_path / "cache", log=lambda m: None, first_seed=FIRST_SEED)
    for numbers in ({}, {"tournament": {}}):  # a partial run, then a full one
        ctx.numbers = numbers
        assert write_payload(ctx, tmp_path / "out") == [tmp_path / "out" / "payload.json"]
        assert not target.exists()
        assert json.loads((tmp_path / "out/payload.json").read_text()) == viz_payload(ctx)


def test_axis_limits_contain_the_data():
    ax = common.axis([[0.1, None, -3.2], [7.9]], 2.0, "x")
    assert (ax["min"], ax["max"], ax["ticks"]) == (-4.0, 8.0, [-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0])
    assert math.isclose(common.sig(np.float64(0.000316227766)), 0.000316228)


def test_ruler_dots_are_the_page_sections_table_on_the_curves():
    # the dots (numbers.json thm1, computed by the page section) lie on the dense curves (theory.kernel)
    numbers = page.assemble(page.Context(log=lambda m: None, first_seed=FIRST_SEED), keys=["thm1"])
    r = viz_payload(numbers)["ruler"]
    assert "Dots" in r["caption"]
    for i, x in enumerate(r["table"]["offsets"]):
        k = r["offsets"].index(x)
        assert r["table"]["limit"][i] == r["limit"][k]
        assert all(r["table"]["kernel"][d][i] == r["kernel"][d][k] for d in r["dims"])
