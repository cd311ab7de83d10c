"""The finance case study on the real trained heads: the article's claims about the filings, asserted.

The filing heads (four schemes) and the tournament's ALiBi heads, over the seed block of
:func:`poskernels.seeds.seed_block` (ten seeds from ``$POSKERNELS_FIRST_SEED``), are trained once (or loaded from
the repository's cache, ``.cache/poskernels``, the one ``poskernels reproduce`` uses) in a session fixture; the
results are cached there too, so a second run reads them.  Each claim is a statement about the seed
distribution: a mean with a margin of ``K = 3`` standard errors of that mean, or a share of the seeds, or a median.

Thresholds marked "calibrated" are set so that a fresh block of ten seeds passes with probability >= 0.99, measured
over 80 seeds (blocks 0, 1000, ..., 7000) by ``examples/claim_calibration.py`` (figures in
``examples/claim_calibration.csv``).  About one RoPE filing head in 40 trains to read the far queries poorly (0.78
and 0.83 with PI, seeds 2003 and 2007, against a median 0.98): a mean with a K-SE margin at the article's figure
fails one block in two, so those claims are a median and a share of heads.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from poskernels.experiments import filings as fx
from poskernels.experiments.filings_reader import (
    FILING_READERS,
    content_width,
    read_filing,
    read_filing_as,
    read_filing_as_loop,
    read_filing_loop,
    reader_reading,
)
from poskernels.page import filings as page_filings
from poskernels.tasks.filings import case_corpus, encode_filing, filing_queries, laboratory_filing

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "poskernels"
K = 3.0  # standard errors of margin


def _stat(results, reader, part):
    return results["accuracy"][reader][part], results["stderr"][reader][part]


def _apart(a, b) -> float:
    """How far mean ``a`` lies above mean ``b``, in joined standard errors (both ``(mean, se)``)."""
    return (a[0] - b[0]) / math.hypot(a[1], b[1])


@pytest.fixture(scope="session")
def heads():
    return fx.train_filing_heads(CACHE), fx.tournament_alibi_heads(CACHE)


@pytest.fixture(scope="session")
def results(heads):
    return fx.filings_results(CACHE)


# ---------------------------------------------------------------- the one-pass reader on trained heads


def test_one_pass_reader_equals_the_forward_pass_on_every_trained_reader(heads):
    filing_heads, _ = heads
    longest = max((encode_filing(f) for f in case_corpus().test), key=len)
    for doc in (encode_filing(laboratory_filing()), longest):
        for reader, (scheme, _) in FILING_READERS.items():
            head = filing_heads[scheme][0]
            reading = reader_reading(reader, head.head, len(doc))
            slow = read_filing_loop(head.params, head.head, doc.ids, reading)  # (n, C): n forward passes
            for method in ("auto", "matrix"):
                fast = read_filing(head.params, head.head, doc.ids, reading, method=method)
                np.testing.assert_allclose(fast, slow, atol=1e-9, err_msg=f"{reader} {method} {doc.doc_id}")
            # and as the case study reads it: each question at its own kappa, the bands of one pass
            banded = read_filing_as(head.params, head.head, doc.ids, reader)
            np.testing.assert_allclose(
                banded, read_filing_as_loop(head.params, head.head, doc.ids, reader), atol=1e-9, err_msg=reader
            )


# ---------------------------------------------------------------- fidelity (the article's claims)


def test_every_alibi_head_answers_every_query_inside_half_its_horizon(results):
    # Article: "Inside half the horizon every head answers every query, more than 8,000 each."
    rows = results["horizon"]
    assert len(rows) == 2 * len(results["seeds"])
    # Ours: 17 heads of 20 with seeds 0-9, 20 of 20 with seeds 1000-1009.  The heads that miss are those whose
    # content width is widest (filing horizons 212 and 154 against a median of 54): W/s overstates their reach.
    assert np.mean([row["inside_half"] == 1.0 for row in rows]) >= 0.75, rows
    median = {t: np.median(st["per_seed"]["horizon"]) for t, st in results["horizon_stats"].items()}
    for trained_on, st in results["horizon_stats"].items():
        assert np.median(st["per_seed"]["inside_half"]) == 1.0, trained_on
    for row in rows:
        if row["inside_half"] < 1.0:
            assert row["horizon"] > median[row["trained_on"]], row
    assert np.mean([row["inside_queries"] for row in rows]) > 8000


def test_interpolated_rope_reads_the_far_queries(results):
    # Article: RoPE + PI 0.986 and RoPE + YaRN 0.985 on queries whose answer is more than 32 back.
    # Calibrated (80 seeds): the median head reads 0.980 (PI) and 0.978 (YaRN), 78 and 77 heads of 80 read >= 0.90;
    # "mean - 3 SE >= 0.95" passed a block 17% / 12% of the time (normal; 61% / 48% resampled).  Now: median >= 0.95
    # (resampled blocks pass 99.8% / 99.3%; YaRN 99.5% over 100 seeds, so the file's claims passed a block together
    # 98.5% of the time: median >= 0.94 passes > 99.9%) and >= 0.90 in 8 (PI) and 7 (YaRN) heads of 10 (binomial
    # 99.8% / 99.97%).
    for reader, share in (("rope_pi", 0.8), ("rope_yarn", 0.7)):
        per = np.asarray(results["per_seed"][reader]["far"])  # (seeds,)
        assert np.median(per) >= 0.94 and np.mean(per >= 0.90) >= share, (reader, per)
        # the rescaling rescues the plain RoPE head: the mean gain 0.28 (SD 0.05) is > 0.1 by K joined SE (100%;
        # > 0.2 by K passed 88% of resampled blocks), and > 0.2 head by head in 75 of 80 (>= 7 of 10: 99.8%)
        mean, se = _stat(results, reader, "far")
        assert _apart((mean - 0.1, se), _stat(results, "rope", "far")) > K, reader
        rope = np.asarray(results["per_seed"]["rope"]["far"])
        assert np.mean(per > rope + 0.2) >= 0.7, (reader, per, rope)


def test_pi_and_yarn_lead_on_the_filings(results):
    # Article: PI 0.991 and YaRN 0.990 on all queries, every other reader 0.913 or less.
    # Calibrated: against NTK-aware on all queries the lead is 0.086 (SD 0.025, 80 seeds), which an outlier head
    # pulls under K joined SE in 1.3% of resampled blocks; 2.5 SE passes 99.6% (every other pair 100%)
    others = [r for r in FILING_READERS if r not in ("rope_pi", "rope_yarn")]
    for leader in ("rope_pi", "rope_yarn"):
        for part in ("all", "far"):
            for other in others:
                assert _apart(_stat(results, leader, part), _stat(results, other, part)) > 2.5, (leader, other, part)


def test_alibi_loses_far_queries_that_interpolated_rope_reads(results):
    # Article: ALiBi 0.580 against RoPE + PI 0.986 on far queries; ALiBi held at 0.978 in the tournament.
    alibi_far = _stat(results, "alibi", "far")
    assert _apart(_stat(results, "rope_pi", "far"), (alibi_far[0] + 0.1, alibi_far[1])) > K
    # calibrated: ALiBi's all - far is 0.203 (SD 0.086, 80 seeds; one head at -0.01): > 0.05 by K joined SE passed
    # 90% of resampled blocks (98% normal), by 2 SE 99.8% (100%)
    assert _apart(_stat(results, "alibi", "all"), (alibi_far[0] + 0.05, alibi_far[1])) > 2.0


def test_beyond_the_horizon_depends_on_training(results):
    # Article: beyond the horizon every head degrades; filing heads keep 0.32-0.72, synthetic-stream heads ~0.1.
    # A statement about the two distributions of heads, not about any one seed: one synthetic-stream head may
    # keep as much as a filing head (a wide content range W puts few far queries beyond its horizon).
    stats = results["horizon_stats"]
    for trained_on, st in stats.items():
        m, se = st["mean"], st["stderr"]
        assert _apart((m["inside_half"], se["inside_half"]), (m["beyond"], se["beyond"])) > K, trained_on
    filings, synthetic = stats["filings"], stats["synthetic"]
    beyond = [(st["mean"]["beyond"], st["stderr"]["beyond"]) for st in (filings, synthetic)]
    # calibrated: filing heads keep 0.30 more (SD 0.18, 80 seeds; three filing heads keep under 0.02): K joined SE
    # passed 96.7% of resampled blocks (99.4% normal), 2 SE 99.8% (99.6% over 100 seeds), 1.5 SE > 99.9%
    assert _apart(*beyond) > 1.5, beyond
    medians = [np.median([v for v in st["per_seed"]["beyond"] if v is not None]) for st in (synthetic, filings)]
    assert medians[0] < 0.2 < medians[1], medians


def test_horizon_is_read_off_each_heads_weights(heads, results):
    filing_heads, tournament = heads
    expected = [content_width(h.params, h.head) / h.head.alibi_slope for h in filing_heads["alibi"] + tournament]
    assert [r["horizon"] for r in results["horizon"]] == pytest.approx(expected, rel=1e-12)
    for trained_on, st in results["horizon_stats"].items():  # article: 35.8 to 55.8
        horizons = np.asarray(st["per_seed"]["horizon"])  # (seeds,)
        # the median head sits in the article's range; a few heads grow a wide content width (212 at seed 5),
        # so the mean is not the statistic to bound
        assert 20 < np.median(horizons) < 100, (trained_on, horizons)
        assert np.mean(horizons < 100) >= 0.7, (trained_on, horizons)


def test_the_laboratorys_filing(results):
    # Article: RoPE with interpolated positions answers Fenwick Logistics in all three seeds at all 145 positions
    # from token 64 on; at "the company" (token 109) the head without position answers Marrow Freight in seed 0.
    case = results["case"]
    names, last, at = case["companies"], case["last_mention"], case["the_company"]
    assert (last, at, len(case["tokens"]), case["queries"]) == (64, 109, 209, 209)
    fenwick, marrow = names.index("Fenwick Logistics"), names.index("Marrow Freight")
    assert case["seeds"] == results["seeds"]
    # calibrated (80 seeds): PI answers >= 140 of the 145 in 75 heads, YaRN in 77 (one head answers 0, one 56):
    # nine in ten passed a block 87% / 95% of the time; seven in ten 99.8% / 99.97% (PI 99.4% over 100 seeds), six
    # in ten > 99.9%.  Fenwick at token 109: PI 79 heads of 80 (nine in ten: 99.3%; eight: 99.98%), YaRN 80 of 80
    for reader, share, named in (("rope_pi", 0.6, 0.8), ("rope_yarn", 0.6, 0.9)):
        from_last = case["right_from_last"][reader]  # of 145
        assert np.mean([c >= 140 for c in from_last]) >= share, (reader, from_last)
        assert np.mean([a == fenwick for a in case["at_the_company"][reader]]) >= named, reader
    # the head without position names the wrong company there in most seeds, Marrow Freight above all
    nope = case["at_the_company"]["nope"]
    assert np.mean([a != fenwick for a in nope]) >= 0.7 and max(set(nope), key=nope.count) == marrow, nope
    right = {r: np.asarray(case["right"][r], dtype=float) for r in ("rope_pi", "alibi")}
    se = {r: v.std(ddof=1) / math.sqrt(v.size) for r, v in right.items()}
    # calibrated: RoPE + PI answers a median 204 of 209 (80 seeds) but two heads answer 49 and 112, so its mean
    # 3 SE down cleared 0.9 * 209 in 15% (normal) to 78% (resampled) of blocks.  77 heads of 80 clear it: the median
    # (100% of resampled blocks) and seven heads in ten (binomial 99.97%) do.  ALiBi's mean 3 SE up stays under it
    # in every block (mean 123, SD 13)
    assert np.median(right["rope_pi"]) >= 0.9 * 209 and np.mean(right["rope_pi"] >= 0.9 * 209) >= 0.7, right
    assert 0.9 * 209 > right["alibi"].mean() + K * se["alibi"], right
    q = filing_queries(encode_filing(laboratory_filing()))
    assert [case["truth"][t] for t in q.positions] == q.answers.tolist()


# ---------------------------------------------------------------- numbers.json and the page


def test_numbers_json_keys_as_design_lists(results):
    assert json.loads(json.dumps(results)) == results  # JSON-ready
    for key in ("train_docs", "test_docs", "median_tokens", "median_mentions", "queries", "far_queries"):
        assert key in results["corpus"]
    for reader in ("nope", "sinusoidal", "rope", "alibi", "rope_pi", "rope_ntk", "rope_yarn"):
        for part in ("all", "far"):
            assert 0.0 <= results["accuracy"][reader][part] <= 1.0
            per_seed = results["per_seed"][reader][part]
            assert len(per_seed) == len(results["seeds"]) >= 10
            assert np.mean(per_seed) == pytest.approx(results["accuracy"][reader][part])
            se = np.std(per_seed, ddof=1) / math.sqrt(len(per_seed))
            assert results["stderr"][reader][part] == pytest.approx(se)
    for row in results["horizon"]:
        assert {"trained_on", "seed", "horizon", "inside_half", "beyond"} <= set(row)
    assert {"tokens", "marked", "companies", "truth", "answers"} <= set(results["case"])


def test_page_section_renders_ours_beside_the_articles(results):
    text = page_filings._render(results)
    first = results["seeds"][0]
    needles = ("RoPE + PI", "0.986", "19285", f"filings, seed {first}", "synthetic, mean ± SE", "Fenwick Logistics")
    for needle in needles:
        assert needle in text


def test_results_cache_is_read_and_a_bad_file_rebuilt(heads, tmp_path, monkeypatch):
    filing_heads, tournament = heads
    calls = []

    def fake_table(h, docs, known=None):
        calls.append(1)
        return {"accuracy": {r: {"all": 0.5, "far": 0.5} for r in FILING_READERS}, "per_seed": {}}

    monkeypatch.setattr(fx, "train_filing_heads", lambda *a: filing_heads)
    monkeypatch.setattr(fx, "tournament_alibi_heads", lambda *a: tournament)
    monkeypatch.setattr(fx, "reader_table", fake_table)
    monkeypatch.setattr(fx, "answer_all", lambda pairs, docs, workers=None: {})
    monkeypatch.setattr(fx, "horizon_row", lambda h, on, docs, known=None: {"trained_on": on, "seed": h.seed})
    monkeypatch.setattr(fx, "horizon_stats", lambda rows: {})
    monkeypatch.setattr(fx, "case_study", lambda h, known=None: {})
    logged = []
    first = fx.filings_results(tmp_path, logged.append)
    assert fx.filings_results(tmp_path, logged.append) == first and len(calls) == 1  # read back, not recomputed
    assert logged == []
    (path,) = (tmp_path / "filings").glob("results-*.json")
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:50])  # truncated
    assert fx.filings_results(tmp_path, logged.append) == first and len(calls) == 2
    assert "unreadable" in logged[-1]
    path.write_text(json.dumps({"corpus": {}}))  # valid JSON, not the results
    assert fx.filings_results(tmp_path, logged.append) == first and len(calls) == 3
    # every key in place, one number altered: only the stored SHA-256 tells, and the file is not trusted
    altered = json.loads(json.dumps(good))
    altered["data"]["accuracy"]["rope_pi"]["far"] = 0.25
    path.write_text(json.dumps(altered))
    assert fx.filings_results(tmp_path, logged.append) == first and len(calls) == 4
    assert path.name in logged[-1] and "SHA-256" in logged[-1]
    assert json.loads(path.read_text()) == good  # rewritten with the recomputed results
    # an intact file stored under another key (copied or renamed into place) is not trusted either
    other = json.loads(json.dumps(good))
    other["meta"]["key"] = "0" * 20
    path.write_text(json.dumps(other))
    assert fx.filings_results(tmp_path, logged.append) == first and len(calls) == 5
    assert "stored key differs" in logged[-1]


def test_answers_read_on_the_pool_are_those_read_one_by_one(heads):
    filing_heads, tournament = heads
    docs = [encode_filing(f) for f in case_corpus().test[:3]]
    pairs = [(filing_heads["rope"][0], "rope_yarn"), (filing_heads["rope"][0], "rope"), (tournament[1], "alibi")]
    known = fx.answer_all(pairs, docs, workers=2)
    assert len(known) == 3
    for h, reader in pairs:
        assert np.array_equal(known[h.config, h.seed, reader], fx.answer_filings(h, reader, docs)), reader
