"""The finance case study for every scheme beyond the article: the registry loop, the reader, the keys, the tables.

The oracle of the reader is the PyTorch head of :mod:`poskernels.model.reference` (each scheme's term written there
from its paper, never through the head's hooks), run on each question's sequence on its own.  The trained results
(``filings.beyond`` of ``numbers.json``) are checked on the shipped reference and on a fresh run of the suite's
seed block, whose heads train once into the repository's cache (``.cache/poskernels``, the one ``poskernels
reproduce`` uses).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE, SEEDS
from poskernels.encodings import SCHEMES
from poskernels.errors import PosKernelsError
from poskernels.experiments import filings_beyond as fb
from poskernels.experiments.filing_maps import FILING_READERS, filing_readers, read_filing_as
from poskernels.model import HeadConfig, init_params
from poskernels.page import filings as page_filings
from poskernels.page import readme, scheme_table
from poskernels.tasks.filings import encode_filing, filing_queries, laboratory_filing
from poskernels.tasks.filings.tokens import QUERY
from seedstats import leaves, within

ROOT = Path(__file__).resolve().parents[1]
BEYOND = [s for s, scheme in SCHEMES.items() if not scheme.in_article]


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(readme.REFERENCE_NUMBERS.read_text())


def _short_filing(n: int = 45) -> np.ndarray:
    """The laboratory's filing cut to ``n`` tokens: past the 32-token window, short enough for a pass per question."""
    return encode_filing(laboratory_filing()).ids[:n]


# ---------------------------------------------------------------- the registry loop


def test_every_scheme_beyond_the_article_is_read_or_said_why_not():
    read, unread = fb.beyond_schemes(), fb.not_read()
    assert sorted([*read, *unread]) == sorted(BEYOND)
    assert not set(read) & set(unread)
    assert {"xpos", "fire", "t5"} <= set(read)
    assert all(SCHEMES[s].defined_everywhere for s in read)
    assert all(s in filing_readers() for s in read)


def test_a_scheme_registered_later_gets_its_filing_reading_with_no_edit(monkeypatch):
    # a copy of an existing beyond scheme under a new name, and a learned table beyond the article
    monkeypatch.setitem(SCHEMES, "fire_again", SCHEMES["fire"])
    learned = SCHEMES["learned"]
    monkeypatch.setattr(type(learned), "in_article", False)
    assert "fire_again" in fb.beyond_schemes() and fb.beyond_schemes()[-1] == "fire_again"
    assert "learned" not in fb.beyond_schemes() and set(fb.not_read()) == {"learned"}
    assert "learned" in fb.not_read() and "defined at every position" in fb.not_read()["learned"]
    jobs = fb._jobs((0, 1))
    assert [(c.head.scheme, s) for c, s in jobs][-2:] == [("fire_again", 0), ("fire_again", 1)]
    assert all(c.task.startswith("filings-") and c.head.n_train == 32 and c.steps == 1500 for c, _ in jobs)


# ---------------------------------------------------------------- the reader, against the independent head


@pytest.mark.parametrize("scheme", fb.beyond_schemes())
def test_the_filing_reading_is_the_reference_heads_logits_at_every_question(scheme):
    torch = pytest.importorskip("torch")
    from poskernels.model.reference import torch_logits, torch_params

    cfg = HeadConfig(scheme=scheme)
    params = {k: v * 3.0 for k, v in init_params(cfg, np.random.default_rng(7)).items()}  # peaked, not uniform
    ids = _short_filing()
    fast = read_filing_as(params, cfg, ids, scheme)  # (n, C): one pass
    tp = torch_params(params, dtype=torch.float64, requires_grad=False)
    for t in range(ids.size):
        seq = np.append(ids[: t + 1], QUERY)[None, :]  # (1, t + 2): the question at t, on its own
        ref = torch_logits(tp, cfg, seq).detach().numpy()[0]  # (C,)
        assert np.allclose(fast[t], ref, rtol=1e-9, atol=1e-10), (scheme, t)
    assert np.ptp(fast[-1]) > 1e-3  # the logits are not flat: the check can see a wrong score


def test_the_reader_refuses_a_head_it_cannot_read():
    cfg = HeadConfig(scheme="learned")
    params = init_params(cfg, np.random.default_rng(0))
    with pytest.raises(PosKernelsError, match=r"unknown reader 'learned'.*accepted: .*fire"):
        read_filing_as(params, cfg, _short_filing(), "learned")
    xpos = HeadConfig(scheme="xpos")
    with pytest.raises(PosKernelsError, match="reader 'fire' reads 'fire' heads; got a 'xpos' head"):
        read_filing_as(init_params(xpos, np.random.default_rng(0)), xpos, _short_filing(), "fire")
    assert list(filing_readers())[: len(FILING_READERS)] == list(FILING_READERS)


