"""The sweep's store (transactions, what a resumed run picks), its export (CSV, Parquet) and its plot."""

from __future__ import annotations

import csv
import json
import sqlite3
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from poskernels.cli import main
from poskernels.errors import PosKernelsError
from poskernels.sweep.export import export, records
from poskernels.sweep.grid import parse_grid
from poskernels.sweep.plot import curves, facets, parse_where, plot_store, select
from poskernels.sweep.point import point_key
from poskernels.sweep.store import Store

GRID = parse_grid('[grid]\nscheme = ["rope", "alibi", "learned"]\nseed = [0, 1, 2]\n[fixed]\ntest_lengths = [32, 64]')


def _filled(path, rng) -> tuple[Store, dict]:
    """A store with every point of GRID done and made-up accuracies (the learned table undefined at 64)."""
    s = Store(path)
    pairs = [(point_key(p), p) for p in GRID.points]
    s.add_points(pairs, "v1")
    s.submit([k for k, _ in pairs])
    acc = {}
    for k, p in pairs:
        a32, a64 = (float(x) for x in rng.integers(0, 2001, 2) / 2000)
        acc[k] = {"32": a32, "64": None if p["scheme"] == "learned" else a64}
    s.finish({k: {"metrics": {"accuracy": acc[k], "final_loss": 0.5}, "worker": "w:1"} for k in acc}, run_id=1)
    return s, acc


def test_a_transaction_is_all_or_nothing(tmp_path):
    s = Store(tmp_path / "s.sqlite")
    pairs = [(point_key(p), p) for p in GRID.points]
    assert s.add_points(pairs, "v1") == 9 and s.add_points(pairs, "v1") == 0  # keyed by configuration
    keys = [k for k, _ in pairs]
    results = {k: {"metrics": {"accuracy": {"32": 1.0}}} for k in keys}
    results[keys[-1]]["metrics"] = {"accuracy": {"32": object()}}  # not JSON: the write fails midway
    with pytest.raises(TypeError):
        s.finish(results, run_id=1)
    assert s.counts() == {"pending": 9}  # the rows written before the failure were rolled back
    s.close()
    # another connection (as after a crash) sees the same
    assert (
        sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT COUNT(*) FROM points WHERE status='done'").fetchone()[0]
        == 0
    )


def test_todo_keeps_done_and_failed_rows_and_reruns_stale_ones(tmp_path):
    s, _ = _filled(tmp_path / "s.sqlite", np.random.default_rng(0))
    keys = [point_key(p) for p in GRID.points]
    assert s.todo(keys, "v1") == ([], 0)  # nothing finished is recomputed
    s.fail(keys[:2], "ValueError: boom", final=True, run_id=2)
    assert s.todo(keys, "v1") == ([], 0)
    assert s.todo(keys, "v1", retry_failed=True) == (keys[:2], 0)
    assert s.todo(keys, "v2") == (keys, 7)  # a new code version makes the 7 done rows stale
    s.submit(keys[2:4])
    s.release(keys[2:4])
    assert {r["status"] for r in s.rows() if r["key"] in keys[2:4]} == {"pending"}
    assert [r["attempts"] for r in s.rows() if r["key"] in keys[2:4]] == [2, 2]


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(PosKernelsError, match="not a sweep store"):
        Store(junk)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)")
    with pytest.raises(PosKernelsError, match="not a sweep store of schema"):
        Store(other)
    with pytest.raises(PosKernelsError, match="no sweep store"):
        Store(tmp_path / "absent.sqlite", create=False)


def test_csv_and_parquet_hold_every_row(tmp_path):
    s, acc = _filled(tmp_path / "s.sqlite", np.random.default_rng(1))
    assert export(s, tmp_path / "s.csv", "csv") == 9
    with open(tmp_path / "s.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["key"]: (float(r["acc_32"]), r["acc_64"]) for r in rows} == {
        k: (a["32"], "" if a["64"] is None else repr(a["64"])) for k, a in acc.items()
    }
    assert {r["scheme"] for r in rows} == {"rope", "alibi", "learned"} and {r["seed"] for r in rows} == {"0", "1", "2"}
    export(s, tmp_path / "s.parquet", "parquet")
    table = pq.read_table(tmp_path / "s.parquet").to_pydict()
    assert dict(zip(table["key"], zip(table["acc_32"], table["acc_64"]))) == {
        k: (a["32"], a["64"]) for k, a in acc.items()
    }
    assert records(s)[0] == list(table)  # the same columns in the same order
    with pytest.raises(PosKernelsError, match="unknown export format"):
        export(s, tmp_path / "s.xlsx", "xlsx")


def test_parquet_without_pyarrow_says_what_to_install(tmp_path, monkeypatch):
    s, _ = _filled(tmp_path / "s.sqlite", np.random.default_rng(2))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    with pytest.raises(PosKernelsError, match=r"pip install 'poskernels\[parquet\]'"):
        export(s, tmp_path / "s.parquet", "parquet")
    assert not (tmp_path / "s.parquet").exists()
    assert export(s, tmp_path / "s.csv", "csv") == 9  # CSV needs nothing


