"""Page sections def3, thm3, prop4, thm5: numbers.json keys, and the article's printed values through ``compute``.

The oracle and property tests of the functions behind these numbers are in tests/test_alibi.py,
test_rope.py, test_decay.py and test_census.py; here every figure of these sections that the article
prints is compared at the precision it prints it, as it reaches numbers.json.
"""

from __future__ import annotations

import json

import pytest

import poskernels.page as page
from conftest import FIRST_SEED
from poskernels.page.registry import Context

KEYS = ("def3", "thm3", "prop4", "thm5")


@pytest.fixture(scope="module")
def numbers():
    ctx = Context(first_seed=FIRST_SEED)
    return {s.key: s.compute(ctx) for s in page.SECTIONS if s.key in KEYS}


def _sig(x: float, digits: int = 3) -> float:
    return float(f"{x:.{digits - 1}e}")


def test_sections_are_registered_in_article_order():
    keys = [s.key for s in page.SECTIONS]
    assert all(k in keys for k in KEYS)
    assert [keys.index(k) for k in KEYS] == sorted(keys.index(k) for k in KEYS)
    if "thm2" in keys:  # Definition 3 follows Theorem 2 in the article
        assert keys.index("thm2") < keys.index("def3")
    assert not any(s.trained for s in page.SECTIONS if s.key in KEYS)


def test_every_design_key_is_there_and_json_ready(numbers):
    # ARCHITECTURE.md: def3.t5_last_bucket_first_offset, def3.t5_log_reach; thm3.alibi_tail_bound[D] for D in
    # 40, 60, 80; prop4.envelope_octave_mean[start] for 1, 2, 4, ..., 2048; thm5.wavelengths, full_turn_planes,
    # ntk_factors, yarn_factors, chen_ratio[d] for 16, 128, chen_counterexample.error / .stated / .corrected
    assert type(numbers["def3"]["t5_last_bucket_first_offset"]) is int
    assert type(numbers["def3"]["t5_log_reach"]) is float
    assert set(numbers["thm3"]["alibi_tail_bound"]) == {"40", "60", "80"}
    assert list(numbers["prop4"]["envelope_octave_mean"]) == [str(2**k) for k in range(12)]
    thm5 = numbers["thm5"]
    for key in ("wavelengths", "ntk_factors", "yarn_factors"):
        assert len(thm5[key]) == 8 and all(type(x) is float for x in thm5[key])
    assert type(thm5["full_turn_planes"]) is int
    assert set(thm5["chen_ratio"]) == {"16", "128"}
    assert {"error", "stated", "corrected"} <= set(thm5["chen_counterexample"])
    assert json.loads(json.dumps(numbers)) == numbers


def test_def3_snapshot(numbers):
    # article, after Definition 3: "the last of which holds every offset from 113 on (the logarithmic map reaches it
    # at 16 * 8^(15/16) ~ 112.4, not at 128)"
    assert numbers["def3"]["t5_last_bucket_first_offset"] == 113
    assert round(numbers["def3"]["t5_log_reach"], 1) == 112.4


def test_thm3_snapshot(numbers):
    # article, after Theorem 3: "With W = 20 and s = 1/2 it is 2.54 at D = 40, then 1.15 x 10^-4 at 60 and
    # 5.24 x 10^-9 at 80."
    bound = numbers["thm3"]["alibi_tail_bound"]
    assert round(bound["40"], 2) == 2.54
    assert _sig(bound["60"]) == 1.15e-4
    assert _sig(bound["80"]) == 5.24e-9


def test_prop4_snapshot(numbers):
    # article, after Proposition 4: "At d = 128 its mean over each octave of Delta falls from 2018 at Delta = 1 to 312
    # over offsets 2048 to 4095, or from 31.5 to 4.9 per plane"
    means = numbers["prop4"]["envelope_octave_mean"]
    assert numbers["prop4"]["d"] == 128
    assert round(means["1"]) == 2018 and round(means["2048"]) == 312
    assert round(means["1"] / 64, 1) == 31.5 and round(means["2048"] / 64, 1) == 4.9


def test_thm5_snapshot(numbers):
    thm5 = numbers["thm5"]
    # article, after Theorem 5: "the wavelengths are 6.3, 19.9, 62.8, 198.7, 628.3, 1987, 6283, and 19869, so two
    # planes of eight complete a turn"
    lam = thm5["wavelengths"]
    assert [round(x, 1) for x in lam[:5]] == [6.3, 19.9, 62.8, 198.7, 628.3]
    assert [round(x) for x in lam[5:]] == [1987, 6283, 19869]
    assert thm5["full_turn_planes"] == 2
    # "At kappa = 4 its per-plane factors run 1, 0.820, 0.673, 0.552, 0.453, 0.371, 0.305, and 0.250."
    assert [round(x, 3) for x in thm5["ntk_factors"]] == [1.0, 0.820, 0.673, 0.552, 0.453, 0.371, 0.305, 0.250]
    # "YaRN ... its factors are 0.349, 0.265, then 0.25 in every other plane."
    assert [round(x, 3) for x in thm5["yarn_factors"][:2]] == [0.349, 0.265]
    assert [round(x, 2) for x in thm5["yarn_factors"][2:]] == [0.25] * 6
    # "It is 2.56 times too small at d = 16 and 1.15 times at d = 128."
    assert round(thm5["chen_ratio"]["16"], 2) == 2.56 and round(thm5["chen_ratio"]["128"], 2) == 1.15
    # "the interpolation error at d = 128 is 0.459, while the stated bound is 0.434 and the corrected one is 0.500"
    ce = thm5["chen_counterexample"]
    assert (round(ce["error"], 3), round(ce["stated"], 3), round(ce["corrected"], 3)) == (0.459, 0.434, 0.500)


def _row(text: str, label: str) -> list[float]:
    """The numbers of the one table row whose first cell is ``label``."""
    rows = [line.split()[1:] for line in text.splitlines() if line.split()[:1] == [label]]
    assert len(rows) == 1, (label, text)
    return [float(x) for x in rows[0]]


def test_render_prints_the_tables(numbers):
    by_key = {s.key: s for s in page.SECTIONS if s.key in KEYS}
    text = {k: by_key[k].render(numbers[k]) for k in KEYS}
    assert "113" in text["def3"] and "112.4" in text["def3"]
    # the article's figures, read back from the rendered rows at the precision it prints them
    # (Theorem 3: "2.54 at D = 40, then 1.15 x 10^-4 at 60 and 5.24 x 10^-9 at 80")
    assert round(_row(text["thm3"], "40")[0], 2) == 2.54
    assert _sig(_row(text["thm3"], "60")[0]) == 1.15e-4 and _sig(_row(text["thm3"], "80")[0]) == 5.24e-9
    # (Proposition 4: "falls from 2018 at Delta = 1 to 312 over offsets 2048 to 4095")
    assert round(_row(text["prop4"], "1")[0]) == 2018 and round(_row(text["prop4"], "2048-4095")[0]) == 312
    assert "0.820" in text["thm5"] and "0.349" in text["thm5"] and "2 of 8 planes" in text["thm5"]
    for k in KEYS:  # aligned tables: a header rule of dashes under every table
        assert "---" in text[k]
