"""The static figures: each is drawn when its payload part is present and skipped, with the reason, when not."""

from __future__ import annotations

import numpy as np
from matplotlib.image import imread

from conftest import FIRST_SEED
from poskernels.lab import figures, trained, viz_payload
from poskernels.model.config import preset
from poskernels.model.head import init_params
from poskernels.model.train import TrainedHead


def _random_heads(src, names):
    out = {}
    for s in names:
        config = preset("tournament", s)
        out[s] = TrainedHead(config, 0, init_params(config.head, np.random.default_rng(0)), np.zeros(0), "")
    return out


L3 = ("32", "1000", "100000")


def _numbers() -> dict:
    # shaped like numbers.json (ARCHITECTURE.md); the accuracies are the article's tournament and re-read tables
    rope = {"32": 1.0, "64": 0.947, "128": 0.872, "256": 0.466}
    case = {
        "tokens": ["Marrow Freight", "grew", "Fenwick Logistics", "and", "the", "company"],
        "marked": [True, False, True, False, False, False],
        "companies": ["Marrow Freight", "Fenwick Logistics"],
        "truth": [None, 0, 1, 1, 1, 1],
        "answers": {"rope_pi": {"0": [None, 0, 1, 1, 1, 1]}, "alibi": {"0": [None, 0, 1, 1, 0, 0]}},
    }
    return {
        "tournament": {"accuracy": {"rope": rope, "alibi": {"32": 0.999, "64": 0.979, "128": 0.978, "256": 0.978}}},
        "rescaled": {"accuracy": {"rope_pi": {"64": 0.998, "128": 0.980, "256": 0.917}}},
        "rebound": {
            "0": {
                "score_r1": 114.1,
                "score_r31": 7.7,
                "first_trough": [34, 5.91],
                "deepest": [90, -55.86],
                "peak": [181, 84.14],
                "curve": (100 * np.cos(np.arange(256) / 30)).tolist(),  # RoPE's score at offsets 0..255
            }
        },  # fmt: skip
        "filings": {"case": case},
        "long": {  # two readers, three lengths and offsets, two ALiBi heads: the shape of the long section
            "readers": ["rope", "alibi"],
            "seeds": [0, 1],
            "count": 500,
            "length": {
                "lengths": ["32", "1000", "100000"],
                "accuracy": {"rope": {"32": 1.0, "1000": 0.2, "100000": 0.125}, "alibi": dict.fromkeys(L3, 0.98)},
            },
            "distance": {
                "offsets": ["1", "100", "100000"],
                "accuracy": {
                    "rope": {"1": 1.0, "100": 0.5, "100000": 0.12},
                    "alibi": {"1": 1, "100": 0.13, "100000": 0.12},
                },
                "horizon": {"0": {"horizon": 40.6}, "1": {"horizon": 47.8}},
            },
        },
    }


def test_every_figure_is_drawn_when_its_data_are_present(monkeypatch, tmp_path):
    monkeypatch.setattr(trained, "_tournament_heads", _random_heads)
    p = viz_payload(_numbers(), cache_dir=tmp_path)
    written, skipped = figures.draw_figures(p, tmp_path / "figs")
    assert skipped == {}
    assert sorted(x.name for x in written) == sorted(f"{name}.png" for name in figures.FIGURES)
    for path in written:
        image = imread(path)  # (H, W, 4)
        assert image.shape[0] > 200 and image.shape[1] > 600
        assert image[..., :3].std() > 0.05  # something was drawn


def test_absent_parts_are_skipped_with_the_reason(tmp_path, capsys):
    from poskernels import page

    ctx = page.Context(cache_dir=tmp_path, log=lambda m: None, first_seed=FIRST_SEED)
    written = figures.write_figures(ctx, tmp_path)
    out = capsys.readouterr().out
    assert [x.name for x in written] == ["kernel_ruler.png"]
    for name in ("tournament_accuracy", "rope_rescaled_scores", "filing_readers"):
        assert f"[figures] skipped {name}.png: payload part" in out and "absent" in out


def test_a_figure_whose_inputs_did_not_change_is_kept(tmp_path):
    payload = viz_payload({})  # the deterministic part only: the ruler
    (first,), _ = figures.draw_figures(payload, tmp_path)
    first.write_bytes(first.read_bytes())  # same bytes, a new modification time
    touched = first.stat().st_mtime_ns
    assert figures.draw_figures(payload, tmp_path)[0] == [first]
    assert first.stat().st_mtime_ns == touched  # kept, not drawn again
    changed = {**payload, "ruler": {**payload["ruler"], "title_extra": 1}}
    figures.draw_figures(changed, tmp_path)
    assert first.stat().st_mtime_ns != touched  # other data: drawn again
    first.unlink()
    assert figures.draw_figures(payload, tmp_path)[0] == [first] and first.exists()  # a missing PNG is drawn


def test_the_rescaled_figure_draws_the_rope_heads_curves_and_no_other(monkeypatch, tmp_path):
    # RoPE + SSMax and randomized RoPE are heads of their own (keys starting rope_, read as trained): not in the
    # figure of RoPE's head re-read; each drawn line is its own reader's curve from the payload
    monkeypatch.setattr(trained, "_tournament_heads", _random_heads)
    numbers = _numbers()
    for s in ("rope_ssmax", "rope_randpos"):
        numbers["tournament"]["accuracy"][s] = numbers["tournament"]["accuracy"]["rope"]
    p = viz_payload(numbers, cache_dir=tmp_path)
    fig, _ = figures.FIGURES["rope_rescaled_scores"](p)
    by_label = {r["label"]: r["key"] for r in p["scores"]["readers"]}
    drawn = {by_label[line.get_label()]: line for line in fig.axes[0].get_lines() if line.get_label() in by_label}
    assert sorted(drawn) == ["rope", "rope_pi"]
    for key, line in drawn.items():
        want = np.array([np.nan if v is None else v for v in p["scores"]["scores"][key]], dtype=float)
        np.testing.assert_array_equal(np.asarray(line.get_ydata(), dtype=float), want)
        assert line.get_linestyle() == ("-" if key == "rope" else "--")
