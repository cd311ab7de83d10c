"""Validation at the edge: one census checks each argument once per theory function it enters.

The census reads a parsed config (checked where it was read) and enters the math layer through public theory
functions; each checks its arguments once and computes through unchecked cores, so the base scan's hundreds of
bases and the per-map readings do not check the same width, length or offset again (ARCHITECTURE.md, "Where
input is checked").  ``tests/check_calls.py`` counts the checks; ``benchmarks/check_count.py`` prints them.
"""

from __future__ import annotations

import pytest

import check_calls
from poskernels import census_data
from poskernels.theory.context import unseen_planes


def _census_checks(config: str) -> list[check_calls.Call]:
    census_data._base_bounds.cache_clear()  # the base scan runs once per process: count it as a first census does
    with check_calls.counting() as calls:
        census_data.census_all(config)
    return calls


@pytest.mark.parametrize("config", ["llama-2-7b", "qwen2.5-7b-yarn"])
def test_one_census_checks_each_argument_once_per_theory_function(config):
    calls = [c for c in _census_checks(config) if c.entry.startswith("poskernels.theory.")]
    assert {c.entry for c in calls} >= {  # the theory the census reads, each entered and counted
        "poskernels.theory.base_bound.base_bounds",
        "poskernels.theory.context.context_verdicts",
        "poskernels.theory.context.critical_dimension",
        "poskernels.theory.census.wavelength_census",
    }
    assert check_calls.repeated(calls, per_entry=True) == {}


def test_the_counter_sees_a_repeated_check():
    """The test above can fail: a theory function called twice with one length counts two checks of it."""
    with check_calls.counting() as calls:
        for _ in range(2):
            unseen_planes([1.0, 0.1], [1.0, 0.1], 32, 128)
    twice = check_calls.repeated(calls, per_entry=True)
    key = ("poskernels.theory.context.unseen_planes", "check_length", "the training length L", repr(32))
    assert twice[key] == ["poskernels.theory.context.unseen_planes"] * 2
    assert not [c for c in _counted_after(calls)]


def _counted_after(calls):
    """Checks recorded after the block ended (none: the wrappers are removed on exit)."""
    before = len(calls)
    unseen_planes([1.0], [1.0], 2, 4)
    return calls[before:]
