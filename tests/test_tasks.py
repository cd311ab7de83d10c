"""A task is one record: the registry's records, the recall sampler, and recall run end to end by the tournament
and a sweep; the cue heads' configurations and keys are the ones they were."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from poskernels.cli import main
from poskernels.errors import PosKernelsError
from poskernels.experiments.held_out import heldout
from poskernels.model.cache import cache_key
from poskernels.model.config import HeadConfig, TrainConfig, preset
from poskernels.seeds import first_seed
from poskernels.sweep.grid import parse_grid
from poskernels.sweep.point import point_key, run_job, train_config
from poskernels.tasks.recall import N_PAIRS, bag_reader_score, recall_batch
from poskernels.tasks.registry import TASKS, get_spec, layout_of, tournament_tasks


@pytest.mark.parametrize("name", sorted(tournament_tasks()))
def test_each_record_draws_what_its_layout_says(name):
    spec = get_spec(name)
    layout = spec.layout
    for n in spec.lengths:
        tokens, targets = spec.sampler(np.random.default_rng(n), 64, n)
        assert tokens.shape == (64, n) and targets.shape == (64,) and targets.dtype == np.int64
        assert 0 <= tokens.min() and tokens.max() < layout.vocab
        assert 0 <= targets.min() and targets.max() < layout.n_classes
        assert set(tokens[:, -1].tolist()) <= set(layout.queries)
    x, y = heldout(spec.lengths[0], task=name)
    assert x.shape == (spec.test_count, spec.lengths[0]) and not x.flags.writeable
    again = spec.heldout(spec.lengths[0])  # a fresh draw from the record's seed: the same sequences
    assert np.array_equal(x, again[0]) and np.array_equal(y, again[1])
    config = preset("tournament", "rope").with_task(name)
    assert (config.head.vocab, config.head.n_classes) == (layout.vocab, layout.n_classes)
    assert config.head.embedding in layout.embeddings


def test_recall_sampler_pairs_each_key_once_and_answers_with_its_value():
    rng = np.random.default_rng(5)
    tokens, targets = recall_batch(rng, 500, 40)
    V, K, P = 16, 16, N_PAIRS
    assert tokens.dtype == np.int64 and tokens.shape == (500, 40) and targets.shape == (500,)
    keys, values = tokens[:, 0 : 2 * P : 2], tokens[:, 1 : 2 * P : 2]  # (500, P) each
    assert ((keys >= V) & (keys < V + K)).all() and ((values >= 0) & (values < V)).all()  # disjoint vocabularies
    assert (tokens[:, 2 * P : -1] == V + K).all()  # the pads, up to the query
    for row in range(500):
        before = tokens[row, :-1]
        assert len(set(keys[row].tolist())) == P and len(set(values[row].tolist())) == P
        query = tokens[row, -1]
        assert V <= query < V + K and (before == query).sum() == 1  # the query is a key seen exactly once
        at = int(np.flatnonzero(before == query)[0])
        assert targets[row] == before[at + 1]  # the value paired with the queried key
    asked = [int(np.flatnonzero(keys[r] == tokens[r, -1])[0]) for r in range(500)]
    assert set(asked) == set(range(P))  # every pair is asked for
    again = recall_batch(np.random.default_rng(5), 500, 40)
    assert np.array_equal(again[0], tokens) and np.array_equal(again[1], targets)
    other = recall_batch(np.random.default_rng(6), 500, 40)
    assert not np.array_equal(other[0], tokens)
    assert np.all(bag_reader_score(tokens, targets) == 1 / P)  # P distinct values: a bag reader guesses one of P


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"n": 16}, "n must be >= 2 n_pairs + 1 = 17"),
        ({"n": 40, "n_pairs": 17}, "at most min(n_keys, n_values) = 16"),
        ({"n": 40, "batch": 0}, "batch"),
    ],
)
def test_recall_refuses_sizes_it_cannot_draw(kwargs, words):
    args = {"batch": 2, **kwargs}
    with pytest.raises(PosKernelsError, match=re.escape(words)):
        recall_batch(np.random.default_rng(0), **args)


def test_a_head_must_spell_its_task():
    with pytest.raises(PosKernelsError, match="does not match task 'recall'"):
        TrainConfig(task="recall")  # the cue head's 17 ids
    head = preset("tournament").with_task("recall").head
    with pytest.raises(PosKernelsError, match="embedding 'factored' does not read task 'recall'"):
        TrainConfig(head=HeadConfig(vocab=head.vocab, n_classes=head.n_classes), task="recall")
    with pytest.raises(PosKernelsError, match="factored embedding must be 2 S \\+ 1"):
        HeadConfig(vocab=20)
    assert HeadConfig(vocab=20, embedding="table").vocab == 20  # a table reads any layout
    TrainConfig(head=HeadConfig(vocab=20, embedding="table"), task="my-stream")  # a stream outside the registry


def test_the_cue_heads_keep_their_configuration_and_key():
    for scheme in ("rope", "alibi", "learned"):
        config = preset("tournament", scheme)
        assert config.with_task("cue") == config
        assert cache_key({**config.with_task("cue").to_dict(), "seed": 3}) == cache_key({**config.to_dict(), "seed": 3})
    assert layout_of("cue") == TASKS["cue"].layout and layout_of("filings-s0-abc") == TASKS["cue"].layout


def test_the_tournament_runs_recall_end_to_end(tmp_path, capsys):
    argv = ["tournament", "--task", "recall", "--schemes", "nope,alibi", "--seeds", "1", "--lengths", "32,64",
            "--cache", str(tmp_path), "--json", "-"]  # fmt: skip
    assert main(argv) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["task"] == "recall" and table["lengths"] == [32, 64] and table["seeds"] == [first_seed()]
    for key in ("accuracy", "stderr", "per_seed"):
        assert sorted(table[key]) == ["alibi", "nope"] and all(sorted(v) == ["32", "64"] for v in table[key].values())
    assert all(0 <= table["accuracy"][s][n] <= 1 for s in ("alibi", "nope") for n in ("32", "64"))
    assert table["exact_reader"] == {"32": 1 / N_PAIRS, "64": 1 / N_PAIRS}
    files = sorted(p.name for p in tmp_path.rglob("*.npz"))
    assert len(files) == 2 and all(f.startswith("recall-") for f in files)


def test_a_bad_task_exits_2_naming_the_accepted(tmp_path, capsys):
    assert main(["tournament", "--task", "recal", "--cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "recal" in err and "cue, recall" in err
    assert not list(tmp_path.rglob("*.npz"))


def test_a_sweep_point_trains_and_reads_its_task():
    g = parse_grid('[fixed]\ntask = "recall"\nsteps = 5\nbatch = 4\ntest_lengths = [20]\ntest_size = 10')
    p = g.points[0]
    assert (p["task"], p["test_task"], p["embedding"]) == ("recall", "recall", "table")
    assert train_config(p).task == "recall" and train_config(p).head.vocab == 33
    out = run_job({"points": [[point_key(p), p]], "cache_dir": None})
    assert list(out["results"][point_key(p)]["accuracy"]) == ["20"]
    cue = parse_grid("").points[0]
    assert (cue["task"], cue["test_task"], cue["embedding"]) == ("cue", "cue", "factored")
    with pytest.raises(PosKernelsError, match="read on that task's test sets"):
        parse_grid('[fixed]\ntask = "recall"\ntest_task = "needle"')
    with pytest.raises(PosKernelsError, match="unknown task 'recal'"):
        parse_grid('[fixed]\ntask = "recal"')
