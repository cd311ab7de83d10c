"""Fidelity on the real trained heads: the tournament, its re-reads and its diagnostics, as statistics over seeds.

The heads are the article's run (1,500 Adam steps at length 32) over the seed block of
:func:`poskernels.seeds.seed_block` (ten seeds from ``$POSKERNELS_FIRST_SEED``, default 0), trained once into the
repository's cache (``.cache/poskernels``, the same one ``poskernels reproduce`` fills) and read once per session.

Every claim about trained heads is a statement about the seed distribution: a mean with a margin of ``K = 3``
standard errors of that mean (the seeds' spread), joined where it matters with the binomial error of the 2,000
test sequences every seed shares, or a share of the seeds, or a median.  No threshold rests on one seed.

Thresholds marked "calibrated" are set so that a fresh block of ten seeds passes with probability >= 0.99, measured
over 80 seeds (blocks 0, 1000, ..., 7000) by ``examples/claim_calibration.py``; its figures are kept in
``examples/claim_calibration.csv`` (pooled rate or mean and SD, and the pass probability, binomial or normal | of
resampled blocks).  Where one seed in ten or twenty trains an outlier head, a mean with a K-SE margin is the wrong
statistic (the outlier moves the mean and inflates the SE): those claims are a median and a share of seeds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from poskernels.experiments.laboratory import run_laboratory
from poskernels.experiments.tournament import TEST_COUNT, TEST_LENGTHS, heldout
from poskernels.page.window import rebound_stats
from poskernels.seeds import DEFAULT_COUNT, seed_block
from poskernels.theory.counting import bag_reader_accuracy

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "poskernels"
LONG = [str(n) for n in TEST_LENGTHS if n > 32]
K = 3.0  # standard errors of margin


@pytest.fixture(scope="session")
def lab():
    return run_laboratory(CACHE)


def _binom(p: float) -> float:
    return math.sqrt(p * (1.0 - p) / TEST_COUNT)


def _stat(lab, section, key, n):
    return lab[section]["accuracy"][key][n], lab[section]["stderr"][key][n]


def _apart(a, b) -> float:
    """How far mean ``a`` lies above mean ``b``, in joined standard errors (both ``(mean, se)``)."""
    return (a[0] - b[0]) / math.hypot(a[1], b[1])


def test_the_seed_block_is_the_environments():
    lab = run_laboratory(CACHE)
    assert lab["tournament"]["seeds"] == list(seed_block()) and len(seed_block()) == DEFAULT_COUNT >= 10
    for scheme, table in lab["tournament"]["per_seed"].items():
        for n, values in table.items():
            assert len(values) == DEFAULT_COUNT, (scheme, n)
            mean, se = _stat(lab, "tournament", scheme, n)
            if mean is not None:
                assert mean == pytest.approx(np.mean(values))
                assert se == pytest.approx(np.std(values, ddof=1) / math.sqrt(len(values)))


def test_no_position_heads_sit_at_the_exact_bag_reader(lab):
    # Proposition 1 (ii): a head without positions reads a bag; its best reader is exact by counting
    same_tests = lab["tournament"]["bag_reader_heldout"]
    for n in map(str, TEST_LENGTHS):
        mean, se = _stat(lab, "tournament", "nope", n)
        p = bag_reader_accuracy(int(n))
        assert abs(mean - p) <= K * math.hypot(se, _binom(p)), (n, mean, se, p)
        # paired with the bag reader on the very same test sequences, only the seeds' spread separates them
        assert abs(mean - same_tests[n]) <= K * se + _binom(p), (n, mean, se, same_tests[n])


def test_every_other_scheme_reads_the_window(lab):
    # calibrated: one ALiBi head in 80 reads 0.952 at 32 and T5's heads 0.984 on average (80 seeds), so ">= 0.97"
    # passed 99.2% / 99.4% of resampled blocks; ">= 0.96" passes 99.98% / 100% (every other scheme 100%)
    for scheme in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        mean, se = _stat(lab, "tournament", scheme, "32")
        assert mean - K * se >= 0.96, (scheme, mean, se)


def test_the_learned_table_has_no_reading_past_its_length(lab):
    assert all(lab["tournament"]["accuracy"]["learned"][n] is None for n in LONG)
    assert all(v is None for n in LONG for v in lab["tournament"]["per_seed"]["learned"][n])


def test_sinusoidal_code_collapses_past_the_window(lab):
    # the article: 0.996 at 32, 0.201 at 64 -- below the head that has no position at all
    for n in LONG:
        sin, nope = _stat(lab, "tournament", "sinusoidal", n), _stat(lab, "tournament", "nope", n)
        assert sin[0] + K * sin[1] <= 0.30, (n, sin)
        assert _apart(nope, sin) > K, (n, sin, nope)


def test_alibi_holds(lab):
    for n in map(str, TEST_LENGTHS):
        mean, se = _stat(lab, "tournament", "alibi", n)
        assert mean - K * se >= 0.95, (n, mean, se)


def test_rope_falls_with_length_and_ends_below_alibi(lab):
    rope = [_stat(lab, "tournament", "rope", str(n)) for n in TEST_LENGTHS]
    # calibrated: 32 > 64 by 2 joined SE (mean fall 0.054, per-seed SD 0.033; K = 3 passed a block 98.7% of the
    # time, 2.5 99.4% over 100 seeds, 2 passes 99.9%); 128 > 256 by K (P 1.0).  Each claim of this file is set so
    # that its passes and the others' (which share their outlier heads) pass a fresh block together >= 99% of the
    # time (examples/claim_calibration.py, 100 seeds: 99.0%)
    assert _apart(rope[0], rope[1]) > 2.0 and _apart(rope[2], rope[3]) > K, rope
    per = lab["tournament"]["per_seed"]["rope"]
    # 64 > 128 head by head: 78 heads of 80 (0.975), so >= 7 of 10 passes > 99.9% (8 of 10: 99.6% over 100
    # seeds); and the mean fall there (0.045, SD 0.027) is 1.5 to 3.7 joined SE over one block: > 1 SE passes 99.9%
    assert np.mean([a > b for a, b in zip(per["64"], per["128"])]) >= 0.7, rope
    assert _apart(rope[1], rope[2]) > 1.0, rope
    assert np.mean([a > b for a, b in zip(per["128"], per["256"])]) >= 0.9, rope  # 80 of 80
    assert _apart(_stat(lab, "tournament", "alibi", "256"), rope[-1]) > K
    # and seed by seed: a RoPE head reads 256 tokens worse than 32 in nine seeds of ten at least
    per = lab["tournament"]["per_seed"]["rope"]
    assert np.mean([a > b for a, b in zip(per["32"], per["256"])]) >= 0.9


def test_interpolated_and_ntk_rope_reach_past_the_window(lab):
    # the article: PI 0.917, NTK-aware 0.977, YaRN 0.914 at 256 where the plain RoPE head reads 0.466
    assert lab["rescaled"]["accuracy"]["rope"] == {n: lab["tournament"]["accuracy"]["rope"][n] for n in LONG}
    plain = lab["rescaled"]["per_seed"]["rope"]
    # calibrated at 128, where plain RoPE still reads 0.895 and a map gains little (80 seeds): PI and YaRN gain 0.086
    # (SD 0.059) and beat the plain reading in 76 heads of 80, NTK-aware gains 0.065 (SD 0.038) and beats it in 78.
    # K = 3 and nine in ten passed a block 85% (NTK, margin; PI, YaRN 97%) and 91% (PI, YaRN, share) of the time;
    # 2 joined SE passed 99.3% (NTK, 100 seeds) and 99.7% (PI, YaRN), and the shares 7 and 8 in 10 99.4% (NTK):
    # 1.5 SE and 6 (PI, YaRN) / 7 (NTK) in 10 pass >= 99.9%.  At 256 every head gains.
    readers = ("rope_pi", "rope_ntk", "rope_yarn")
    margin = {"128": dict.fromkeys(readers, 1.5), "256": dict.fromkeys(readers, K)}
    share = {"128": dict(zip(readers, (0.6, 0.7, 0.6))), "256": dict.fromkeys(readers, 0.9)}
    for reader in readers:
        for n in ("128", "256"):
            mean, se = _stat(lab, "rescaled", reader, n)
            assert mean - K * se >= 0.80, (reader, n, mean, se)
            assert _apart((mean, se), _stat(lab, "rescaled", "rope", n)) > margin[n][reader], (reader, n)
            # the same head read through the map beats its plain reading in most seeds
            per = lab["rescaled"]["per_seed"][reader][n]
            assert np.mean([a > b for a, b in zip(per, plain[n])]) >= share[n][reader], (reader, n)


def test_rope_rebound(lab):
    # the article's seed 0: 114.10 at r = 1, a first trough 5.91 at r = 34, the deepest -55.86 at 90, a peak
    # 84.14 at 181, plane 3 the largest.  Ours place every landmark where the article does, and the window's edge
    # scores above zero, as the article's does (every seed of 80).
    # Calibrated (80 seeds): a few heads in 80 grow a curve of another shape (2 with no trough near the edge, the
    # first at r = 86-87 and a score of -81 and -197 there; 8 whose deepest point is r = 255), which moved the old
    # means by far more than their SE: "first trough within 3 of 31 in 8 of 10" passed a block 95% of the time,
    # "mean score at the trough > 3 SE" 3% (normal) to 65% (resampled).  So the landmarks are medians and shares.
    st = rebound_stats(lab["rebound"])
    m, se = st["mean"], st["stderr"]
    curves = list(lab["rebound"].values())
    trough = np.array([r["first_trough"][0] for r in curves])  # (seeds,)
    deepest = np.array([r["deepest"][0] for r in curves])  # (seeds,)
    assert abs(np.median(trough) - 32) <= 3, trough  # at the window's edge (resampled blocks: 100% pass)
    assert st["trough_at_edge"] >= 0.6 and np.mean(abs(trough - 31) <= 5) >= 0.8, trough  # 0.912 / 0.975: 99.9 / 99.8%
    assert abs(np.median(deepest) - 89) <= 3 and np.mean(abs(deepest - 89) <= 3) >= 0.6, deepest  # 0.888: 99.7%
    assert abs(m["peak_r"] - 180) <= 4 + K * se["peak_r"], (m, se)  # and it rises again far past it (80 of 80)
    assert st["top_plane_3"] >= 0.7
    # the task rewards a positive edge: 80 of 80 seeds score above 0 at r = 31, 78 of 80 at the first trough
    assert st["positive_edge"] >= 0.9 and np.mean([r["first_trough"][1] > 0 for r in curves]) >= 0.8
    # the shape of the curves, in nine seeds of ten at least (80 of 80)
    assert np.mean([r["deepest"][1] < r["first_trough"][1] < r["score_r1"] for r in curves]) >= 0.9
    assert np.mean([r["peak"][1] > r["score_r31"] for r in curves]) >= 0.9  # a far key outscores one at the edge


def test_sinusoidal_heads_stay_as_far_from_relative_as_random_matrices(lab):
    # Theorem 2: delta of a random 16 x 16 matrix is about sqrt(1 - 1/16) = 0.968; training barely moves it
    d = lab["thm2"]["sinusoidal_defect"]
    assert len(d["init"]) == len(d["trained"]) == len(d["seeds"]) == DEFAULT_COUNT
    for kind in ("init", "trained"):
        assert abs(d["mean"][kind] - 0.968) <= 0.01 + K * d["stderr"][kind], (kind, d["mean"], d["stderr"])
    change = np.subtract(d["trained"], d["init"])
    assert abs(change.mean()) <= 0.01 + K * change.std(ddof=1) / math.sqrt(change.size)


def test_projecting_one_term_does_not_rescue_the_added_code(lab):
    sin, se, acc = lab["sinusoidal"], lab["sinusoidal"]["stderr"], lab["tournament"]["accuracy"]
    # the article: 0.202, 0.136, 0.143 -- far from what a relative head reads at 64 (RoPE 0.947)
    projected = {n: (sin["projected"][n], se["projected"][n]) for n in LONG}
    shifted = {n: (sin["shifted"][n], se["shifted"][n]) for n in LONG}
    assert _apart(_stat(lab, "tournament", "rope", "64"), projected["64"]) > K, projected
    assert _apart(shifted["64"], projected["64"]) > K, (projected, shifted)
    for n in ("128", "256"):  # near chance (1/8) and far below the relative head at the same length
        # calibrated: at 128 a few heads in 80 read 0.46-0.61 projected (mean 0.206, SD 0.094), so 3 SE passed a
        # resampled block 95% of the time, 2 SE 99.4% (100 seeds), 1.5 SE >= 99.9%
        assert projected[n][0] + (1.5 if n == "128" else K) * projected[n][1] <= 0.40, (n, projected)
        assert _apart(_stat(lab, "tournament", "rope", n), projected[n]) > K, (n, projected)
    sin64 = _stat(lab, "tournament", "sinusoidal", "64")
    # the shift helps at 64 ... (calibrated: with K SE on both sides 98.5% of resampled blocks pass, with 2.5 99.6%)
    assert shifted["64"][0] - 2.5 * shifted["64"][1] > 2 * (sin64[0] + 2.5 * sin64[1])
    assert _apart(shifted["64"], shifted["256"]) > K  # ... and fades where older keys land on unseen positions
    assert acc["sinusoidal"]["64"] < shifted["64"][0]
    ratio, ratio_se = sin["spread_ratio_mean"], sin["spread_ratio_stderr"]
    assert 0.8 < ratio - K * ratio_se and ratio + K * ratio_se < 1.25  # the cross term separates keys as strongly


def test_bias_kernels_predict_what_t5_and_shaw_do_past_the_window(lab):
    k = lab["tournament"]["offset_kernel"]
    # T5: buckets that offsets past the window fall into were never trained, their bias stays at its initial 0
    assert k["t5"]["48"] == k["t5"]["255"] == 0.0 and k["t5"]["31"] < 0.0
    # Shaw: every offset from the clip K = 31 on shares one trained vector, a constant score
    assert k["shaw"]["31"] == k["shaw"]["64"] == k["shaw"]["255"]
    # a flat tail orders nothing, a zero tail pulls far keys up
    assert _apart(_stat(lab, "tournament", "shaw", "256"), _stat(lab, "tournament", "t5", "256")) > K


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
    messages = []
    again = run_laboratory(tmp_path, log=messages.append)
    assert any("[cache] discarding" in m for m in messages)
    assert not any("to train" in m or "step" in m for m in messages)  # every head came from the cache
    assert again["tournament"]["per_seed"] == lab["tournament"]["per_seed"]
    assert again["rebound"] == lab["rebound"]
