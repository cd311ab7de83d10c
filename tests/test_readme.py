"""The tables of results in the README and the documentation are rendered from numbers.json, and that numbers.json
is the code's.

Two links, each checked: (1) every marked region of README.md and of the documentation's pages
(``poskernels.page.readme.DOCUMENTS``) equals what ``poskernels.page.readme`` renders from
the shipped ``page/reference_numbers.json`` (a full ``poskernels reproduce`` with seeds 0-9), character for
character; (2) that file is what the code computes: its deterministic sections exactly, its trained means within
the seeds' error of a fresh run (the repository's cache, the seed block of ``$POSKERNELS_FIRST_SEED``; see
``tests/seedstats.py`` for the margin).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE, FIRST_SEED, SEEDS
from poskernels import page
from poskernels.errors import PosKernelsError
from poskernels.experiments.filings import filings_results
from poskernels.experiments.laboratory import run_laboratory
from poskernels.page import readme
from poskernels.page.window import rebound_stats
from seedstats import leaves, within

ROOT = Path(__file__).resolve().parents[1]
TRAINED = ("tournament", "rescaled", "rebound", "sinusoidal", "filings")


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(readme.REFERENCE_NUMBERS.read_text())


@pytest.fixture(scope="module")
def fresh() -> dict:
    ctx = page.Context(cache_dir=CACHE, log=lambda m: None, first_seed=FIRST_SEED)
    numbers = page.assemble(ctx, include_trained=False)
    lab = run_laboratory(CACHE, seeds=SEEDS)
    numbers.update({k: lab[k] for k in ("tournament", "rescaled", "rebound", "sinusoidal")})
    numbers["thm2"] = {**numbers["thm2"], **lab["thm2"]}
    numbers["filings"] = filings_results(CACHE, seeds=SEEDS)
    return numbers


def test_every_table_of_the_readme_and_the_docs_is_rendered_from_the_shipped_numbers(reference):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = readme.regions_in(text)
    in_docs = {name for names in readme.DOC_REGIONS.values() for name in names}
    assert set(found) == set(readme.REGIONS) - in_docs, "a region is missing from README.md or has no renderer"


    assert "headline" in found
    rendered = readme.render(reference)
    for name in found:
        assert found[name] == rendered[name], f"README region {name!r} is stale: `make reference-payload`"
    assert readme.rewrite(text, rendered) == text
    for page_path, names in readme.DOC_REGIONS.items():  # the regions rendered into the documentation's pages
        doc = (ROOT / page_path).read_text(encoding="utf-8")
        there = readme.regions_in(doc)
        for name in names:
            assert there.get(name) == rendered[name], f"{page_path}: region {name!r} is stale: `make reference-payload`"
        assert readme.rewrite(doc, rendered, partial=True) == doc


# The shipped file was made on one machine; another CPU (another BLAS kernel, another SIMD libm) rounds a float
# computation differently in its last bits (a Gram matrix's column cosine read 0.7394454509303001 against
# ...3002 on an AMD EPYC).  Deterministic numbers are compared to 1e-12 relative, a billion times tighter than any
# figure the article prints; integers, strings and the structure exactly.
REL = 1e-12


def same_to_rounding(a, b) -> bool:
    """Whether two JSON trees are equal, floats to ``REL`` relative (exact on the machine that made them)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_to_rounding(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_to_rounding(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=REL, abs_tol=0.0)
    return type(a) is type(b) and a == b


def test_same_to_rounding_tells_a_last_bit_from_a_change():
    assert same_to_rounding({"c": [0.7394454509303001, 3]}, {"c": [0.7394454509303002, 3]})
    assert not same_to_rounding({"c": [0.73944545093, 3]}, {"c": [0.73944545094, 3]})
    assert not same_to_rounding({"c": [1.0, 3]}, {"c": [1.0, 4]})
    assert not same_to_rounding({"c": 1}, {"c": 1.0})
    assert not same_to_rounding({"c": 1.0}, {"d": 1.0})


def test_no_other_page_holds_a_generated_region():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    holders = {str(p.relative_to(ROOT)) for p in pages if readme.regions_in(p.read_text(encoding="utf-8"))}
    assert holders == set(readme.DOCUMENTS)


def test_the_headline_is_the_articles_opening_table(reference):
    # the article's opening table: five readers at 32 and 256, RoPE + PI at 32 being the plain RoPE reading
    table = readme.render(reference)["headline"]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and "±" in line]
    assert [r[0].strip("| ") for r in rows] == ["no position", "sinusoidal, added", "RoPE", "RoPE + PI", "ALiBi"]
    assert [r[2].split()[0] for r in rows] == ["0.542", "0.996", "1.000", "1.000", "0.999"]
    assert [r[4].split()[0] for r in rows] == ["0.237", "0.142", "0.466", "0.917", "0.978"]
    t, r = reference["tournament"], reference["rescaled"]
    assert rows[3][1] == rows[2][1] == f"{t['accuracy']['rope']['32']:.3f} ± {t['stderr']['rope']['32']:.3f}"
    assert rows[3][3] == f"{r['accuracy']['rope_pi']['256']:.3f} ± {r['stderr']['rope_pi']['256']:.3f}"


def test_the_shipped_numbers_deterministic_sections_are_the_codes(reference, fresh):
    for key, value in fresh.items():
        if key in TRAINED or key not in reference:
            continue
        if key == "thm2":  # its trained part (sinusoidal_defect) is compared below, its float64 part apart
            apart = ("sinusoidal_defect", "condition_number_float64")
            value = {k: v for k, v in value.items() if k not in apart}
            assert same_to_rounding({k: v for k, v in reference[key].items() if k not in apart}, value)
        else:
            assert same_to_rounding(reference[key], value), key


