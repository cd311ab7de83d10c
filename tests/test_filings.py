"""The finance case study on the real trained heads: the article's claims about the filings, asserted.

The twelve filing heads and the tournament's three ALiBi heads are trained once (or loaded from the repository's
cache, ``.cache/poskernels``, the one ``poskernels reproduce`` uses) in a session fixture; the results are cached
there too, so a second run reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from poskernels.experiments import filings as fx
from poskernels.experiments.filings_reader import READERS, content_width, read_filing, read_filing_loop, reader_reading
from poskernels.page import filings as page_filings
from poskernels.tasks.filings import case_corpus, encode_filing, filing_queries, laboratory_filing

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "poskernels"


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
        for reader, (scheme, _) in READERS.items():
            head = filing_heads[scheme][0]
            reading = reader_reading(reader, head.head, len(doc))
            slow = read_filing_loop(head.params, head.head, doc.ids, reading)  # (n, C): n forward passes
            for method in ("auto", "matrix"):
                fast = read_filing(head.params, head.head, doc.ids, reading, method=method)
                np.testing.assert_allclose(fast, slow, atol=1e-9, err_msg=f"{reader} {method} {doc.doc_id}")


# ---------------------------------------------------------------- fidelity (the article's claims)


def test_every_alibi_head_answers_every_query_inside_half_its_horizon(results):
    # Article: "Inside half the horizon every head answers every query, more than 8,000 each."
    assert len(results["horizon"]) == 6
    for row in results["horizon"]:
        assert row["inside_half"] == 1.0, row
        assert row["inside_queries"] > 8000, row


def test_interpolated_rope_reads_the_far_queries(results):
    # Article: RoPE + PI 0.986 and RoPE + YaRN 0.985 on queries whose answer is more than 32 back.
    acc = results["accuracy"]
    assert acc["rope_pi"]["far"] >= 0.95 and acc["rope_yarn"]["far"] >= 0.95
    assert acc["rope_pi"]["far"] > acc["rope"]["far"] + 0.2  # the rescaling rescues the plain RoPE head


def test_alibi_loses_far_queries_that_interpolated_rope_reads(results):
    # Article: ALiBi 0.580 against RoPE + PI 0.986 on far queries; ALiBi held at 0.978 in the tournament.
    acc = results["accuracy"]
    assert acc["alibi"]["far"] <= acc["rope_pi"]["far"] - 0.1
    assert acc["alibi"]["far"] < acc["alibi"]["all"] - 0.05


def test_beyond_the_horizon_depends_on_training(results):
    # Article: beyond the horizon every head degrades; filing heads keep 0.32-0.72, synthetic-stream heads ~0.1.
    rows = results["horizon"]
    for row in rows:
        assert row["beyond"] < row["inside_half"]
    filings = [r["beyond"] for r in rows if r["trained_on"] == "filings"]
    synthetic = [r["beyond"] for r in rows if r["trained_on"] == "synthetic"]
    assert max(synthetic) < 0.2 < min(filings)


def test_horizon_is_read_off_each_heads_weights(heads, results):
    filing_heads, tournament = heads
    expected = [content_width(h.params, h.head) / h.head.alibi_slope for h in filing_heads["alibi"] + tournament]
    assert [r["horizon"] for r in results["horizon"]] == pytest.approx(expected, rel=1e-12)
    for row in results["horizon"]:
        assert 20 < row["horizon"] < 100  # article: 35.8 to 55.8


def test_the_laboratorys_filing(results):
    # Article: RoPE with interpolated positions answers Fenwick Logistics in all three seeds at all 145 positions
    # from token 64 on; at "the company" (token 109) the head without position answers Marrow Freight in seed 0.
    case = results["case"]
    names, last, at = case["companies"], case["last_mention"], case["the_company"]
    assert (last, at, len(case["tokens"]), case["queries"]) == (64, 109, 209, 209)
    fenwick, marrow = names.index("Fenwick Logistics"), names.index("Marrow Freight")
    for seed in ("0", "1", "2"):
        pi = case["answers"]["rope_pi"][seed]
        assert sum(a == fenwick for a in pi[last:]) >= 140  # ours: 145, 142, 145 of 145
        assert pi[at] == fenwick and case["answers"]["rope_yarn"][seed][at] == fenwick
    assert case["answers"]["nope"]["0"][at] == marrow
    assert min(case["right"]["rope_pi"]) >= 0.9 * 209 > max(case["right"]["alibi"])
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
            assert np.mean(results["per_seed"][reader][part]) == pytest.approx(results["accuracy"][reader][part])
    for row in results["horizon"]:
        assert {"trained_on", "seed", "horizon", "inside_half", "beyond"} <= set(row)
    assert {"tokens", "marked", "companies", "truth", "answers"} <= set(results["case"])


def test_page_section_renders_ours_beside_the_articles(results):
    text = page_filings._render(results)
    for needle in ("RoPE + PI", "0.986", "19285", "filings, seed 2", "synthetic, seed 0", "Fenwick Logistics"):
        assert needle in text


def test_results_cache_is_read_and_a_bad_file_rebuilt(heads, tmp_path, monkeypatch):
    filing_heads, tournament = heads
    calls = []

    def fake_table(h, docs):
        calls.append(1)
        return {"accuracy": {r: {"all": 0.5, "far": 0.5} for r in READERS}, "per_seed": {}}

    monkeypatch.setattr(fx, "train_filing_heads", lambda *a: filing_heads)
    monkeypatch.setattr(fx, "tournament_alibi_heads", lambda *a: tournament)
    monkeypatch.setattr(fx, "reader_table", fake_table)
    monkeypatch.setattr(fx, "horizon_row", lambda h, on, docs: {"trained_on": on})
    monkeypatch.setattr(fx, "case_study", lambda h: {})
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
