"""The finance case study on the real trained heads: the one-pass reader, the article's claims, the page.

The filing heads (four schemes) and the tournament's ALiBi heads, over the seed block of
:func:`poskernels.seeds.seed_block` (ten seeds from ``$POSKERNELS_FIRST_SEED``), are trained once (or loaded from
the repository's cache, ``.cache/poskernels``, the one ``poskernels reproduce`` uses) in a session fixture; the
results are cached there too, so a second run reads them.  The article's claims are the records of the suite
``filings`` of :data:`poskernels.claims.CLAIMS` (the sentence, the statistic over seeds, its threshold and its
null): this file writes no threshold of its own.  The RoPE maps read each question at its own ``kappa``
(:data:`poskernels.experiments.kappa_rules.KAPPA_RULES`).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from claimcheck import assert_claim, assert_reported, claim_id, holds, reported
from conftest import CACHE, SEEDS
from poskernels.experiments import filings as fx
from poskernels.experiments.filing_answers import answer_all, answer_filings
from poskernels.experiments.filing_heads import tournament_alibi_heads, train_filing_heads
from poskernels.experiments.filing_maps import FILING_READERS, read_filing_as, read_filing_as_loop, reader_reading
from poskernels.experiments.filings_reader import content_width, read_filing, read_filing_loop
from poskernels.page import filings as page_filings
from poskernels.tasks.filings import case_corpus, encode_filing, filing_queries, laboratory_filing


@pytest.fixture(scope="session")
def heads():
    return train_filing_heads(CACHE, seeds=SEEDS), tournament_alibi_heads(CACHE, seeds=SEEDS)


@pytest.fixture(scope="session")
def results(heads):
    return fx.filings_results(CACHE, seeds=SEEDS)


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


# ---------------------------------------------------------------- the article's claims, from poskernels.claims


@pytest.fixture(scope="session")
def numbers(results):
    return {"filings": results}


@pytest.mark.parametrize("claim", holds("filings"), ids=claim_id)
def test_claim_holds(numbers, claim):
    assert_claim(numbers, claim)


@pytest.mark.parametrize("claim", reported("filings"), ids=claim_id)
def test_claim_is_reported_not_asserted(numbers, claim):
    assert_reported(numbers, claim)


def test_horizon_is_read_off_each_heads_weights(heads, results):
    filing_heads, tournament = heads
    expected = [content_width(h.params, h.head) / h.head.alibi_slope for h in filing_heads["alibi"] + tournament]
    assert [r["horizon"] for r in results["horizon"]] == pytest.approx(expected, rel=1e-12)


def test_the_laboratorys_filing_is_the_articles(results):
    # the filing the article reads: Fenwick Logistics last named at token 64, "the company" at 109, 209 positions
    case = results["case"]
    assert (case["last_mention"], case["the_company"], len(case["tokens"]), case["queries"]) == (64, 109, 209, 209)
    assert case["companies"][case["truth"][case["last_mention"]]] == "Fenwick Logistics"
    assert case["seeds"] == results["seeds"]
    q = filing_queries(encode_filing(laboratory_filing()))
    assert [case["truth"][t] for t in q.positions] == q.answers.tolist()


def test_accuracy_by_answer_distance_adds_up_to_the_accuracy(results):
    d = results["by_distance"]
    total = sum(d["queries"].values())
    assert total == results["corpus"]["queries"]
    for reader, bins in d["per_seed"].items():
        for i in range(len(results["seeds"])):
            weighted = sum(bins[b][i] * d["queries"][b] for b in bins if bins[b][i] is not None) / total
            assert weighted == pytest.approx(results["per_seed"][reader]["all"][i], abs=1e-12), reader


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

    monkeypatch.setattr(fx, "train_filing_heads", lambda *a, **k: filing_heads)
    monkeypatch.setattr(fx, "tournament_alibi_heads", lambda *a, **k: tournament)
    monkeypatch.setattr(fx, "reader_table", fake_table)
    monkeypatch.setattr(fx, "answer_all", lambda pairs, docs, workers=None, kappa=None: {})
    monkeypatch.setattr(fx, "horizon_row", lambda h, on, docs, known=None: {"trained_on": on, "seed": h.seed})
    monkeypatch.setattr(fx, "horizon_stats", lambda rows: {})
    monkeypatch.setattr(fx, "case_study", lambda h, known=None: {})
    logged = []
    first = fx.filings_results(tmp_path, logged.append, seeds=SEEDS)
    again = fx.filings_results(tmp_path, logged.append, seeds=SEEDS)
    assert again == first and len(calls) == 1  # read back, not recomputed
    assert logged == []
    (path,) = (tmp_path / "filings").glob("results-*.json")
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:50])  # truncated
    assert fx.filings_results(tmp_path, logged.append, seeds=SEEDS) == first and len(calls) == 2
    assert "unreadable" in logged[-1]
    path.write_text(json.dumps({"corpus": {}}))  # valid JSON, not the results
    assert fx.filings_results(tmp_path, logged.append, seeds=SEEDS) == first and len(calls) == 3
    # every key in place, one number altered: only the stored SHA-256 tells, and the file is not trusted
    altered = json.loads(json.dumps(good))
    altered["data"]["accuracy"]["rope_pi"]["far"] = 0.25
    path.write_text(json.dumps(altered))
    assert fx.filings_results(tmp_path, logged.append, seeds=SEEDS) == first and len(calls) == 4
    assert path.name in logged[-1] and "SHA-256" in logged[-1]
    assert json.loads(path.read_text()) == good  # rewritten with the recomputed results
    # an intact file stored under another key (copied or renamed into place) is not trusted either
    other = json.loads(json.dumps(good))
    other["meta"]["key"] = "0" * 20
    path.write_text(json.dumps(other))
    assert fx.filings_results(tmp_path, logged.append, seeds=SEEDS) == first and len(calls) == 5
    assert "stored key differs" in logged[-1]


def test_answers_read_on_the_pool_are_those_read_one_by_one(heads):
    filing_heads, tournament = heads
    docs = [encode_filing(f) for f in case_corpus().test[:3]]
    pairs = [(filing_heads["rope"][0], "rope_yarn"), (filing_heads["rope"][0], "rope"), (tournament[1], "alibi")]
    known = answer_all(pairs, docs, workers=2)
    assert len(known) == 3
    for h, reader in pairs:
        assert np.array_equal(known[h.config, h.seed, reader], answer_filings(h, reader, docs)), reader
