"""Fidelity on the real trained heads: the tournament, its re-reads and its diagnostics.

The heads are the article's run (1,500 Adam steps at length 32, seeds 0-2, plus RoPE over ten seeds),
trained once into the repository's cache (``.cache/poskernels``, the same one ``poskernels reproduce``
fills) and read once per session.  Thresholds are the issue's; the sampling error of an accuracy on
the 2,000 test sequences is ``sqrt(p (1 - p) / 2000)``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from poskernels.experiments.laboratory import run_laboratory
from poskernels.experiments.tournament import SEEDS, TEST_COUNT, TEST_LENGTHS, heldout
from poskernels.theory.counting import bag_reader_accuracy

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "poskernels"
LONG = [str(n) for n in TEST_LENGTHS if n > 32]


@pytest.fixture(scope="session")
def lab():
    return run_laboratory(CACHE)


def _se(p: float) -> float:
    return math.sqrt(p * (1.0 - p) / TEST_COUNT)


def test_no_position_heads_sit_at_the_exact_bag_reader(lab):
    # Proposition 1 (ii): a head without positions reads a bag; its best reader is exact by counting
    acc = lab["tournament"]["accuracy"]["nope"]
    same_tests = lab["tournament"]["bag_reader_heldout"]
    for n in TEST_LENGTHS:
        p = bag_reader_accuracy(n)
        assert abs(acc[str(n)] - p) <= 3 * _se(p), (n, acc[str(n)], p)
        # paired with the bag reader on the very same test sequences, the gap is smaller still
        assert abs(acc[str(n)] - same_tests[str(n)]) <= 2 * _se(p), (n, acc[str(n)], same_tests[str(n)])


def test_every_other_scheme_reads_the_window(lab):
    acc = lab["tournament"]["accuracy"]
    for scheme in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        assert acc[scheme]["32"] >= 0.98, scheme


def test_the_learned_table_has_no_reading_past_its_length(lab):
    assert all(lab["tournament"]["accuracy"]["learned"][n] is None for n in LONG)


def test_sinusoidal_code_collapses_past_the_window(lab):
    acc = lab["tournament"]["accuracy"]["sinusoidal"]
    assert all(acc[n] <= 0.30 for n in LONG), acc


def test_alibi_holds(lab):
    assert lab["tournament"]["accuracy"]["alibi"]["256"] >= 0.95


def test_rope_falls_with_length_and_ends_below_alibi(lab):
    acc = lab["tournament"]["accuracy"]
    rope = [acc["rope"][str(n)] for n in TEST_LENGTHS]
    assert all(a > b for a, b in zip(rope, rope[1:])), rope
    assert acc["rope"]["256"] < acc["alibi"]["256"]
    # the same holds for each of the ten seeds of the spread
    for per_seed in zip(*(lab["tournament"]["rope_spread"]["per_seed"][str(n)] for n in TEST_LENGTHS)):
        assert per_seed[0] > per_seed[-1]


def test_interpolated_and_ntk_rope_reach_past_the_window(lab):
    acc = lab["rescaled"]["accuracy"]
    assert acc["rope_pi"]["256"] >= 0.85 and acc["rope_ntk"]["256"] >= 0.85
    assert acc["rope"] == {n: lab["tournament"]["accuracy"]["rope"][n] for n in LONG}  # the same heads and tests


def test_rope_rebound(lab):
    for seed, r in lab["rebound"].items():
        assert abs(r["first_trough"][0] - 31) <= 3, (seed, r["first_trough"])  # at the window's edge
        assert r["peak"][0] > 150, (seed, r["peak"])  # and it rises again far past it
        assert r["deepest"][1] < r["first_trough"][1] < r["score_r1"]
        assert r["peak"][1] > r["score_r31"]  # a far key outscores one at the window's edge
        assert r["top_plane"] == 3  # the article: the largest amplitude in plane 3


def test_sinusoidal_heads_stay_as_far_from_relative_as_random_matrices(lab):
    # Theorem 2: delta of a random 16 x 16 matrix is about sqrt(1 - 1/16) = 0.968; training barely moves it
    d = lab["thm2"]["sinusoidal_defect"]
    assert len(d["init"]) == len(d["trained"]) == len(SEEDS)
    for before, after in zip(d["init"], d["trained"]):
        assert abs(before - 0.968) < 0.03 and abs(after - 0.968) < 0.03 and abs(after - before) < 0.03


def test_projecting_one_term_does_not_rescue_the_added_code(lab):
    sin = lab["sinusoidal"]
    assert all(sin["projected"][n] <= 0.30 for n in LONG)
    assert sin["shifted"]["64"] > 2 * lab["tournament"]["accuracy"]["sinusoidal"]["64"]  # the shift helps at 64
    assert sin["shifted"]["256"] < sin["shifted"]["64"]  # and fades where older keys land on unseen positions
    assert all(0.8 < r < 1.25 for r in sin["spread_ratio"])  # the cross term separates keys as strongly


def test_bias_kernels_predict_what_t5_and_shaw_do_past_the_window(lab):
    k = lab["tournament"]["offset_kernel"]
    # T5: buckets that offsets past the window fall into were never trained, their bias stays at its initial 0
    assert k["t5"]["48"] == k["t5"]["255"] == 0.0 and k["t5"]["31"] < 0.0
    # Shaw: every offset from the clip K = 31 on shares one trained vector, a constant score
    assert k["shaw"]["31"] == k["shaw"]["64"] == k["shaw"]["255"]
    acc = lab["tournament"]["accuracy"]
    assert acc["shaw"]["256"] > acc["t5"]["256"]  # a flat tail orders nothing, a zero tail pulls far keys up


def test_one_set_of_test_sequences_for_every_scheme():
    x, y = heldout(128)
    assert np.array_equal(x, heldout(128)[0]) and not x.flags.writeable
    assert x.shape == (TEST_COUNT, 128) and (x[:, -1] == 16).all()


def test_a_damaged_result_file_is_reported_and_recomputed(lab, tmp_path):
    import shutil

    from poskernels.experiments import laboratory

    shutil.copytree(CACHE / "heads", tmp_path / "heads")  # the trained heads, not the result
    source, target = laboratory.result_path(CACHE), laboratory.result_path(tmp_path)
    assert source.exists(), "the session fixture wrote the result"
    target.parent.mkdir()
    target.write_text(source.read_text()[:100])  # truncated
    laboratory._MEMO.clear()
    messages = []
    again = run_laboratory(tmp_path, log=messages.append)
    assert any("[cache] discarding" in m for m in messages)
    assert not any("to train" in m or "step" in m for m in messages)  # every head came from the cache
    assert again["tournament"]["per_seed"] == lab["tournament"]["per_seed"]
    assert again["rebound"] == lab["rebound"]
