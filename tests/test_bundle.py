"""Bundles: stacks of one training stream trained in lockstep on one draw give every head the bits it has alone."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from poskernels.encodings import SCHEMES
from poskernels.errors import PosKernelsError
from poskernels.model.config import HeadConfig, TrainConfig, preset
from poskernels.model.grouping import BUNDLE_SIZE, bundles, stacks
from poskernels.model.train import train, train_bundle, train_many, train_stack
from poskernels.tasks.cue import cue_batch


def _same(a, b) -> bool:
    return (
        all(np.array_equal(a.params[k], b.params[k], equal_nan=True) for k in a.params)
        and np.array_equal(a.losses, b.losses, equal_nan=True)
        and a.diverged == b.diverged
    )


def test_every_scheme_trained_in_one_bundle_equals_its_stack_alone():
    # 70 steps of 32 cross a draw boundary (64 steps a draw); the randomized-position schemes draw their own positions
    configs = [TrainConfig(head=HeadConfig(scheme=s), steps=70, batch=32) for s in sorted(SCHEMES)]
    seeds = [4, 0, 9]
    bundled = train_bundle([(c, seeds) for c in configs])
    for config, heads in zip(configs, bundled):
        assert [h.seed for h in heads] == seeds
        for head, alone in zip(heads, train_stack(config, seeds)):
            assert _same(head, alone), (config.head.scheme, head.seed)


def test_a_bundle_draws_each_seed_once_for_all_its_stacks():
    calls = []

    def counting(rng, batch, n):
        calls.append(batch)
        return cue_batch(rng, batch, n)

    configs = [replace(preset("quick", s), steps=20, batch=16) for s in ("nope", "alibi", "rope")]
    bundled = train_bundle([(c, [0, 1]) for c in configs], sampler=counting)
    assert len(calls) == 2  # one draw per seed (20 steps of 16 fit one draw), not one per seed and stack
    for config, heads in zip(configs, bundled):
        for head in heads:
            assert _same(head, train_stack(config, [head.seed], sampler=counting)[0])


def test_a_head_that_diverges_in_a_bundle_leaves_its_stack_and_every_other_head_keeps_its_bits():
    mixed = replace(preset("quick", "alibi"), lr=0.6, steps=60, batch=16)  # five seeds of six diverge (test_divergence)
    calm = replace(mixed, lr=0.01, head=replace(mixed.head, scheme="nope"))
    seeds = list(range(6))
    diverging, steady = train_bundle([(mixed, seeds), (calm, seeds)])
    assert sum(h.diverged is not None for h in diverging) > 1  # the case this test is about
    for got, config in zip(diverging + steady, [mixed] * 6 + [calm] * 6):
        assert _same(got, train(config, got.seed)), got.seed  # each alone: a stack of one never drops a row


def test_a_bundle_trains_only_the_heads_missing_from_the_cache(tmp_path):
    a, b = (replace(preset("quick", s), steps=10, batch=8) for s in ("nope", "t5"))
    cached = train_stack(a, [1], tmp_path)[0]  # a's seed 1 is cached: a misses seed 2 only, b misses both
    calls = []

    def counting(rng, batch, n):
        calls.append(batch)
        return cue_batch(rng, batch, n)

    got_a, got_b = train_bundle([(a, [1, 2]), (b, [1, 2])], tmp_path, sampler=counting)
    assert _same(got_a[0], cached)
    assert len(calls) == 3  # b's two seeds in one lockstep group, a's missing seed in another
    for got, config in ((got_a, a), (got_b, b)):
        for head in got:
            assert _same(head, train_stack(config, [head.seed])[0])


def test_bundles_group_stacks_of_one_stream_and_split_for_the_pool():
    cue = [(replace(preset("quick", s), steps=10), [0, 1]) for s in sorted(SCHEMES)]
    other_seeds = [(replace(preset("quick", "rope"), steps=10), [2])]
    longer = [(replace(preset("quick", "nope"), steps=11), [0, 1])]  # another stream: more steps
    out = bundles(cue + other_seeds + longer)

    def key(stack):
        return stack[0].head.scheme, stack[0].steps, tuple(stack[1])

    assert sorted(key(s) for b in out for s in b) == sorted(map(key, cue + other_seeds + longer))  # each stack once
    assert all(len(b) <= BUNDLE_SIZE for b in out)
    assert all(len({(c.task, c.batch, c.head.n_train, c.steps, tuple(s)) for c, s in b}) == 1 for b in out)
    assert len(out) == -(-len(cue) // BUNDLE_SIZE) + 2
    assert len(bundles(cue, parts=len(cue))) == len(cue)  # split down to single stacks when the pool asks it
    assert len(bundles(cue[:1], parts=4)) == 1  # a single stack cannot split further


@pytest.mark.parametrize(
    ("bundle", "message"),
    [
        ([], "a bundle is a non-empty list"),
        ([(preset("quick", "nope"), [0]), (preset("quick", "rope"), [1])], "must share their seeds; got [0] and [1]"),
        ([(preset("quick", "nope"), [0]), (preset("tournament", "rope"), [0])], "must share one training stream"),
        ([(preset("quick", "nope"), [0, 0])], "must be distinct"),
        ([("nope", [0])], "a bundle is a non-empty list of (TrainConfig, seeds)"),
        ([preset("quick", "nope")], "a bundle is a non-empty list of (TrainConfig, seeds)"),
        ([(preset("quick", "nope"), [0], 1)], "a bundle is a non-empty list of (TrainConfig, seeds)"),
        ([(preset("quick", "nope"), "ab")], "seeds"),
    ],
)
def test_a_bundle_that_is_not_one_stream_is_refused(bundle, message):
    with pytest.raises(PosKernelsError) as err:
        train_bundle(bundle)
    assert message in str(err.value)


def test_train_many_trains_bundles_on_the_pool_with_the_bits_of_each_stack_alone(tmp_path):
    configs = [replace(preset("quick", s), steps=12, batch=8) for s in ("nope", "alibi", "t5", "rope", "sinusoidal")]
    jobs = [(c, seed) for c in configs for seed in (0, 1)]
    heads = train_many(jobs, tmp_path, workers=2)
    assert len(bundles(stacks(jobs, parts=2), parts=2)) >= 2
    for (config, seed), head in zip(jobs, heads):
        assert _same(head, train_stack(config, [seed])[0])


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"parts": 0}, "parts"), ({"size": 0}, "size"), ({"size": 1.5}, "size")]
)
def test_bundles_refuse_a_part_count_or_size_that_is_not_a_positive_integer(kwargs, message):
    with pytest.raises(PosKernelsError, match=message):
        bundles([(preset("quick", "nope"), [0])], **kwargs)
