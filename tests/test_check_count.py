"""Validation at the edge: one census checks each argument once per math-layer function it enters.

The census reads a parsed config (checked where it was read) and enters the math layer (theory, extension,
encodings) through public functions; each checks its arguments once and computes through unchecked cores, so the
base scan's hundreds of bases, the extension maps and the per-map readings do not check the same width, length,
frequencies or offset again (ARCHITECTURE.md, "Where
input is checked").  ``tests/check_calls.py`` counts the checks; ``benchmarks/check_count.py`` prints them.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import check_calls
from poskernels.census import compute as census_compute
from poskernels.census import context as census_context
from poskernels.census.config import bundled_configs
from poskernels.encodings import omega, sinusoidal_code
from poskernels.extension import extend
from poskernels.theory import (
    alibi,
    bag_reader,
    base_bound,
    commutant,
    conditioning,
    context,
    counting,
    decay,
    interpolation,
    kernel,
    relative_bias,
    rope,
    table_kernel,
)
from poskernels.theory.context import unseen_planes


def _census_checks(config: str) -> list[check_calls.Call]:
    census_context._base_bounds.cache_clear()  # the base scan runs once per process: count it as a first census does
    with check_calls.counting() as calls:
        census_compute.census_all(config)
    return calls


#: Checks of what a core computes, not of its arguments: a work budget that depends on the data, a finite result.
RESULT_CHECKS = ("check_budget", "check_finite_result")

#: Checks of what a map computed, not of an argument: the :class:`~poskernels.extension.Extension` record refuses a
#: non-finite or non-positive attention factor from any map (LongRoPE's two lists may compute the same one).
RESULT_CALLERS = ("poskernels.extension.article.Extension.__post_init__",)


def _argument_checks(calls: list[check_calls.Call]) -> list[check_calls.Call]:
    """The checks of an argument: not a check of what was computed (:data:`RESULT_CHECKS`, :data:`RESULT_CALLERS`)."""
    return [c for c in calls if c.check not in RESULT_CHECKS and c.caller not in RESULT_CALLERS]


@pytest.mark.parametrize("config", bundled_configs())
def test_one_census_checks_each_argument_once_per_math_layer_entry(config):
    """Theory, extension and encodings: each function the census enters checks an argument once, however many maps,
    ramps or readings of ``theta`` the census computes (the maps through their cores, after one ``map_arguments``)."""
    calls = [c for c in _census_checks(config) if c.entry.startswith(check_calls.MATH)]
    assert {c.entry for c in calls} >= {  # the math layer the census reads, each entered and counted
        "poskernels.theory.base_bound.base_bounds",
        "poskernels.theory.context.context_verdicts",
        "poskernels.theory.context.critical_dimension",
        "poskernels.theory.census.wavelength_census",
        "poskernels.encodings.codes.omega",
        "poskernels.extension.map_arguments",
        "poskernels.extension.map_core",
        "poskernels.extension.extend",  # the config's own map (census.config.config_extension)
        "poskernels.extension.article._yarn",
    }
    assert check_calls.repeated(_argument_checks(calls), per_entry=True) == {}


def test_the_counter_sees_a_repeated_check():
    """The test above can fail: a theory function called twice with one length counts two checks of it."""
    with check_calls.counting() as calls:
        for _ in range(2):
            unseen_planes([1.0, 0.1], [1.0, 0.1], 32, 128)
    twice = check_calls.repeated(calls, per_entry=True)
    key = ("poskernels.theory.context.unseen_planes", "check_length", "the training length L", repr(32))
    assert twice[key] == ["poskernels.theory.context.unseen_planes"] * 2
    assert not [c for c in _counted_after(calls)]


def test_the_counter_sees_maps_read_through_extend():
    """And for extension: two maps of one head through the public ``extend`` check its ``theta`` twice (the census
    checks it once with ``map_arguments`` and computes each map through its core)."""
    theta = omega(16)
    with check_calls.counting() as calls:
        for name in ("pi", "yarn"):
            extend(name, theta, 4.0, 32)
    twice = check_calls.repeated(_argument_checks(calls), per_entry=True)
    key = ("poskernels.extension.extend", "check_frequencies", "theta", check_calls._value_key(theta))
    assert twice[key] == ["poskernels.extension.article._check_theta"] * 2


def _counted_after(calls):
    """Checks recorded after the block ended (none: the wrappers are removed on exit)."""
    before = len(calls)
    unseen_planes([1.0], [1.0], 2, 4)
    return calls[before:]


#: Public theory functions that compute through other theory functions, each with valid arguments.
COMPOSED = {
    "alibi_worst_tail_weight": lambda: alibi.alibi_worst_tail_weight(2.0, 0.5, 10, 64),
    "bag_reader_accuracy": lambda: bag_reader.bag_reader_accuracy(32),
    "bag_reader_accuracy_exact": lambda: bag_reader.bag_reader_accuracy_exact(8, 8, Fraction(1, 10)),
    "base_bounds": lambda: base_bound.base_bounds(16, 256, low=10.0),
    "smallest_nonnegative_base": lambda: base_bound.smallest_nonnegative_base(16, 256, steps_per_decade=20),
    "commutant_projection": lambda: commutant.commutant_projection(np.arange(16.0).reshape(4, 4)),
    "relativity_defect": lambda: commutant.relativity_defect(np.arange(16.0).reshape(4, 4)),
    "numerical_rank": lambda: conditioning.numerical_rank(64),
    "condition_number_float64": lambda: conditioning.condition_number_float64(64),
    "extrapolation_bound": lambda: context.extrapolation_bound(4096, 128),
    "context_verdicts": lambda: context.context_verdicts(omega(16), {"a": omega(16), "b": omega(16) / 4}, 32, 128, 127),
    "causal_counter": lambda: counting.causal_counter(4, [1.0, 0.0]),
    "decay_bound": lambda: decay.decay_bound(np.ones(4), [1.0, 2.0], omega(8)),
    "envelope_octave_means": lambda: decay.envelope_octave_means(16, 1e4, 64),
    "chen_counterexample": lambda: interpolation.chen_counterexample(),
    "chen_ratio": lambda: interpolation.chen_ratio(128),
    "interpolation_error": lambda: interpolation.interpolation_error(np.ones(4), omega(8), 0.0, 1.0, 0.5),
    "kappa_d": lambda: kernel.kappa_d([1.0, 2.0], 16),
    "normalized_kernel": lambda: kernel.normalized_kernel([1.0, 1024.0], 64),
    "gram_matrix": lambda: kernel.gram_matrix([0.0, 1.0, 2.0], 4, 100.0),
    "min_code_distance": lambda: kernel.min_code_distance(64, 16),
    "max_column_cosine": lambda: kernel.max_column_cosine(64),
    "rope_offset_score": lambda: rope.rope_offset_score([1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], omega(4)),
    "toeplitz_defect": lambda: table_kernel.toeplitz_defect(np.eye(3) + 1.0),
}


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_a_composed_theory_function_checks_each_argument_once(name):
    """Theory's own checks in one call: an argument that the call checked is never checked again by theory code
    (a call into another theory function goes to its core); encodings' checks of what theory hands them are theirs,
    and a core's checks of what it computes (:data:`RESULT_CHECKS`) are not checks of an argument."""
    call = COMPOSED[name]
    with check_calls.counting() as calls:
        call()
    mine = [c for c in calls if c.caller.startswith("poskernels.theory.")]
    assert mine, f"{name} checked nothing: the counter missed its checks"
    arguments = [c for c in mine if c.check not in RESULT_CHECKS]
    assert check_calls.repeated(arguments) == {}


