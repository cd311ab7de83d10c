"""Bounded loops and files: every search ends, and a cache entry that is not a regular file is never waited on.

The certified cut (Theorem 3 (ii)) is a closed form; its oracle here evaluates the bound itself at ``D`` and
``D + 1`` in decimal arithmetic (the exponent ``W - s D`` exact, the logarithms to 60 digits; no closed form).  The
hostile heads have large finite weights, where ``W - s (D + 1)`` cancels in floats and the search the cut once ran
never ended; the same heads go through the streaming reader with ``eps`` and a sweep point of each long test task.
A FIFO, a folder and a symlink to a FIFO sit where a cache entry goes: loading refuses them at once and rebuilds.
"""

from __future__ import annotations

import contextlib
import decimal
import math
import os
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, Scheme
from poskernels.errors import PosKernelsError
from poskernels.model.cache import cached_json, save_json
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.engine.one_head import query_logits
from poskernels.model.engine.stream import stream_logits
from poskernels.model.head import init_params
from poskernels.model.train import head_path, load_head, train
from poskernels.tasks.cue import cue_batch
from robust import address_ceiling, work_limit

#: Function calls a call that must end may make (each makes at most thousands when it does): a count, not a clock.
LIMIT = 2_000_000

EPS = 1e-12


def _log_bound(W: float, s: float, D: int) -> decimal.Decimal:
    """``ln(e^W e^{-s D} / (1 - e^{-s}))`` in decimal arithmetic: ``W - s D`` exact (``W``, ``s`` exact as floats,
    ``D`` up to 10^600), the logarithm of ``1 - e^{-s}`` to 60 digits."""
    with decimal.localcontext() as ctx:
        ctx.prec = 1600  # every digit of W - s D: W and s hold at most ~770 significant digits each
        exponent = decimal.Decimal(W) - decimal.Decimal(s) * D
        ctx.prec = 60
        sd = decimal.Decimal(s)
        if s < 1e-20:  # 1 - e^{-s} = s (1 - s/2 + ...): ln of it without cancelling 1 - e^{-s} at 60 digits
            log_m = sd.ln() - sd / 2
        else:
            log_m = (1 - (-sd).exp()).ln()
        return exponent - log_m


def _within(W: float, s: float, D: int, eps: float, slack: float = 0.0) -> bool:
    """Whether the bound at ``D`` is ``<= eps e^{-slack}``, compared as logarithms (no overflow at any ``D``)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        return _log_bound(W, s, D) <= decimal.Decimal(eps).ln() - decimal.Decimal(slack)


@settings(max_examples=500)
@given(
    W=st.floats(0, 1e300, allow_subnormal=False),
    s=st.floats(1e-300, 1e300),
    eps=st.floats(1e-300, 1, exclude_max=True),
)
def test_the_cut_is_the_smallest_offset_whose_bound_is_within_eps(W, s, eps):
    from poskernels.model.engine.cut import cut_offset

    with work_limit(LIMIT):
        D, tail = cut_offset(W, s, eps)
    assert isinstance(D, int) and D >= 0 and 0 <= tail <= eps
    assert _within(W, s, D + 1, eps)  # the bound holds in exact arithmetic, not only in floats
    log_tail = _log_bound(W, s, D + 1)
    if log_tail > -660:  # the float is the exact bound, rounded (bounds near 1e-308 lose digits)
        assert math.isclose(tail, math.exp(float(log_tail)), rel_tol=1e-9)
    L = -(math.log(eps) + math.log(-math.expm1(-s)))
    # the smallest such D: one step back the bound exceeds eps, but for the 2^-48 (L + 1) the cut keeps in hand
    assert D == 0 or not _within(W, s, D, eps, (L + 1) / 2**47)


@pytest.mark.parametrize(
    ("W", "s"), [(1e20, 0.5), (1e25, 0.5), (1e30, 0.5), (3e40, 0.25), (1e300, 0.5), (1e300, 1e-300), (7.5, 1e-300)]
)
def test_large_content_widths_end_with_an_exact_cut(W, s):
    from poskernels.model.engine.cut import cut_offset

    with work_limit(LIMIT):
        D, tail = cut_offset(W, s, EPS)
    assert tail <= EPS and _within(W, s, D + 1, EPS)
    assert D == 0 or not _within(W, s, D, EPS, 1e-6)


def _heavy_alibi(scale: float, slope: float = 0.5, seed: int = 0):
    """An ALiBi head whose query map is ``scale`` times its initial one: content width ``W`` about ``scale``."""
    cfg = HeadConfig(scheme="alibi", settings={"alibi_slope": slope})
    params = init_params(cfg, np.random.default_rng(seed))
    params["W_Q"] = params["W_Q"] * scale
    return params, cfg


SCALES = [1e15, 1e20, 1e22, 1e25, 1e28, 1e30, 1e40, 1e100, 1e200]


@pytest.mark.parametrize("scale", SCALES)
def test_certified_cut_of_a_head_with_large_finite_weights_ends(scale):
    from poskernels.model.engine.cut import certified_cut

    params, cfg = _heavy_alibi(scale)
    with work_limit(LIMIT):
        cut = certified_cut(params, cfg, [16], EPS)
    assert cut.tail_bound <= EPS and cut.D >= 0 and np.isfinite(cut.logit_bound)
    assert _within(cut.W, cut.s, cut.D + 1, EPS)


@pytest.mark.parametrize("scale", [1e20, 1e25, 1e30])
def test_stream_logits_with_eps_on_a_heavy_head_ends_and_reads_exactly(scale):
    params, cfg = _heavy_alibi(scale)
    x, _ = cue_batch(np.random.default_rng(1), 4, 300)
    with work_limit(LIMIT):
        got = stream_logits(params, cfg, x, eps=EPS)
    np.testing.assert_allclose(got, query_logits(params, cfg, x), rtol=1e-9, atol=1e-12)  # the cut keeps every key


@pytest.mark.parametrize("bad", [np.inf, np.nan, 1e200])
def test_weights_past_float64_are_refused_by_the_cut_not_looped_on(bad):
    from poskernels.model.engine.cut import certified_cut

    params, cfg = _heavy_alibi(1.0)
    params["W_Q"] = params["W_Q"].copy()
    params["W_Q"][0, 0] = bad
    params["W_K"] = params["W_K"] * (1e200 if bad == 1e200 else 1.0)  # 1e200 * 1e200 overflows
    with work_limit(LIMIT), pytest.raises(PosKernelsError, match="content width W is"):
        certified_cut(params, cfg, [16], EPS)


def _cached_heavy(tmp_path, point):
    """Put a heavy ALiBi head in the cache under the point's own key, as if it had trained to it."""
    from poskernels.model.train import TrainedHead, _save
    from poskernels.sweep.point import train_config

    config = train_config(point)
    params = init_params(config.head, np.random.default_rng(0))
    params["W_Q"] = params["W_Q"] * 1e30
    _save(tmp_path, TrainedHead(config, point["seed"], params, np.zeros(config.steps), ""))


