"""A sweep over the tournament's own points gives the tournament's numbers, bit for bit.

The heads are the article's run, trained once into the repository's cache (``.cache/poskernels``, the one
``poskernels reproduce`` and ``tests/test_tournament.py`` fill); the sweep reads them through ``--cache``
and must train none, and its accuracies must equal ``run_laboratory``'s per-seed figures exactly.
"""

from __future__ import annotations

import sys

from conftest import CACHE, SEEDS
from poskernels.experiments.laboratory import run_laboratory
from poskernels.sweep.backends import local_backend
from poskernels.sweep.grid import parse_grid
from poskernels.sweep.runner import run_sweep
from poskernels.sweep.store import Store

GRID = """
[[grid]]
scheme = ["nope", "sinusoidal", "learned", "rope", "alibi", "t5", "shaw"]
seed = [{one}]

[[grid]]
scheme = ["rope"]
extension = ["pi", "ntk", "yarn"]
seed = [{two}]
"""


def test_a_sweep_of_the_tournament_gives_its_numbers(tmp_path):
    lab = run_laboratory(CACHE, seeds=SEEDS)  # loads (or, on a cold cache, trains once) the tournament's heads
    seeds = lab["tournament"]["seeds"]  # the block of $POSKERNELS_FIRST_SEED
    grid = parse_grid(GRID.format(one=seeds[1], two=seeds[2]))
    with Store(tmp_path / "s.sqlite") as store:
        s = run_sweep(grid, store, local_backend(2), cache_dir=CACHE, stream=sys.stdout)
        rows = store.rows()
    assert (s.done, s.failed, s.trained) == (10, 0, 0)  # every head came from the cache
    assert {r["trained"] for r in rows} == {0}
    for r in rows:
        cfg, acc = r["config"], r["metrics"]["accuracy"]
        if cfg["extension"] == "none":
            table = lab["tournament"]["per_seed"][cfg["scheme"]]
            assert acc == {n: table[n][seeds.index(cfg["seed"])] for n in table}, cfg["scheme"]
        else:  # the re-reads of the tournament are at the lengths past the window
            table = lab["rescaled"]["per_seed"][f"rope_{cfg['extension']}"]
            i = seeds.index(cfg["seed"])
            assert {n: acc[n] for n in table} == {n: table[n][i] for n in table}, cfg["extension"]