#: Theory functions that hand checked arrays to encodings: they call its cores (``apply_rope_core``,
#: ``t5_bucket_core``, ``sinusoidal_code_core``), so no argument is checked again by either layer, however many
#: offsets they turn.
THROUGH_ENCODINGS = {
    "rope_score": lambda: rope.rope_score([1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], 3, 10, omega(4)),
    "matched_scores": lambda: decay.matched_scores([1.0, 2.0, 3.0], omega(8), 1.0, 16, np.random.default_rng(0)),
    "t5_bucket_ranges": lambda: relative_bias.t5_bucket_ranges(),
    "t5_last_bucket_first_offset": lambda: relative_bias.t5_last_bucket_first_offset(),
    "code_matrix": lambda: kernel.code_matrix(8, 16),
    "max_column_cosine": lambda: kernel.max_column_cosine(64),
}


@pytest.mark.parametrize("name", sorted(THROUGH_ENCODINGS))
def test_a_theory_function_through_encodings_checks_each_argument_once(name):
    with check_calls.counting() as calls:
        THROUGH_ENCODINGS[name]()
    assert [c for c in calls if c.caller.startswith("poskernels.theory.")], f"{name}: the counter missed its checks"
    assert check_calls.repeated(_argument_checks(calls)) == {}


def test_sinusoidal_code_checks_its_width_once():
    with check_calls.counting() as calls:
        sinusoidal_code([0.0, 1.0], 16)
    assert check_calls.repeated(_argument_checks(calls)) == {}
    assert [c.check for c in calls].count("check_even_dimension") == 1