@pytest.mark.parametrize("task", ["long", "needle"])
def test_a_sweep_point_on_a_heavy_alibi_head_ends(tmp_path, task):
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.point import point_key, run_job

    text = f'[fixed]\nscheme = "alibi"\nsteps = 3\nbatch = 4\ntest_task = "{task}"\ntest_lengths = [40]\ntest_size = 5'
    point = parse_grid(text).points[0]
    _cached_heavy(tmp_path, point)
    with work_limit(LIMIT):
        out = run_job({"points": [[point_key(point), point]], "cache_dir": str(tmp_path)})
    result = out["results"][point_key(point)]
    assert out["trained"] == 0 and 0.0 <= result["accuracy"]["40"] <= 1.0


# ---- cache entries that are not regular files ------------------------------------------------------------------

TINY = TrainConfig(head=HeadConfig(scheme="alibi"), steps=2, batch=4)


def _make(kind: str, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "inside.txt").write_text("not ours")
    elif kind == "symlink to a fifo":
        os.mkfifo(path.with_name("elsewhere.fifo"))
        path.symlink_to(path.with_name("elsewhere.fifo"))
    elif kind == "dangling symlink":
        path.symlink_to(path.with_name("nowhere"))


KINDS = ["fifo", "folder", "symlink to a fifo", "dangling symlink"]


def _warns_unless(absent: bool):
    """A dangling symlink is an absent entry (nothing to discard); any other kind is discarded with a warning."""
    return contextlib.nullcontext() if absent else pytest.warns(RuntimeWarning, match="discarding")


@pytest.mark.parametrize("kind", KINDS)
def test_a_head_cache_entry_that_is_not_a_file_is_rebuilt_not_waited_on(tmp_path, kind):
    path = head_path(tmp_path, TINY, 0)
    _make(kind, path)
    with work_limit(LIMIT), _warns_unless(kind == "dangling symlink"):
        assert load_head(tmp_path, TINY, 0) is None
    with work_limit(LIMIT):
        head = train(TINY, 0, tmp_path)  # retrains and writes a real file where the entry was
    assert path.is_file()  # a real file there (a dangling symlink is written through, by the one output writer)
    assert kind == "dangling symlink" or not path.is_symlink()
    assert load_head(tmp_path, TINY, 0).key == head.key
    if kind == "folder":  # moved aside, not deleted: what it held is not ours to remove
        (aside,) = [p for p in path.parent.iterdir() if ".not-a-cache-file-" in p.name]
        assert (aside / "inside.txt").read_text() == "not ours"


