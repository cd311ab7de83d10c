"""The sweep's grid file: expansion (property), point keys, and errors that name the key and the line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.cli import main
from poskernels.errors import PosKernelsError
from poskernels.experiments.held_out import TEST_COUNT, TEST_SEED
from poskernels.experiments.tournament import ARTICLE_SCHEMES, TEST_LENGTHS
from poskernels.model.config import preset
from poskernels.sweep.grid import load_grid, parse_grid
from poskernels.sweep.point import group_jobs, point_key, train_config
from poskernels.sweep.settings import SETTINGS

# Small value pools per setting, all valid, to build random grids from.
POOLS = {
    "scheme": ["nope", "sinusoidal", "learned", "rope", "alibi", "t5", "shaw"],
    "d": [8, 16, 32],
    "n_train": [16, 32],
    "base": [100.0, 1e4],
    "steps": [10, 20],
    "lr": [0.01, 0.003],
    "seed": [0, 1, 2],
    "test_size": [10, 2000],
}


def _toml(value) -> str:
    return repr(value) if not isinstance(value, str) else f'"{value}"'


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_points_are_the_product_of_the_lists(data):
    keys = data.draw(st.lists(st.sampled_from(sorted(POOLS)), min_size=1, max_size=4, unique=True))
    axes = {k: data.draw(st.lists(st.sampled_from(POOLS[k]), min_size=1, max_size=3, unique=True)) for k in keys}
    text = "[grid]\n" + "".join(f"{k} = [{', '.join(_toml(v) for v in vs)}]\n" for k, vs in axes.items())
    grid = parse_grid(text)
    assert len(grid.points) == math.prod(len(v) for v in axes.values()) and grid.skipped == 0
    assert all(set(p) == set(SETTINGS) for p in grid.points)
    assert len({point_key(p) for p in grid.points}) == len(grid.points)  # one row per point
    # every combination appears, in order, last key fastest
    combos = [tuple(p[k] for k in axes) for p in grid.points]
    assert combos == sorted(combos, key=lambda c: [axes[k].index(v) for k, v in zip(axes, c)])


def test_defaults_are_the_tournament_and_extension_reads_only_rope():
    g = parse_grid('[grid]\nscheme = ["nope", "rope", "alibi"]\nextension = ["none", "pi", "ntk", "yarn"]\n')
    assert g.skipped == 2 * 3  # nope and alibi with pi, ntk, yarn
    assert [(p["scheme"], p["extension"]) for p in g.points] == [
        ("nope", "none"), ("rope", "none"), ("rope", "pi"), ("rope", "ntk"), ("rope", "yarn"), ("alibi", "none"),
    ]  # fmt: skip
    assert train_config(g.points[1]) == preset("tournament", "rope")
    assert g.points[0]["test_lengths"] == [32, 64, 128, 256] and g.points[0]["test_size"] == 2000
    # the four RoPE readings share one training; the other schemes have their own
    assert sorted(len(j) for j in group_jobs([(point_key(p), p) for p in g.points])) == [1, 1, 4]


def test_array_of_grids_is_a_union_and_duplicates_collapse():
    text = '[fixed]\nsteps = 7\n[[grid]]\nscheme = ["nope", "rope"]\n[[grid]]\nscheme = ["rope"]\nextension = ["pi"]\n'
    g = parse_grid(text)
    assert [(p["scheme"], p["extension"], p["steps"]) for p in g.points] == [
        ("nope", "none", 7), ("rope", "none", 7), ("rope", "pi", 7),
    ]  # fmt: skip
    assert len(parse_grid("[[grid]]\nseed = [0, 1]\n[[grid]]\nseed = [1, 2]\n").points) == 3


def test_point_key_is_the_configuration():
    p = parse_grid("").points[0]
    assert point_key(p) == point_key(dict(sorted(p.items())))
    for key, other in [("seed", 1), ("lr", 0.03), ("test_lengths", [32]), ("extension", "pi"), ("embedding", "table")]:
        assert point_key({**p, key: other}) != point_key(p)


def test_reading_defaults_are_the_tournaments():
    p = parse_grid("").points[0]
    assert (p["test_lengths"], p["test_size"], p["test_seed"]) == (list(TEST_LENGTHS), TEST_COUNT, TEST_SEED)
    assert (p["test_lengths"], p["test_size"]) == ([32, 64, 128, 256], 2000)  # the article: 2,000 per length


BAD = [
    # (grid text, line, words the message must contain)
    ("[fixed]\nsteps = 3\n[grid]\nscheme = [rope]\n", 4, ["not valid TOML", "scheme = [rope]"]),
    ('[fixed]\nsteps = 10\n\n[grid]\nsceme = ["rope"]\n', 5, ["[grid] sceme", "unknown setting"]),
    ("[fixed]\nsteps = 10\nd = 15\n", 3, ["[fixed] d", "15"]),
    ('[grid]\nscheme = ["rope", "ropee"]\n', 2, ["[grid] scheme", "ropee", "alibi"]),
    ('[grid]\nseed = [0, "1"]\n', 2, ["[grid] seed", "integer", "'1'"]),
    ("[grid]\nlr = 0.1\n", 2, ["[grid] lr", "list"]),
    ("[grid]\nseed = []\n", 2, ["[grid] seed", "non-empty"]),
    ("[grid]\nseed = [1, 1]\n", 2, ["[grid] seed", "twice"]),
    ("[fixed]\nseed = 0\n[grid]\nseed = [1, 2]\n", 4, ["[grid] seed", "[fixed] (line 2)"]),
    ("[fixed]\ntest_lengths = [32, 1]\n", 2, ["[fixed] test_lengths", ">= 2"]),
    ('[fixed]\nextension = "longer"\n', 2, ["[fixed] extension", "'longer'", "yarn"]),
    ("[fixed]\nbeta1 = 1.5\n", 2, ["[fixed] beta1", "1.5"]),
    ("[fixed]\nsteps = 10\n[sweeep]\nx = 1\n", 3, ["[sweeep]", "unknown table"]),
    ("[fixed]\nsteps = 10\n[grid]\nd = [16, 32]\n[grid.x]\n", 5, ["[grid] x", "unknown setting"]),
    ('[sweep]\npreset = "slow"\n', 2, ["[sweep] preset", "'slow'", "quick"]),
    ("[[grid]]\nseed = [0]\n[[grid]]\nseed = [1]\nstep = [3]\n", 5, ["[grid] step"]),
]


@pytest.mark.parametrize("text, line, words", BAD)
def test_malformed_grid_names_key_and_line(text, line, words):
    with pytest.raises(PosKernelsError) as err:
        parse_grid(text, "g.toml")
    message = str(err.value)
    assert message.startswith(f"g.toml, line {line}:"), message
    for w in words:
        assert w in message, (w, message)


def test_cli_reports_a_malformed_grid(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text("[fixed]\nsteps = 30\n\n[grid]\nd = [16, 17]\n")
    assert main(["sweep", str(grid), "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert f"{grid}, line 5: [grid] d:" in err and "17" in err
    assert not (tmp_path / "s.sqlite").exists()  # nothing is created before the grid is checked
    with pytest.raises(PosKernelsError, match="cannot read the grid file"):
        load_grid(tmp_path / "missing.toml")


def test_the_example_grid():
    g = load_grid(Path(__file__).resolve().parents[1] / "examples" / "grid.toml")
    assert len(g.points) == 5 * 3 * 3 + 3 * 3 * 3 and g.skipped == 0
    assert len(group_jobs([(point_key(p), p) for p in g.points])) == 45  # the re-reads train nothing new
    d16 = [p for p in g.points if p["d"] == 16 and p["extension"] == "none" and p["seed"] == 0]
    assert [train_config(p) for p in d16] == [preset("tournament", s) for s in ARTICLE_SCHEMES]
