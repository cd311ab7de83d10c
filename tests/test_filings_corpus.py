"""The synthetic filings corpus, its tokens, its queries, its training windows and its JSONL form."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.errors import PosKernelsError
from poskernels.tasks.filings import (
    FAR,
    MAX_COMPANIES,
    QUERY,
    Filing,
    FilingPlan,
    FilingWindows,
    Mention,
    corpus_stats,
    encode_filing,
    filing_queries,
    generate_filing,
    laboratory_filing,
    read_filings,
    synthetic_corpus,
    word_symbol,
    write_filings,
)
from poskernels.tasks.filings.corpus import WORD_RE
from poskernels.tasks.filings.jsonl import filing_to_json


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(seed=0)


# ---------------------------------------------------------------- the corpus


def test_same_seed_same_corpus_other_seed_other_corpus():
    a, b = synthetic_corpus(3, 20, 5), synthetic_corpus(3, 20, 5)
    assert a == b
    assert synthetic_corpus(4, 20, 5) != a


def test_corpus_shape_is_the_articles(corpus):
    # Article, "Finance case study": 300 training and 100 held-out filings, median length 198 tokens, median 8
    # company mentions, 19,285 queries of which 7,895 (41%) have their answer more than 32 tokens back.
    s = corpus_stats(corpus)
    assert (s["train_docs"], s["test_docs"]) == (300, 100)
    assert abs(s["median_tokens"] - 198) <= 6
    assert abs(s["median_mentions"] - 8) <= 1
    assert abs(s["queries"] - 19_285) <= 0.1 * 19_285
    assert abs(s["far_fraction"] - 0.41) <= 0.03


def test_generated_filings_are_well_formed(corpus):
    kinds = set()
    for f in corpus.train + corpus.test:
        kinds.add(f.kind)
        assert f.mentions, f.doc_id
        ends = [0] + [m.end for m in f.mentions]
        for m, prev_end in zip(f.mentions, ends):
            assert prev_end <= m.start < m.end  # sorted, non-overlapping
            assert f.text[m.start : m.end] == m.company
            assert len(m.company.split()) >= 2  # multi-word names
        companies = {m.company for m in f.mentions}
        assert len(companies) <= MAX_COMPANIES
        assert f.parent == f.mentions[0].company
        # the parent is named most often in most filings; the filler between bursts says "the company"
    assert kinds == {"mdna", "earnings_call", "8k"}
    assert np.mean([[m.company for m in f.mentions].count(f.parent) for f in corpus.test]) > 3


@pytest.mark.parametrize(
    "field,value",
    [("bursts", (0, 2)), ("subsidiaries", (2, 1)), ("competitors", (1, 9)), ("burst_sentences", (0.5, 0.6)),
     ("burst_window", (0.9, 0.1)), ("parent_weight", 0.0), ("length_min", 0)],
)  # fmt: skip
def test_bad_plans_are_refused(field, value):
    with pytest.raises(PosKernelsError, match=f"FilingPlan.{field}"):
        FilingPlan(**{field: value})


def test_bad_kind_and_seed_are_refused():
    with pytest.raises(PosKernelsError, match="'10-Q'"):
        generate_filing(np.random.default_rng(0), "x", kind="10-Q")
    with pytest.raises(PosKernelsError, match="-1"):
        synthetic_corpus(seed=-1)


# ---------------------------------------------------------------- tokens


def _brute_tokens(f: Filing):
    """Independent tokenization: walk the characters, cut at the spans, label companies by first appearance."""
    out, order, pos = [], [], 0
    for m in f.mentions:
        out += [(w, False) for w in WORD_RE.findall(f.text[pos : m.start])]
        if m.company not in order:
            order.append(m.company)
        out.append((m.company, True))
        pos = m.end
    out += [(w, False) for w in WORD_RE.findall(f.text[pos:])]
    return out, order


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_tokens_against_a_brute_force_encoder(seed):
    f = generate_filing(np.random.default_rng(seed), "h")
    tok = encode_filing(f)
    ref, order = _brute_tokens(f)
    assert len(tok) == len(ref) and tok.companies == tuple(order)
    for k, (w, is_mention) in enumerate(ref):
        assert bool(tok.marked[k]) == is_mention
        expect = order.index(w) if is_mention else word_symbol(w)
        assert tok.symbols[k] == expect
        assert tok.ids[k] == expect + 8 * is_mention
    assert tok.ids.max() < QUERY


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_queries_against_a_backward_scan(seed):
    tok = encode_filing(generate_filing(np.random.default_rng(seed), "h"))
    q = filing_queries(tok)
    expected = []
    for t in range(len(tok)):
        j = next((j for j in range(t, -1, -1) if tok.marked[j]), None)
        if j is not None:
            expected.append((t, tok.symbols[j], t - j))
    assert [tuple(map(int, x)) for x in zip(q.positions, q.answers, q.back)] == expected
    assert (q.far == (q.back > FAR)).all()


def test_word_symbols_are_stable_across_processes():
    # Python's str hash is salted per process; the word symbol must not be.
    code = (
        "from poskernels.tasks.filings import word_symbol as w; print([w(x) for x in 'the company said net'.split()])"
    )
    hashes = "print([hash(x) % 8 for x in 'the company said net revenue rose'.split()])"
    outs, salted = [], []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout)
        salted.append(subprocess.run([sys.executable, "-c", hashes], env=env, capture_output=True, text=True).stdout)
    assert outs[0] == outs[1] == str([word_symbol(x) for x in "the company said net".split()]) + "\n"
    assert salted[0] != salted[1]  # the check above would catch a salted hash
    assert word_symbol("Revenue") == word_symbol("revenue")


def test_more_than_eight_companies_is_refused():
    names = [f"Firm{k} Holdings" for k in range(9)]
    text = " and ".join(names)
    spans, pos = [], 0
    for name in names:
        start = text.index(name, pos)
        spans.append(Mention(start, start + len(name), name))
        pos = start + len(name)
    with pytest.raises(PosKernelsError, match="more than 8 companies"):
        encode_filing(Filing("nine", "user", text, tuple(spans)))


# ---------------------------------------------------------------- training windows


def test_windows_are_every_window_with_a_mention(corpus):
    docs = [encode_filing(f) for f in corpus.train[:12]]
    win = FilingWindows.from_docs(docs, length=32)
    brute = sum(int(d.marked[s : s + 31].any()) for d in docs for s in range(len(d) - 30))
    assert len(win.starts) == brute
    ids, y = win.sample(500, np.random.default_rng(1))
    assert ids.shape == (500, 32) and (ids[:, -1] == QUERY).all()
    for row, target in zip(ids, y):
        marked = np.flatnonzero(row[:-1] >= 8)
        assert len(marked) and target == row[marked[-1]] - 8


# ---------------------------------------------------------------- the laboratory's filing


def test_laboratory_filing_has_the_articles_shape():
    # Article, "Finance case study": Marrow Freight six times, Dunmore Aerospace and Siskin Apparel once each,
    # Fenwick Logistics at token 64 and never again, "the company" 45 tokens later, 209 positions, 145 from 64 on.
    tok = encode_filing(laboratory_filing())
    named = [w for w, m in zip(tok.words, tok.marked) if m]
    assert [named.count(c) for c in tok.companies] == [6, 1, 1, 1]
    assert tok.companies[-1] == "Fenwick Logistics" and named[-1] == "Fenwick Logistics"
    assert int(np.flatnonzero(tok.marked)[-1]) == 64
    assert " ".join(tok.words[107:113]) == "a result the company called disappointing"  # "the" at 109 = 64 + 45
    assert len(tok) == 209
    q = filing_queries(tok)
    assert len(q.positions) == 209 and (q.answers[q.positions >= 64] == 3).sum() == 145


# ---------------------------------------------------------------- JSONL


def test_jsonl_round_trip(tmp_path, corpus):
    path = tmp_path / "c.jsonl"
    write_filings(path, corpus.test[:10] + (laboratory_filing(),))
    assert read_filings(path) == corpus.test[:10] + (laboratory_filing(),)


def _good(doc_id="a"):
    return {"doc_id": doc_id, "text": "Marrow Freight grew. Siskin Apparel fell.", "entities": [
        {"start": 0, "end": 14, "company": "Marrow Freight"}, {"start": 21, "end": 35}]}  # fmt: skip


_BAD = [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"doc_id": "b", "text": "x"}), "missing field 'entities'"),
    (json.dumps({**_good("b"), "entites": []}), "unknown field"),
    (json.dumps({**_good("b"), "entities": [{"start": 0, "end": 99}]}), "0 <= start < end <= 41"),
    (json.dumps({**_good("b"), "entities": [{"start": 5, "end": 3}]}), "start < end"),
    (json.dumps({**_good("b"), "entities": [{"start": 0, "end": 14}, {"start": 7, "end": 14}]}), "overlap"),
    (json.dumps({**_good("b"), "entities": [{"start": 0, "end": 6.0}]}), "must be integers"),
    (json.dumps({**_good("b"), "entities": [{"start": 0, "end": 13}]}), "cuts a word"),
    (json.dumps({**_good("b"), "entities": [{"start": 0, "end": 14, "company": ""}]}), "non-empty string"),
    (json.dumps(_good("a")), "doc_id 'a' repeats line 1"),
    (json.dumps({**_good("b"), "text": 7}), "field 'text'"),
]


@pytest.mark.parametrize("line,problem", _BAD)
def test_malformed_line_names_its_number_and_problem(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_good("a")) + "\n\n" + line + "\n" + json.dumps(_good("z")) + "\n")
    with pytest.raises(PosKernelsError) as err:
        read_filings(path)
    assert f"{path}, line 3: " in str(err.value) and problem in str(err.value)


def test_reading_is_all_or_nothing(tmp_path, corpus):
    path = tmp_path / "c.jsonl"
    write_filings(path, corpus.test[:5])
    good = read_filings(path)
    with path.open("ab") as fh:
        fh.write(b'{"doc_id": "x", "text": "\xff", "entities": []}\n')
    with pytest.raises(PosKernelsError, match="line 6: not UTF-8"):
        read_filings(path)
    assert len(good) == 5  # nothing half-loaded: the earlier result is untouched and no partial tuple came back


def test_nine_companies_and_empty_file_are_refused(tmp_path):
    names = [f"Firm{k} Holdings" for k in range(9)]
    text = ". ".join(names)
    ents = [{"start": text.index(n), "end": text.index(n) + len(n)} for n in names]
    path = tmp_path / "nine.jsonl"
    path.write_text(json.dumps({"doc_id": "n", "text": text, "entities": ents}) + "\n")
    with pytest.raises(PosKernelsError, match="line 1: names 9 companies"):
        read_filings(path)
    path.write_text("\n")
    with pytest.raises(PosKernelsError, match="holds no filing"):
        read_filings(path)
    with pytest.raises(PosKernelsError, match="cannot read"):
        read_filings(tmp_path / "missing.jsonl")


def test_a_users_own_filing_reads_like_a_generated_one(tmp_path):
    # A short name for a company ("Marrow") counts as that company when the span says so.
    spans = [{"start": 0, "end": 14}, {"start": 22, "end": 36}, {"start": 38, "end": 44, "company": "Marrow Freight"}]
    obj = {"doc_id": "u", "text": "Marrow Freight bought Siskin Apparel. Marrow then grew.", "entities": spans}
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    (f,) = read_filings(path)
    assert filing_to_json(f)["entities"][2]["company"] == "Marrow Freight"
    tok = encode_filing(f)
    assert tok.symbols[tok.marked].tolist() == [0, 1, 0] and tok.words[-4] == "Marrow"
