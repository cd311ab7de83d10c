"""Numeric inputs that were silently wrong or ended in a foreign error: each is a PosKernelsError that quotes it.

One table per class: the streaming reader's batch and chunk, ``recent_weights``, the needle's size budget, the
long-context grids, the trainer's entry points, a ``layer_type`` that is not a name, and the cross-entropy's targets
(out of range they read another row's logits: a wrong loss, silently).  Every call runs under a time limit and an
address-space ceiling (:mod:`robust`): no hang, no gigabytes, nothing but the library's error.  The needle task of
the sweep reads its sequences at the point's own training length.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from poskernels.errors import PosKernelsError
from poskernels.model.config import HeadConfig, TrainConfig, preset
from poskernels.model.engine.one_head import cross_entropy, query_logits
from poskernels.model.engine.reductions import stack_cross_entropy
from poskernels.model.engine.stream import recent_weights, stream_logits, stream_many
from poskernels.model.head import PLAIN, init_params
from poskernels.model.train import train, train_many, train_stack
from poskernels.tasks.cue import cue_batch
from poskernels.tasks.needle import needle_batch
from quoting import assert_quotes
from robust import assert_only_library_error, work_limit

ALIBI = HeadConfig(scheme="alibi")
ROPE = HeadConfig(scheme="rope")
P_ALIBI = init_params(ALIBI, np.random.default_rng(0))
P_ROPE = init_params(ROPE, np.random.default_rng(0))
X, Y = cue_batch(np.random.default_rng(1), 3, 40)
TINY = TrainConfig(head=ALIBI, steps=2, batch=4)
RNG = np.random.default_rng


def _long(**kwargs):
    from poskernels.experiments.long_context import run_long_context

    args = {"seeds": [0], "lengths": (32,), "offsets": (), "count": 2, "config": TINY, "schemes": ["alibi"]}
    return run_long_context(**{**args, "workers": 1, **kwargs})


def _sequences(*args, **kwargs):
    from poskernels.experiments.long_sets import sequences

    return sequences(*args, **kwargs)


# (what, call, the value the message must quote)
FOREIGN = [
    ("stream: an empty batch", lambda: stream_logits(P_ALIBI, ALIBI, X[:0]), "(0, 40)"),
    ("stream: chunk 0", lambda: stream_logits(P_ALIBI, ALIBI, X, chunk=0), "0"),
    ("stream: chunk -1", lambda: stream_logits(P_ALIBI, ALIBI, X, chunk=-1), "-1"),
    ("stream: chunk 2.5", lambda: stream_logits(P_ALIBI, ALIBI, X, chunk=2.5), "2.5"),
    ("stream: chunk True", lambda: stream_logits(P_ALIBI, ALIBI, X, chunk=True), "True"),
    ("stream: eps 0", lambda: stream_logits(P_ALIBI, ALIBI, X, eps=0.0), "0.0"),
    ("stream: eps 1", lambda: stream_logits(P_ALIBI, ALIBI, X, eps=1), "1"),
    ("stream: eps nan", lambda: stream_logits(P_ALIBI, ALIBI, X, eps=float("nan")), "nan"),
    ("stream: eps a string", lambda: stream_logits(P_ALIBI, ALIBI, X, eps="1e-3"), "'1e-3'"),
    ("stream: eps on a head without a cut", lambda: stream_logits(P_ROPE, ROPE, X, eps=-1.0), "-1.0"),
    ("stream: heads a string", lambda: stream_many("abc", X), "str"),
    ("stream: a pair, not a triple", lambda: stream_many([(P_ALIBI, ALIBI)], X), "(dict, HeadConfig)"),
    ("stream: a scheme name for a config", lambda: stream_many([(P_ALIBI, "alibi", PLAIN)], X), "str"),
    ("recent_weights: chunk -1", lambda: recent_weights(P_ALIBI, ALIBI, X, 3, chunk=-1), "-1"),
    ("recent_weights: chunk 0", lambda: recent_weights(P_ALIBI, ALIBI, X, 3, chunk=0), "0"),
    ("recent_weights: k 0", lambda: recent_weights(P_ALIBI, ALIBI, X, 0), "0"),
    ("needle: 10^6 x 10^6 tokens", lambda: needle_batch(RNG(0), 10**6, 10**6), "1000000 x 1000001 tokens"),
    ("needle: 10^12 sequences", lambda: needle_batch(RNG(0), 10**12, 3), "1000000000000 x 4 tokens"),
    ("needle: r 0", lambda: needle_batch(RNG(0), 2, 0), "0"),
    ("needle: n below r + 1", lambda: needle_batch(RNG(0), 2, 5, 5), "5"),
    ("needle: a seed for an rng", lambda: needle_batch(0, 2, 5), "0"),
    ("long: count 0", lambda: _long(count=0), "0"),
    ("long: count -5", lambda: _long(count=-5), "-5"),
    ("long: length 0", lambda: _long(lengths=(0,)), "0"),
    ("long: length 1", lambda: _long(lengths=(1,)), "1"),
    ("long: length 2.5", lambda: _long(lengths=(2.5,)), "2.5"),
    ("long: offset 0", lambda: _long(offsets=(0,)), "0"),
    ("long: offset 2**40", lambda: _long(offsets=(2**40,)), "1099511627776"),
    ("long: lengths a string", lambda: _long(lengths="32"), "str"),
    ("long: nothing to read", lambda: _long(lengths=(), offsets=()), "nothing to read"),
    ("long: no seeds", lambda: _long(seeds=[]), "[]"),
    ("long: a negative seed", lambda: _long(seeds=[-1]), "-1"),
    ("long: a seed string", lambda: _long(seeds="01"), "str"),
    ("long: repeated seeds", lambda: _long(seeds=[3, 3]), "[3, 3]"),
    ("long: a misspelt scheme", lambda: _long(schemes=["alibl"]), "'alibl'"),
    ("long: a preset name for a config", lambda: _long(config="tournament"), "str"),
    ("long sequences: length 0", lambda: _sequences("length", 0, 4), "0"),
    ("long sequences: offset 0", lambda: _sequences("distance", 0, 4), "0"),
    ("long sequences: an unknown task", lambda: _sequences("lenght", 8, 4), "'lenght'"),
    ("long sequences: count 0", lambda: _sequences("length", 8, 0), "0"),
    ("long sequences: n_train 0", lambda: _sequences("distance", 3, 4, n_train=0), "0"),
    ("train: a dict for a config", lambda: train({"steps": 2}, 0), "dict"),
    ("train: a seed string", lambda: train(TINY, "0"), "'0'"),
    ("train: a float seed", lambda: train(TINY, 2.0), "2.0"),
    ("train: a negative seed", lambda: train(TINY, -1), "-1"),
    ("train: a 5,000-digit seed", lambda: train(TINY, -(10**5000)), "5001 digits"),
    ("train: cache_dir 5", lambda: train(TINY, 0, cache_dir=5), "int"),
    ("train: a sampler name", lambda: train(TINY, 0, sampler="cue"), "'cue'"),
    ("train: log 3", lambda: train(TINY, 0, log=3), "3"),
    ("train: progress_every -1", lambda: train(TINY, 0, progress_every=-1), "-1"),
    ("train: progress_every a string", lambda: train(TINY, 0, progress_every="10"), "'10'"),
    ("train_stack: seeds 5", lambda: train_stack(TINY, 5), "5"),
    ("train_stack: seeds a string", lambda: train_stack(TINY, "01"), "'01'"),
    ("train_stack: a seed None", lambda: train_stack(TINY, [0, None]), "None"),
    ("train_many: a job of one", lambda: train_many([(TINY,)]), "(TrainConfig)"),
    ("train_many: a config name", lambda: train_many([("cue", 0)]), "(str, int)"),
    ("train_many: jobs 5", lambda: train_many(5), "int"),
    ("train_many: a job's seed string", lambda: train_many([(TINY, "1")]), "'1'"),
    ("train_many: workers 0", lambda: train_many([(TINY, 0)], workers=0), "0"),
    ("train_many: workers a string", lambda: train_many([(TINY, 0)], workers="2"), "'2'"),
    ("train_many: log a string", lambda: train_many([(TINY, 0)], log="stderr"), "'stderr'"),
]


def _census_layer_type_list():
    from poskernels.census import census_all

    return census_all("llama-3.1-8b", layer_type=["full_attention"])


def _parse_layer_type_list():
    from poskernels.census.config import parse_config

    raw = {
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "layer_types": ["sliding_attention", "full_attention"],
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        },
    }
    return parse_config(raw, layer_type=["full_attention"])


FOREIGN += [
    ("census: a layer_type list", _census_layer_type_list, "['full_attention']"),
    ("config: a layer_type list", _parse_layer_type_list, "['full_attention']"),
]

SILENT = [
    ("cross_entropy: target C", lambda: cross_entropy(np.zeros((2, 4)), [0, 4]), "4"),
    ("cross_entropy: target -1", lambda: cross_entropy(np.zeros((2, 4)), [0, -1]), "-1"),
    ("cross_entropy: target 10**6", lambda: cross_entropy(np.zeros((2, 4)), [0, 10**6]), "1000000"),
    ("cross_entropy: a half target", lambda: cross_entropy(np.zeros((2, 4)), [0, 1.5]), "1.5"),
    ("cross_entropy: targets for another batch", lambda: cross_entropy(np.zeros((2, 4)), [0, 1, 2]), "(3,)"),
    ("cross_entropy: 1-d logits", lambda: cross_entropy(np.zeros(4), [0]), "(4,)"),
    ("stack: target C", lambda: stack_cross_entropy(np.zeros((2, 2, 4)), [[0, 1], [4, 0]]), "4"),
    ("stack: target -3", lambda: stack_cross_entropy(np.zeros((2, 2, 4)), [[0, -3], [1, 0]]), "-3"),
    ("stack: targets of one model", lambda: stack_cross_entropy(np.zeros((2, 2, 4)), [0, 1]), "(2,)"),
    ("stack: bool targets", lambda: stack_cross_entropy(np.zeros((1, 2, 4)), [[True, False]]), "bool"),
    ("stack: no classes", lambda: stack_cross_entropy(np.zeros((1, 2, 0)), [[0, 0]]), "(1, 2, 0)"),
]


@pytest.mark.parametrize(("what", "call", "quoted"), FOREIGN + SILENT, ids=[c[0] for c in FOREIGN + SILENT])
def test_refused_with_the_value_quoted(what, call, quoted):
    assert_only_library_error(call)  # no foreign error, no hang, no gigabytes on the way
    with work_limit(), pytest.raises(PosKernelsError) as err:
        call()
    assert_quotes(str(err.value), quoted)


def test_a_target_out_of_range_no_longer_reads_the_next_rows_logit():
    # before: target 4 of row 0 was flat index 4, row 1's class 0: a finite, wrong loss and gradient
    logits = np.array([[0.0, 0.0, 0.0, 0.0], [9.0, 0.0, 0.0, 0.0]])
    with pytest.raises(PosKernelsError, match="got 4 at index 0"):
        cross_entropy(logits, [4, 0])


def test_stream_chunk_past_the_sequence_costs_the_sequence_not_the_chunk():
    # a rotary head sized its per-chunk tables by chunk: 10**12 asked for terabytes
    want = stream_logits(P_ROPE, ROPE, X, chunk=16)
    assert_only_library_error(stream_logits, P_ROPE, ROPE, X, chunk=10**12)
    np.testing.assert_allclose(stream_logits(P_ROPE, ROPE, X, chunk=10**12), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(want, query_logits(P_ROPE, ROPE, X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_train", [8, 16, 32, 64])
def test_the_needle_of_a_point_is_read_at_the_heads_own_training_length(n_train):
    from poskernels.experiments.long_context import read_head
    from poskernels.experiments.long_sets import sequences
    from poskernels.model.train import TrainedHead

    config = replace(TINY, head=replace(ALIBI, n_train=n_train))
    head = TrainedHead(config, 0, init_params(config.head, RNG(3)), np.zeros(2), "")
    for r in (1, 5, 40):
        tokens, targets = sequences("distance", r, 20, 11, n_train)
        assert tokens.shape == (20, max(n_train, r + 1))  # the training length while the needle fits in it
        assert (tokens[:, -1 - r] >= 8).all() and ((tokens[:, :-1] >= 8).sum(axis=1) == 1).all()
        acc = float(np.mean(np.argmax(query_logits(head.params, head.head, tokens), axis=1) == targets))
        assert read_head(head, None, "distance", r, 20, 11) == pytest.approx(acc, abs=0)


def test_a_needle_sweep_point_honours_n_train():
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.point import point_key, run_job

    text = '[fixed]\nscheme = "alibi"\nsteps = 3\nbatch = 4\nn_train = 8\ntest_task = "needle"\ntest_lengths = [3]'
    point = parse_grid(text + "\ntest_size = 30").points[0]
    got = run_job({"points": [[point_key(point), point]], "cache_dir": None})["results"][point_key(point)]
    from poskernels.experiments.long_sets import sequences
    from poskernels.sweep.point import train_config

    head = train(train_config(point), point["seed"])
    tokens, targets = sequences("distance", 3, 30, point["test_seed"], 8)
    assert tokens.shape[1] == 8  # not 32: the length the head was trained at
    acc = float(np.mean(np.argmax(query_logits(head.params, head.head, tokens), axis=1) == targets))
    assert got["accuracy"]["3"] == acc


def test_the_tournaments_needle_is_unchanged_at_length_32():
    from poskernels.experiments.long_sets import sequences

    a, b = sequences("distance", 5, 7), sequences("distance", 5, 7, n_train=32)
    assert a[0].shape == (7, 32) and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_the_trainer_still_takes_numpy_seeds_and_paths():
    import pathlib
    import tempfile

    h = train(TINY, np.int64(1), cache_dir=pathlib.Path(tempfile.mkdtemp()))
    assert h.seed == 1 and train_stack(TINY, np.arange(2))[1].seed == 1
    assert train_many([(TINY, np.int32(0))], workers=1)[0].seed == 0
    assert preset("quick") is not None


def test_a_needle_grid_counts_its_test_set_at_the_training_length():
    from poskernels.sweep.grid import parse_grid

    text = '[fixed]\nbatch = 1\nn_train = 4096\ntest_task = "needle"\ntest_lengths = [2]\ntest_size = 5000'
    with pytest.raises(PosKernelsError, match=r"test_size 5000 x length 4096"):
        parse_grid(text)  # 5000 sequences of 4096 tokens, not of 3
    assert parse_grid(text.replace("5000", "4000")).points[0]["test_size"] == 4000