@pytest.mark.parametrize("kind", KINDS)
def test_a_result_cache_entry_that_is_not_a_file_is_recomputed(tmp_path, kind):
    path = tmp_path / "results" / "r.json"
    _make(kind, path)
    seen = []
    with work_limit(LIMIT):
        assert cached_json(path, "k", seen.append) is None
    assert (kind == "dangling symlink") or any("not a regular file" in m for m in seen)
    save_json(path, {"a": 1}, {"key": "k"})
    assert cached_json(path, "k") == {"a": 1}


def test_reading_a_fifo_entry_never_opens_it_for_a_blocking_read(tmp_path):
    from poskernels.model.cache_entry import CacheError, read_regular

    os.mkfifo(tmp_path / "x.npz")
    with work_limit(LIMIT), pytest.raises(CacheError, match=r"not a regular file \(a FIFO\)"):
        read_regular(tmp_path / "x.npz")
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing.npz")


def test_the_alibi_cut_has_no_search_loop_and_the_tail_cut_a_bounded_one():
    # the closed form replaced ALiBi's unbounded search; the tail bound's search doubles and halves at most 53 times
    import inspect

    from poskernels.model.engine import cut

    assert "while" not in inspect.getsource(cut.cut_offset) + inspect.getsource(cut.certified_cut)
    assert cut.MAX_CUT == 2**53 and "hi < MAX_CUT" in inspect.getsource(cut._tail_cut)


#: The schemes whose learned bias has a tail bound (Kerple's two), read from the registry by the hook they write.
TAILED = [name for name, s in SCHEMES.items() if type(s).tail_bound is not Scheme.tail_bound]


@pytest.mark.parametrize("scheme", TAILED)
@pytest.mark.parametrize("scale", [1.0, 1e20, 1e30, 1e200])
def test_a_tail_cut_of_a_heavy_kerple_head_ends(scheme, scale):
    from poskernels.model.engine.cut import certified_cut, has_cut

    cfg = HeadConfig(scheme=scheme)
    params = init_params(cfg, np.random.default_rng(0))
    params = {**params, "kerple_a1": np.log([2.0]), "W_Q": params["W_Q"] * scale}  # r1 = 2: a light tail
    assert has_cut(params, cfg)
    with work_limit(LIMIT):
        try:
            cut = certified_cut(params, cfg, [16], EPS)
        except PosKernelsError as err:  # a width so large that no offset below 2^53 is within eps
            assert "read it in full" in str(err)
        else:
            assert cut.tail_bound <= EPS and 0 <= cut.D < 2**53


def test_a_grid_point_with_a_needle_past_its_budget_fails_with_a_reason():
    from poskernels.experiments.long_context import read_head
    from poskernels.model.train import TrainedHead

    config = replace(TINY, head=replace(TINY.head, n_train=8))
    head = TrainedHead(config, 0, init_params(config.head, np.random.default_rng(0)), np.zeros(2), "")
    with work_limit(LIMIT), address_ceiling(), pytest.raises(PosKernelsError, match="needle offset r"):
        read_head(head, None, "distance", 2**30, 5)  # 5 sequences of 2^30 tokens: refused before any is drawn


@pytest.mark.parametrize(
    "plan",
    [
        {"length_min": 10**12, "length_max": 10**12},  # the filler loop would emit about 10^12 sentences
        {"length_max": 2**17},
        {"length_mean": float("nan")},  # clipped NaN: "cannot convert float NaN to integer"
        {"length_sd": float("inf")},
        {"bursts": (2, 10**9)},  # a mention sentence per burst, a billion bursts
    ],
)
def test_a_filing_plan_bounds_the_loops_that_fill_a_filing(plan):
    from poskernels.tasks.filings.corpus import FilingPlan, generate_filing

    with work_limit(LIMIT), pytest.raises(PosKernelsError, match="FilingPlan"):
        generate_filing(np.random.default_rng(0), "d0", plan=FilingPlan(**plan))


def test_a_fifo_where_the_figure_stamps_go_does_not_block_drawing(tmp_path):
    from poskernels.lab.figures import STAMP, draw_figures

    os.mkfifo(tmp_path / STAMP)
    with work_limit(LIMIT):
        written, skipped = draw_figures({}, tmp_path)  # nothing to draw: only the stamps are read
    assert written == [] and skipped


def test_a_filings_file_that_is_a_fifo_with_no_writer_is_refused_at_once(tmp_path):
    # read_filings read the whole path with a blocking open: a FIFO nobody writes to hung the reader for ever
    from poskernels.tasks.filings import read_filings

    fifo = tmp_path / "filings.jsonl"
    os.mkfifo(fifo)
    with work_limit(LIMIT), pytest.raises(PosKernelsError, match="no filing"):
        read_filings(fifo)


def test_a_filings_file_past_the_read_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from poskernels.tasks.filings import jsonl

    path = tmp_path / "filings.jsonl"
    path.write_bytes(b"\n" * 64)
    monkeypatch.setattr(jsonl, "READ_LIMIT", 10)
    with pytest.raises(PosKernelsError, match=r"is 64 bytes; the limit is 10 bytes"):
        jsonl.read_filings(path)
