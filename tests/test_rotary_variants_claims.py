"""The rotary family's claims, from the one table of trained claims (:mod:`poskernels.claims.rotary_variants`).

Sun et al. 2022 claim xPos extrapolates where RoPE does not; Barbero et al. 2024 that p-RoPE costs nothing and
changes how the head uses position; partial rotary is what released models ship.  Over the block (ten seeds from
the suite's block, ``conftest.SEEDS``) each claim is a statistic with its threshold in the table; where our single head
disagrees with a paper the table records what we measured, as a finding (p-RoPE's rebound at d = 16).  The
thresholds, and each claim's size and false-pass rate once measured on seed blocks the tests do not run, are in
``poskernels.claims`` and ``src/poskernels/page/claims_calibration.json``.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from claimcheck import assert_claim, assert_reported, claim_id, holds, reported
from conftest import CACHE, SEEDS
from poskernels.claims import by_id, of_suite
from poskernels.claims.rotary_variants import HOLD, NONINFERIOR
from poskernels.encodings import SCHEMES, rotary_variants
from poskernels.experiments.laboratory import run_laboratory
from poskernels.experiments.long_context import run_long_context

#: Every registered scheme of :mod:`poskernels.encodings.rotary_variants`, read from the registry.
FAMILY = tuple(name for name, s in SCHEMES.items() if type(s).__module__ == rotary_variants.__name__)


@pytest.fixture(scope="module")
def numbers():
    tournament = run_laboratory(CACHE, seeds=SEEDS)["tournament"]
    schemes = ("rope", "xpos", "xpos_rescaled", "partial_rotary")
    far = run_long_context(CACHE, seeds=SEEDS, lengths=(32, 512, 100_000), offsets=(64,), schemes=schemes)
    return {"tournament": tournament, "long": far}


@pytest.mark.parametrize("claim", holds("rotary_family"), ids=claim_id)
def test_claim_holds(numbers, claim):
    assert_claim(numbers, claim)


@pytest.mark.parametrize("claim", reported("rotary_family"), ids=claim_id)
def test_claim_is_reported_not_asserted(numbers, claim):
    assert_reported(numbers, claim)


def test_every_scheme_of_the_family_has_its_claims():
    ids = {c.id for c in of_suite("rotary_family")}
    for xpos in ("xpos", "xpos_rescaled"):  # the paper's scale base 512 and the rescaled 16, claims for each
        for n in ("past_the_window", "at_128", "at_256", "at_1e5"):
            assert f"rotary_family.{xpos}_degrades_less_than_rope_{n}" in ids
        assert f"rotary_family.{xpos}_does_not_rebound" in ids
    named = ("xpos_does_not_rebound", "p_rope_loses_nothing_inside_the_window", "p_rope_rebound_agrees_with_ropes",
             "partial_rotary_holds_at_256", "partial_rotary_falls_at_512", "partial_rotary_falls_at_1e5")  # fmt: skip
    assert {f"rotary_family.{c}" for c in named} <= ids
    papers = ("Sun et al. 2022", "Barbero et al. 2024", "GPT-NeoX")
    assert all(c.where.startswith(papers) for c in of_suite("rotary_family"))


def test_every_rotary_head_reports_its_rebound(numbers):
    for key in ("rebound_height", "window_fall"):
        values = numbers["tournament"][key]
        trained = numbers["tournament"]["per_seed"]
        assert set(values) == {name for name, s in SCHEMES.items() if s.rotary and name in trained}
        assert {"rope", *FAMILY} <= set(values)
        assert all(len(v) == len(numbers["tournament"]["seeds"]) and np.all(np.isfinite(v)) for v in values.values())


def test_the_claims_fail_on_numbers_in_which_they_are_false(numbers):
    def moved(section_of, scheme: str, n: str, drop: float) -> dict:
        # the session's numbers with the scheme's accuracy at n set to its accuracy at 32 less `drop`
        d = copy.deepcopy(numbers)
        table = section_of(d)[scheme]
        table[n] = list(np.asarray(table["32"], dtype=float) - drop)
        return d

    tournament = lambda d: d["tournament"]["per_seed"]  # noqa: E731
    long = lambda d: d["long"]["length"]["per_seed"]  # noqa: E731
    rope_drop = lambda d, n: float(np.mean(np.asarray(d["32"], float) - np.asarray(d[n], float)))  # noqa: E731
    for xpos in ("xpos", "xpos_rescaled"):
        for n in ("128", "256"):  # xPos dropping as far as RoPE does
            d = moved(tournament, xpos, n, rope_drop(tournament(numbers)["rope"], n))
            assert by_id(f"rotary_family.{xpos}_degrades_less_than_rope_at_{n}").check(d).passed is False
        d = copy.deepcopy(numbers)
        table = tournament(d)[xpos]
        for n in ("64", "128", "256"):  # ... at every length past the window
            table[n] = list(np.asarray(table["32"], dtype=float) - rope_drop(tournament(numbers)["rope"], n))
        assert by_id(f"rotary_family.{xpos}_degrades_less_than_rope_past_the_window").check(d).passed is False
        d = moved(long, xpos, "100000", rope_drop(long(numbers)["rope"], "100000"))
        assert by_id(f"rotary_family.{xpos}_degrades_less_than_rope_at_1e5").check(d).passed is False
    d = moved(tournament, "p_rope", "32", 0.0)
    d["tournament"]["per_seed"]["p_rope"]["32"] = list(np.asarray(tournament(d)["rope"]["32"]) - 2 * NONINFERIOR)
    assert by_id("rotary_family.p_rope_loses_nothing_inside_the_window").check(d).passed is False
    d = moved(tournament, "partial_rotary", "256", 2 * HOLD)
    assert by_id("rotary_family.partial_rotary_holds_at_256").check(d).passed is False
    for n, label in (("512", "512"), ("100000", "1e5")):  # partial rotary holding where it falls
        d = moved(long, "partial_rotary", n, 0.0)
        assert by_id(f"rotary_family.partial_rotary_falls_at_{label}").check(d).passed is False
    d = moved(tournament, "p_rope", "256", 0.0)
    assert by_id("rotary_family.p_rope_falls_at_256").check(d).passed is False
    d = copy.deepcopy(numbers)  # a p-RoPE rebound far above RoPE's, then one that never climbs back
    h = d["tournament"]["rebound_height"]
    h["p_rope"] = list(np.asarray(h["rope"], float) + 10 * (np.std(h["rope"]) + 1.0))
    assert by_id("rotary_family.p_rope_rebound_agrees_with_ropes").check(d).passed is False
    h["p_rope"] = list(-np.abs(np.asarray(h["rope"], float)) - 1.0)
    assert by_id("rotary_family.p_rope_still_rebounds").check(d).passed is False
    for xpos in ("xpos", "xpos_rescaled"):
        h[xpos] = h["rope"]  # xPos rebounding as RoPE does (its fall across the window its own)
        d["tournament"]["window_fall"][xpos] = d["tournament"]["window_fall"]["rope"]
        assert by_id(f"rotary_family.{xpos}_does_not_rebound").check(d).passed is False


def test_the_threshold_blocks_refuse_seeds_the_tests_run(capsys):
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "rotary_family_blocks.py"
    spec = importlib.util.spec_from_file_location("rotary_family_blocks", path)
    blocks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(blocks)
    assert blocks.main(["5000", "995"]) == 2  # 995..1004 holds seeds of the block 1000 the tests run
    assert "hold seeds the tests run" in capsys.readouterr().err