def test_the_float64_condition_numbers_agree_to_what_float64_can_resolve(reference, fresh):
    """Double precision's own condition number of ``P`` is only good to ``kappa * eps`` relative (the perturbation
    bound of a computed SVD): 1.24e11 agrees to 1e-4 across machines, while past ``1 / eps`` it is rounding noise
    (4.1e19 on one CPU, 9.8e19 on another), of which only "past 1 / eps" is a statement."""
    eps = float(np.finfo(np.float64).eps)
    exact = reference["thm2"]["condition_number"]
    ours, theirs = fresh["thm2"]["condition_number_float64"], reference["thm2"]["condition_number_float64"]
    assert ours.keys() == theirs.keys()
    for W, kappa in ours.items():
        resolved = 10 * exact[W] * eps
        if resolved < 1:
            assert math.isclose(kappa, theirs[W], rel_tol=max(resolved, REL)), W
        else:
            assert min(kappa, theirs[W]) > 0.1 / eps, W


def test_the_shipped_numbers_trained_means_agree_with_a_fresh_run(reference, fresh):
    assert len(reference["tournament"]["seeds"]) == len(fresh["tournament"]["seeds"]) >= 10
    for section in ("tournament", "rescaled", "filings"):
        ref, new = reference[section], fresh[section]
        for path, mean, se in leaves(new["accuracy"], new["stderr"]):
            r, r_se = ref["accuracy"], ref["stderr"]
            for key in path:
                r, r_se = r[key], r_se[key]
            assert within(mean, se, r, r_se), (section, path, mean, se, r, r_se)
    for key in ("projected", "shifted"):
        for n, mean in fresh["sinusoidal"][key].items():
            se, r = fresh["sinusoidal"]["stderr"][key][n], reference["sinusoidal"][key][n]
            assert within(mean, se, r, reference["sinusoidal"]["stderr"][key][n]), (key, n)
    d, rd = fresh["thm2"]["sinusoidal_defect"], reference["thm2"]["sinusoidal_defect"]
    for kind in ("init", "trained"):
        assert within(d["mean"][kind], d["stderr"][kind], rd["mean"][kind], rd["stderr"][kind])
    for on, st in fresh["filings"]["horizon_stats"].items():
        ref = reference["filings"]["horizon_stats"][on]
        for col, floor in (("horizon", 1.0), ("inside_half", 0.005), ("beyond", 0.005)):
            m, se = st["mean"][col], st["stderr"][col]
            assert within(m, se, ref["mean"][col], ref["stderr"][col], floor=floor), (on, col)
    ours, theirs = rebound_stats(fresh["rebound"]), rebound_stats(reference["rebound"])
    for key, mean in ours["mean"].items():  # offsets are whole numbers: a floor of one offset, scores of 1
        assert within(mean, ours["stderr"][key], theirs["mean"][key], theirs["stderr"][key], floor=1.0), key


def test_regions_are_checked(tmp_path):
    with pytest.raises(PosKernelsError, match="no end marker"):
        readme.regions_in("<!-- numbers:x begin -->\n")
    with pytest.raises(PosKernelsError, match="no renderer"):
        readme.rewrite("<!-- numbers:nope begin -->\n<!-- numbers:nope end -->", {"x": ""})
    with pytest.raises(PosKernelsError, match="lacks the trained section"):
        readme.render({"thm1": {}})
    path = tmp_path / "R.md"
    path.write_text("<!-- numbers:tournament begin -->\nold\n<!-- numbers:tournament end -->\n")
    assert readme.main(["--check", str(readme.REFERENCE_NUMBERS), str(path)]) == 1
    assert readme.main([str(readme.REFERENCE_NUMBERS), str(path)]) == 0  # rewritten, then current
    assert readme.main(["--check", str(readme.REFERENCE_NUMBERS), str(path)]) == 0
    assert "± " in path.read_text()
    with pytest.raises(PosKernelsError, match="no renderer"):  # the real renderers refuse unknown regions
        readme.rewrite(path.read_text() + "<!-- numbers:other begin -->\n<!-- numbers:other end -->\n", readme.REGIONS)


def _between(text: str, begin: str, end: str) -> str:
    return text[text.index(begin) + len(begin) : text.index(end)].strip("\n")


def test_the_learning_rate_table_is_rendered_from_the_sweeps_results():
    # examples/lr_sweep_results.csv holds the sweep's per-seed accuracies (exported from its store); the README's
    # table is what examples/lr_criterion.py renders from it, and its best rate is the tournament's default
    import importlib.util

    from poskernels.model.config import preset

    spec = importlib.util.spec_from_file_location("lr_criterion", ROOT / "examples" / "lr_criterion.py")
    lr_criterion = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lr_criterion)
    data = lr_criterion.cells(str(ROOT / "examples" / "lr_sweep_results.csv"))
    text = (ROOT / "docs" / "article" / "window.md").read_text()
    assert _between(text, "<!-- lr-sweep begin -->", "<!-- lr-sweep end -->") == lr_criterion.markdown(data)
    best = min(data, key=lambda lr: lr_criterion.criterion(data[lr])[0])
    assert best == preset("tournament").lr
    assert all(len(v) >= 10 for per_cell in data.values() for v in per_cell.values())  # ten seeds a point
