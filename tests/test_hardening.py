"""The hostile inputs once found to end in a traceback, a hang, gigabytes or a silently wrong number, one by one.

Each must now be refused with PosKernelsError quoting the value (or, where the input is fine, be handled exactly).
The property tests (``test_robust_*.py``) cover the classes these belong to; this file keeps the instances.
"""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.census.config import parse_config
from poskernels.encodings import SCHEMES, apply_rope, omega, sinusoidal_code
from poskernels.errors import MAX_ELEMENTS, PosKernelsError, check_array, check_budget
from poskernels.extension import extend, position_interpolation
from poskernels.extension.ecosystem import dynamic_ntk
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.validate import check_positions, check_targets
from poskernels.sweep.grid import parse_grid
from poskernels.tasks.validate import check_cue_sizes
from poskernels.theory.commutant import condition_number_exact
from poskernels.theory.counting import bag_reader_accuracy, bag_reader_accuracy_exact
from quoting import assert_quotes

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: apply_rope(np.ones((3, 4)), [0, NAN, 2], omega(4)), "nan at index 1"),
        (lambda: apply_rope(np.ones((3, 4)), [0, 1, INF], omega(4)), "inf at index 2"),
        (lambda: sinusoidal_code([0.0, NAN], 8), "nan at index 1"),
        (lambda: sinusoidal_code(-INF, 8), "got -inf"),
        (lambda: check_positions([1.0, NAN], 2), "nan at index 1"),
        (lambda: check_targets([0, 8, 1], 8), "got 8 at index 1"),
        (lambda: check_targets([0, -1], 8), "got -1 at index 1"),
        (lambda: check_cue_sizes(128, 32, 10**400), "digits"),
    ],
)
def test_nan_positions_and_out_of_range_targets_are_refused(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    assert_quotes(str(err.value), quoted)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: omega(10**9), "at most 65536"),
        (lambda: omega(2 * 10**6), "at most 65536"),
        (lambda: HeadConfig(d=20000), "[2, 4096]"),
        (lambda: parse_config({"head_dim": 2 * 10**6, "max_position_embeddings": 4096}), "rotary width"),
        (lambda: sinusoidal_code(np.arange(10**6), 64), "limit is 16777216"),
        (lambda: condition_number_exact(4096, 64, digits=1000), "exact budget"),
        (lambda: bag_reader_accuracy(10**5), "at most 512"),
        (lambda: bag_reader_accuracy_exact(200), "exact budget"),
        (lambda: TrainConfig(steps=10**12), "[1, 10000000]"),
        (lambda: TrainConfig(batch=4096, head=HeadConfig(n_train=4096)), "limit is 67108864"),
    ],
)
def test_sizes_that_cannot_finish_or_fit_are_refused_before_allocating(call, words):
    with pytest.raises(PosKernelsError) as err:
        call()
    assert words in str(err.value), str(err.value)


def test_the_budget_says_its_limit_and_why():
    with pytest.raises(PosKernelsError, match=f"limit is {MAX_ELEMENTS} .*128 MiB of float64"):
        check_budget("a test array", MAX_ELEMENTS + 1)
    assert check_budget("a test array", MAX_ELEMENTS) == MAX_ELEMENTS  # the article's 4096 x 4096 Gram matrix


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: extend("yarn_hf", omega(16), 4, 32, truncate="no"), "got 'no'"),
        (lambda: TrainConfig(beta1=False), "got False"),
        (lambda: TrainConfig(task="../../x"), "got '../../x'"),
        (lambda: TrainConfig(task="a/b"), "got 'a/b'"),
        (
            lambda: parse_config(
                {"head_dim": 128, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": ["yarn"]}}
            ),
            "rope type ['yarn']",
        ),  # fmt: skip
        (lambda: parse_config({"head_dim": 10**400, "max_position_embeddings": 4096}), "10000000000000000000..."),
        (lambda: check_array("x", [10**400]), "got [1000"),
    ],
)
def test_wrong_types_and_escapes_are_refused(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    assert quoted in str(err.value), str(err.value)


@pytest.mark.parametrize("preset", ['["tournament"]', "{ a = 1 }", "3"])
def test_a_preset_that_is_not_a_name_is_refused(preset):
    with pytest.raises(PosKernelsError, match="unknown preset"):
        parse_grid(f"[sweep]\npreset = {preset}\n")


def test_absurd_factors_never_return_zero_frequencies():
    for call in (
        lambda: position_interpolation(omega(16), 1e308, 32),
        lambda: dynamic_ntk(omega(16), 1e300, 32, factor=1e300),
        lambda: extend("pi", omega(16), 10**300, 32),
    ):
        with pytest.raises(PosKernelsError, match="not finite and positive"):
            call()
    assert np.all(position_interpolation(omega(16), 1e6, 32).inv_freq > 0)  # large but representable: fine


def test_integers_past_2_53_in_a_config_stay_exact():
    c = parse_config({"head_dim": 128, "max_position_embeddings": 2**53 + 1, "original_max_position_embeddings": 4096})
    assert c.max_position_embeddings == 2**53 + 1 and isinstance(c.max_position_embeddings, int)
    with pytest.raises(PosKernelsError, match="up to 9223372036854775807"):
        parse_config({"head_dim": 128, "max_position_embeddings": 2**63})


def test_accuracy_refuses_nan_positions_and_bad_targets():
    # A NaN position made every logit NaN and argmax pick class 0; an out-of-range target scored 0 silently.
    from poskernels.model.engine.one_head import accuracy
    from poskernels.model.head import init_params
    from poskernels.tasks.cue import cue_batch

    tokens, targets = cue_batch(np.random.default_rng(1), 50, 32)
    pos = np.arange(32.0)
    pos[3] = np.nan
    for scheme in SCHEMES:  # every registered scheme refuses them
        cfg = HeadConfig(scheme=scheme)
        params = init_params(cfg, np.random.default_rng(0))
        with pytest.raises(PosKernelsError, match="nan at index 3"):
            accuracy(params, cfg, tokens, targets, pos)
        with pytest.raises(PosKernelsError, match="got 8 at index 0"):
            accuracy(params, cfg, tokens, np.full(50, 8))


def test_cue_batch_refuses_an_overflowing_mark_probability():
    from poskernels.tasks.cue import cue_batch

    with pytest.raises(PosKernelsError, match="mark_prob"):
        cue_batch(np.random.default_rng(0), 4, 8, mark_prob=10**400)