# ---------------------------------------------------------------- the shipped numbers and a fresh run


def test_the_shipped_numbers_hold_every_scheme_beyond_the_article(reference):
    b = reference["filings"]["beyond"]
    assert b["schemes"] == list(fb.beyond_schemes()) and b["not_read"] == fb.not_read()
    assert b["seeds"] == reference["filings"]["seeds"]
    for s in fb.beyond_schemes():
        for part in ("all", "far"):
            assert 0.0 <= b["accuracy"][s][part] <= 1.0 and b["stderr"][s][part] >= 0.0
            per_seed = b["per_seed"][s][part]
            assert len(per_seed) == len(b["seeds"]) >= 10
            assert np.isclose(np.mean(per_seed), b["accuracy"][s][part], rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def fresh():
    return fb.beyond_results(CACHE, seeds=SEEDS)


def test_a_fresh_run_agrees_with_the_shipped_numbers(reference, fresh):
    ref = reference["filings"]["beyond"]
    assert fresh["schemes"] == ref["schemes"] and fresh["seeds"] == list(SEEDS)
    for path, mean, se in leaves(fresh["accuracy"], fresh["stderr"]):
        r, r_se = ref["accuracy"], ref["stderr"]
        for key in path:
            r, r_se = r[key], r_se[key]
        assert within(mean, se, r, r_se), (path, mean, se, r, r_se)


def test_the_accuracy_is_the_heads_answers_against_the_truth(fresh):
    # one head, one filing, counted here from the reader's logits and the filing's questions
    heads = fb.train_beyond_heads(CACHE, seeds=SEEDS[:1])
    scheme = fb.beyond_schemes()[0]
    head = heads[scheme][0]
    doc = encode_filing(laboratory_filing())
    q = filing_queries(doc)
    pred = np.argmax(read_filing_as(head.params, head.head, doc.ids, scheme), axis=1)[q.positions]
    right = int((pred == q.answers).sum())
    assert 0 < right <= len(q.positions)
    assert fresh["per_seed"][scheme]["all"][0] > 0.0


def test_the_results_are_cached_and_a_corrupt_file_is_rebuilt(tmp_path, monkeypatch):
    calls, logged = [], []
    monkeypatch.setattr(fb, "_read", lambda *a: calls.append(a) or {"schemes": ["x"], "code": 1})
    first = fb.beyond_results(tmp_path, logged.append, seeds=(0, 1))
    assert fb.beyond_results(tmp_path, logged.append, seeds=(0, 1)) == first and len(calls) == 1
    (path,) = (tmp_path / "filings").glob("beyond-*.json")
    path.write_text(path.read_text()[:-5])  # truncated
    assert fb.beyond_results(tmp_path, logged.append, seeds=(0, 1)) == first and len(calls) == 2
    fb.beyond_results(tmp_path, logged.append, seeds=(0, 2))  # another block: another entry
    assert len(calls) == 3
    with pytest.raises(PosKernelsError, match="unknown kappa rule"):
        fb.beyond_results(tmp_path, seeds=(0, 1), kappa="film")


# ---------------------------------------------------------------- the tables


def test_the_tables_quote_the_numbers(reference):
    b = reference["filings"]["beyond"]
    table = page_filings.beyond_markdown(reference)
    lines = [line for line in table.splitlines() if line.startswith("| ") and "±" in line]  # the rows, not the caption
    rows = {line.split(" | ")[0].strip("| "): line for line in lines}
    assert len(rows) == len(b["schemes"])
    for s in b["schemes"]:
        title = SCHEMES[s].title  # the longest title a row starts with ("xPos" is a prefix of the rescaled xPos's)
        longer = [SCHEMES[o].title for o in b["schemes"] if len(SCHEMES[o].title) > len(title)]
        (label,) = [k for k in rows if k.startswith(title) and not any(k.startswith(t) for t in longer)]
        assert f"{b['accuracy'][s]['far']:.3f} ± {b['stderr'][s]['far']:.3f}" in rows[label]
    big = scheme_table.markdown(reference)
    header = next(line for line in big.splitlines() if line.startswith("| scheme"))
    assert header.endswith("| filings, far |")
    f = reference["filings"]
    rope = next(line for line in big.splitlines() if line.startswith("| RoPE |"))
    assert rope.endswith(f"| {f['accuracy']['rope']['far']:.3f} ± {f['stderr']['rope']['far']:.3f} |")
    learned = next(line for line in big.splitlines() if line.startswith("| learned"))
    assert learned.endswith("| — |")
    printed = page_filings.FILINGS.render(reference["filings"])
    assert "Beyond the article" in printed and all(SCHEMES[s].title in printed for s in b["schemes"])
