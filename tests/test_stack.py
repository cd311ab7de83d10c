"""Stacked training: a head trained inside a stack equals the same seed trained alone, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.encodings import SCHEMES
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.embedding import EMBEDDINGS
from poskernels.model.train import head_path, stacks, train, train_many, train_stack
from poskernels.tasks.cue import cue_batch
from poskernels.tasks.registry import get_task


def _config(scheme, embedding="factored"):
    return TrainConfig(head=HeadConfig(scheme=scheme, embedding=embedding), steps=25, batch=16)


def _same(a, b) -> bool:
    return all(np.array_equal(a.params[k], b.params[k]) for k in a.params) and np.array_equal(a.losses, b.losses)


@pytest.mark.parametrize("embedding", sorted(EMBEDDINGS))
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_stacked_equals_alone_bit_for_bit(scheme, embedding):
    config = _config(scheme, embedding)
    seeds = [11, 2, 7]
    stacked = train_stack(config, seeds)
    for seed, head in zip(seeds, stacked):
        assert head.seed == seed
        assert _same(head, train(config, seed))
    assert not np.array_equal(stacked[0].params["W_Q"], stacked[1].params["W_Q"])  # the seeds differ


def test_a_stack_of_ten_equals_ten_heads_alone():
    config = TrainConfig(head=HeadConfig(scheme="rope"), steps=70, batch=32)  # crosses a draw boundary (64 steps)
    seeds = list(range(100, 110))
    stacked = train_stack(config, seeds)
    for seed in (100, 104, 109):
        assert _same(stacked[seed - 100], train(config, seed))
    # and in another grouping: a stack of ten split in two stacks of five
    for head, again in zip(stacked, train_stack(config, seeds[:5]) + train_stack(config, seeds[5:])):
        assert _same(head, again)


def test_a_stack_trains_only_the_heads_missing_from_the_cache(tmp_path):
    config = _config("alibi")
    alone = train(config, 3, tmp_path)  # one head of the stack is cached, trained alone
    calls = []

    def counting(rng, batch, n):
        calls.append(batch)
        return cue_batch(rng, batch, n)

    heads = train_stack(config, [1, 3, 5], tmp_path, sampler=counting)
    assert len(calls) == 2  # one draw per missing head (25 steps of 16 fit one draw)
    assert _same(heads[1], alone)
    for seed, head in zip([1, 3, 5], heads):
        assert head_path(tmp_path, config, seed).exists()
        assert _same(head, train(config, seed, tmp_path, sampler=_never))  # stored per head, keyed as alone
        assert _same(head, train(config, seed))


def _never(rng, batch, n):
    raise AssertionError("a cached head must not be retrained")


def test_train_many_groups_jobs_into_stacks(tmp_path):
    a, b = _config("nope"), _config("t5")
    jobs = [(a, 0), (b, 0), (a, 1), (a, 2), (b, 1), (a, 0)]
    log = []
    heads = train_many(jobs, tmp_path, log=log.append, workers=1)
    assert "in 2 stack(s)" in log[0]
    for (config, seed), head in zip(jobs, heads):
        assert head.config == config and head.seed == seed
        assert _same(head, train(config, seed))
    again = train_many(jobs, tmp_path, log=log.append, workers=1)
    assert all(_same(x, y) for x, y in zip(heads, again))
    assert len(log) == 3  # the second call found every head cached: nothing logged


def test_stacks_cover_every_job_once_and_split_for_the_pool():
    a, b = _config("nope"), _config("rope")
    jobs = [(a, s) for s in range(7)] + [(b, 0), (a, 3)]
    for parts in (1, 2, 3, 5, 20):
        groups = stacks(jobs, parts)
        pairs = [(c, s) for c, seeds in groups for s in seeds]
        assert sorted(pairs, key=lambda p: (p[0].head.scheme, p[1])) == sorted(
            set(jobs), key=lambda p: (p[0].head.scheme, p[1])
        )
        assert len(groups) >= min(parts, 8)  # split until there is a stack per process, or every stack is one head


def test_duplicate_seeds_in_a_stack_are_refused():
    from poskernels.errors import PosKernelsError

    with pytest.raises(PosKernelsError, match=r"distinct; got \[1, 1\]"):
        train_stack(_config("nope"), [1, 1])


def _cue_int64(rng, batch, n):
    return cue_batch(rng, batch, n)  # the same stream as the registered one, as int64 tokens


def test_the_token_type_of_the_stream_changes_nothing():
    # the registered cue stream hands uint8 tokens to the trainer; int64 ones train the same bits
    config = _config("rope")
    x8, _ = get_task("cue")(np.random.default_rng(0), 4, 32)
    x64, _ = _cue_int64(np.random.default_rng(0), 4, 32)
    assert x8.dtype == np.uint8 and x64.dtype == np.int64 and np.array_equal(x8, x64)
    assert _same(train(config, 3), train(config, 3, sampler=_cue_int64))