def test_curves_are_mean_and_range_over_seeds(tmp_path):
    s, acc = _filled(tmp_path / "s.sqlite", np.random.default_rng(3))
    c = curves(s.rows())
    assert list(c) == ["alibi", "learned", "rope"] and list(c["learned"]) == [32]  # undefined at 64: left out
    for scheme in ("alibi", "rope"):
        for n in ("32", "64"):
            a = [acc[point_key(p)][n] for p in GRID.points if p["scheme"] == scheme]  # three seeds, by hand
            assert c[scheme][int(n)] == pytest.approx((sum(a) / 3, min(a), max(a), 3), rel=1e-15)
    # a setting that varies splits the curves
    other = parse_grid('[fixed]\nscheme = "rope"\nd = 32\ntest_lengths = [32]').points[0]
    s.add_points([(point_key(other), other)], "v1")
    s.finish({point_key(other): {"metrics": {"accuracy": {"32": 1.0}}}}, run_id=2)
    assert sorted(curves(s.rows())) == ["alibi (d=16)", "learned (d=16)", "rope (d=16)", "rope (d=32)"]


def test_plot_and_export_commands(tmp_path, capsys):
    s, _ = _filled(tmp_path / "s.sqlite", np.random.default_rng(4))
    s.close()
    png = tmp_path / "plot.png"
    assert main(["plot", str(tmp_path / "s.sqlite"), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "3 curve(s)" in capsys.readouterr().out
    out = tmp_path / "x.csv"
    assert main(["sweep", "export", str(tmp_path / "s.sqlite"), "--format", "csv", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 10
    assert main(["sweep", "export", str(tmp_path / "absent.sqlite"), "--out", str(out)]) == 2
    assert "no sweep store" in capsys.readouterr().err
    with Store(tmp_path / "empty.sqlite") as empty, pytest.raises(PosKernelsError, match="no finished point"):
        plot_store(empty, png)


def test_parquet_keeps_lists_as_lists_and_csv_writes_them_as_json(tmp_path):
    s, _ = _filled(tmp_path / "s.sqlite", np.random.default_rng(5))
    export(s, tmp_path / "s.parquet", "parquet")
    table = pq.read_table(tmp_path / "s.parquet")
    kind = table.schema.field("test_lengths").type
    assert pa.types.is_list(kind) and pa.types.is_integer(kind.value_type)
    assert table.to_pydict()["test_lengths"][0] == [32, 64]
    export(s, tmp_path / "s.csv", "csv")
    with open(tmp_path / "s.csv", newline="") as fh:
        assert json.loads(next(csv.DictReader(fh))["test_lengths"]) == [32, 64]


def _two_widths(path) -> Store:
    grid = parse_grid(
        '[grid]\nscheme = ["rope", "alibi"]\nd = [16, 32]\nseed = [0, 1]\n[fixed]\ntest_lengths = [32, 64]'
    )
    s = Store(path)
    pairs = [(point_key(p), p) for p in grid.points]
    s.add_points(pairs, "v1")
    s.submit([k for k, _ in pairs])
    accuracy = {k: {"32": 1.0 - 0.01 * p["d"] / 16, "64": 0.5 + 0.1 * p["seed"]} for k, p in pairs}
    s.finish({k: {"metrics": {"accuracy": a}} for k, a in accuracy.items()}, run_id=1)
    return s


def test_plot_where_keeps_the_matching_points_and_facet_draws_a_panel_per_value(tmp_path, capsys):
    s = _two_widths(tmp_path / "s.sqlite")
    rows = s.rows("done")
    assert sorted(curves(rows)) == ["alibi (d=16)", "alibi (d=32)", "rope (d=16)", "rope (d=32)"]
    assert sorted(curves(select(rows, parse_where(["d=32"])))) == ["alibi", "rope"]
    assert sorted(curves(select(rows, parse_where(["d=32", "scheme=rope"])))) == ["rope"]
    assert list(facets(rows, "d")) == ["d=16", "d=32"]
    png = tmp_path / "f.png"
    _, data = plot_store(s, png, facet="d")
    assert sorted(data) == ["d=16 | alibi", "d=16 | rope", "d=32 | alibi", "d=32 | rope"]
    assert data["d=32 | rope"][64] == (0.55, 0.5, 0.6, 2)  # the mean over the two seeds, its band
    s.close()
    assert main(["plot", str(tmp_path / "s.sqlite"), "--out", str(png), "--where", "scheme=alibi", "--facet", "d"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "2 curve(s)" in capsys.readouterr().out
    for bad, message in (
        (["--where", "width=32"], "unknown setting 'width'"),
        (["--where", "scheme"], "expected KEY=VALUE"),
        (["--where", "d=64"], "no finished point of the store has d=64"),
        (["--facet", "colour"], "--facet 'colour': unknown setting"),
        (["--where", "d=16", "--where", "d=32"], "already required to be '16'"),
    ):
        assert main(["plot", str(tmp_path / "s.sqlite"), "--out", str(png), *bad]) == 2, bad
        assert message in capsys.readouterr().err, bad


def test_the_plot_legend_sits_outside_the_data(tmp_path):
    import matplotlib.figure

    s = _two_widths(tmp_path / "s.sqlite")
    seen = {}
    real = matplotlib.figure.Figure.savefig

    def spy(fig, *args, **kwargs):
        fig.canvas.draw()
        legend = fig.legends[0].get_window_extent()
        seen["overlaps"] = [ax.get_window_extent().overlaps(legend) for ax in fig.axes]
        return real(fig, *args, **kwargs)

    matplotlib.figure.Figure.savefig = spy
    try:
        plot_store(s, tmp_path / "p.png", facet="d")
    finally:
        matplotlib.figure.Figure.savefig = real
    assert seen["overlaps"] == [False, False]
