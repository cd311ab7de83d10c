"""Every census and advise bounds its work before it starts: a size past the budget is refused in one line with the
work it would need and the target that fits, before one kernel term is evaluated; a base scan past it is skipped,
with the reason.  Counted in calls and terms, never in seconds."""

from __future__ import annotations

import json

import pytest

from poskernels import cli
from poskernels.census import compute as cd
from poskernels.census import context as cx


def _forbid(monkeypatch, *names):
    def refuse(*args, **kwargs):
        raise AssertionError("work started before the budget was checked")

    for name in names:  # each where the census calls it: the census's own module, or its context's
        monkeypatch.setattr(cx if hasattr(cx, name) else cd, name, refuse)


def _run(capsys, *argv):
    code = cli.main([*map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_head_dim_of_65536_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"head_dim": 65536, "max_position_embeddings": 4096}))
    _forbid(monkeypatch, "context_verdicts", "_base_bounds", "map_core")
    code, out, err = _run(capsys, "census", path)
    assert code == 2 and out == "" and err.count("\n") == 1
    needed = 2 * (len(cd.MAPS) + 2) * 16384 * 32768 // 2
    assert f"would evaluate {needed:.3g} kernel terms" in err and "a target length up to" in err


def test_advise_to_2_to_the_53_is_refused_before_any_census(capsys, monkeypatch):
    _forbid(monkeypatch, "context_verdicts", "_base_bounds")
    code, out, err = _run(capsys, "advise", "llama-2-7b", "--target-length", 2**53)
    assert code == 2 and out == "" and err.count("\n") == 1 and "past the budget" in err


def test_the_target_that_fits_is_accepted():
    """The refusal names a target that fits: the census at it runs (the work check is the only change)."""
    with pytest.raises(cd.PosKernelsError) as err:
        cd.census(_llama(), 2**40)
    fits = int(str(err.value).rsplit(" ", 2)[-2])
    assert cx.census_work(128, fits, len(cd.MAPS) + 2, False)[0] <= cx.WORK_BUDGET
    assert cx.census_work(128, fits + 1, len(cd.MAPS) + 2, False)[0] > cx.WORK_BUDGET or fits >= cx.MAX_SCAN


def _llama():
    from poskernels.census.config import load_config

    return load_config("llama-2-7b")


def test_a_base_scan_past_the_budget_is_skipped_and_said(monkeypatch):
    """head_dim 4096: the maps fit, the base scan does not; the census answers without it and says why."""
    from poskernels.census import render_census
    from poskernels.census.config import parse_config

    _forbid(monkeypatch, "_base_bounds")
    data = cd.census(parse_config({"head_dim": 4096, "max_position_embeddings": 4096}))
    assert data["context"]["smallest_base"] is None and "past the budget" in data["context"]["base_not_scanned"]
    assert "not scanned: it would evaluate" in render_census(data, None)
