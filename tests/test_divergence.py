"""Divergence is a result, not a crash: a head whose loss turns non-finite or passes the bound stops at that step.

It leaves its stack (the others keep the bits they have alone), is cached as diverged with the step (so it is not
retrained, and not trusted as a trained head: every reading refuses it), and a sweep point records
``diverged at step k`` as its failure.  Training that does not diverge is untouched: ``numbers.json`` is compared
byte for byte after a reproduce (the report's command), and here a stack with diverging members against each head
trained alone.
"""

from __future__ import annotations

import math
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

from poskernels.errors import PosKernelsError
from poskernels.model.config import preset
from poskernels.model.train import load_head, train, train_stack
from poskernels.model.train_loop import DIVERGED_FACTOR
from poskernels.tasks.cue import cue_batch

LR_1000 = replace(preset("quick", "alibi"), lr=1000.0, steps=20, batch=16)
#: ALiBi at lr 0.6, 60 steps of 16: five seeds of six diverge, at different steps, and seed 5 trains to the end.
MIXED = replace(preset("quick", "alibi"), lr=0.6, steps=60, batch=16)


def test_a_head_at_lr_1000_stops_at_the_step_its_loss_explodes(tmp_path):
    seen = []
    head = train(LR_1000, 0, tmp_path, log=seen.append)
    k = head.diverged
    assert k is not None and 1 <= k <= LR_1000.steps
    assert np.isfinite(head.losses[: k - 1]).all() and np.all(head.losses[: k - 1] <= DIVERGED_FACTOR * math.log(8))
    assert not head.losses[k - 1] <= DIVERGED_FACTOR * math.log(8)  # the step that stopped it: past the bound
    assert np.isnan(head.losses[k:]).all()  # no step after it
    assert any(f"diverged at step {k}" in m for m in seen)
    again = load_head(tmp_path, LR_1000, 0)  # cached with its step: a result, not retrained
    assert again.diverged == k and again.key == head.key
    assert np.array_equal(again.losses, head.losses, equal_nan=True)


def test_a_huge_embedding_scale_diverges_at_the_first_step():
    config = replace(LR_1000, lr=0.01, head=replace(LR_1000.head, embed_scale=1e6))
    assert [h.diverged for h in train_stack(config, [0, 1])] == [1, 1]


def test_heads_that_diverge_leave_the_stack_and_the_others_keep_their_bits():
    stacked = train_stack(MIXED, list(range(6)))
    steps = [h.diverged for h in stacked]
    assert None in steps and len({s for s in steps if s is not None}) > 1  # the case this test is about
    for h in stacked:
        alone = train(MIXED, h.seed)
        assert h.diverged == alone.diverged
        assert np.array_equal(h.losses, alone.losses, equal_nan=True)
        for name, value in alone.params.items():
            assert np.array_equal(h.params[name], value, equal_nan=True), (h.seed, name)


def test_training_that_does_not_diverge_has_every_loss_and_no_step():
    head = train(preset("quick", "rope"), 0)
    assert head.diverged is None and np.isfinite(head.losses).all()


@pytest.mark.parametrize("reader", ["evaluate", "tournament", "long", "needle"])
def test_a_diverged_head_has_no_accuracy(reader):
    from poskernels.experiments.held_out import head_accuracy
    from poskernels.experiments.long_context import read_head
    from poskernels.model.train import evaluate

    head = train(LR_1000, 0)
    call = {
        "evaluate": lambda: evaluate(head, *cue_batch(np.random.default_rng(0), 10, 32)),
        "tournament": lambda: head_accuracy(head, 32),
        "long": lambda: read_head(head, None, "length", 64, 5),
        "needle": lambda: read_head(head, None, "distance", 4, 5),
    }[reader]
    with pytest.raises(PosKernelsError, match=f"diverged at step {head.diverged}"):
        call()


@pytest.mark.parametrize("stored", [0, -3, "2", 2.5, True, [2]])
def test_a_cache_entry_with_a_garbled_step_is_retrained(tmp_path, stored):
    from poskernels.model.cache_arrays import load_arrays, save_arrays
    from poskernels.model.train import head_path

    head = train(LR_1000, 0, tmp_path)
    path = head_path(tmp_path, LR_1000, 0)
    arrays, meta = load_arrays(path)
    save_arrays(path, arrays, {**{k: v for k, v in meta.items() if k != "sha256"}, "diverged": stored})
    assert load_head(tmp_path, LR_1000, 0) is None and not path.exists()
    assert train(LR_1000, 0, tmp_path).diverged == head.diverged  # retrained: the same step


def test_a_sweep_point_whose_head_diverges_fails_with_the_step(tmp_path):
    from poskernels.sweep.backends import Backend
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.runner import run_sweep
    from poskernels.sweep.store import Store

    text = (
        '[fixed]\nscheme = "alibi"\nsteps = 20\nbatch = 16\ntest_lengths = [16, 64]\ntest_size = 20\n'
        '[grid]\nlr = [0.01, 1000.0]\nseed = [0, 1]\ntest_task = ["cue", "needle"]'
    )
    grid = parse_grid(text)
    threads = Backend("threads:2", 2, new=lambda: ThreadPoolExecutor(2))
    with Store(tmp_path / "s.sqlite") as store:
        s = run_sweep(grid, store, threads, cache_dir=tmp_path / "cache", stream=sys.stdout)
        assert (s.done, s.failed) == (4, 4)
        rows = store.rows()
        for row in rows:
            if row["config"]["lr"] == 1000.0:
                assert row["status"] == "failed" and row["error"].startswith("diverged at step ")
                assert row["error"].endswith(")") and " of 20 (loss " in row["error"]
            else:
                assert row["status"] == "done" and all(0 <= a <= 1 for a in row["metrics"]["accuracy"].values())
        again = run_sweep(grid, store, threads, cache_dir=tmp_path / "cache", retry_failed=True, stream=sys.stdout)
        assert (again.failed, again.trained) == (4, 0)  # the diverged heads come from the cache: the same failure
        assert [r["error"] for r in store.rows() if r["config"]["lr"] == 1000.0] == [
            r["error"] for r in rows if r["config"]["lr"] == 1000.0
        ]
