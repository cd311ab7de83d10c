"""Definition 5's maps in poskernels.extension: against their definitions, properties, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import apply_rope, omega
from poskernels.errors import PosKernelsError
from poskernels.extension import (
    MAPS,
    Extension,
    extend,
    ntk_aware,
    position_interpolation,
    yarn,
    yarn_ramp_turns,
)
from quoting import assert_quotes

ARTICLE_MAPS = ("none", "pi", "ntk", "yarn")  # Definition 5 (and the identity); MAPS holds more
dims = st.integers(2, 128).map(lambda half: 2 * half)
bases = st.floats(2.0, 1e7)
kappas = st.floats(1.0, 64.0)
lengths = st.integers(1, 8192)


@settings(max_examples=40, deadline=None)
@given(dims, bases, kappas, lengths)
def test_pi_divides_every_plane_and_equals_interpolated_positions(d, b, kappa, L):
    theta = omega(d, b)
    e = position_interpolation(theta, kappa, L)
    assert np.allclose(e.factors, 1 / kappa)
    assert e.logit_scale == 1.0
    # integer positions with theta / kappa = positions m / kappa with theta (Definition 5: m -> m / kappa)
    x = np.random.default_rng(0).normal(size=(5, d))
    m = np.arange(5) * 37
    assert np.allclose(apply_rope(x, m, e.inv_freq), apply_rope(x, m / kappa, theta), atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(dims, bases, kappas, lengths)
def test_ntk_is_the_base_change(d, b, kappa, L):
    e = ntk_aware(omega(d, b), kappa, L)
    assert np.allclose(e.inv_freq, omega(d, b * kappa ** (d / (d - 2))), rtol=1e-11)
    assert e.factors[0] == 1.0 and e.factors[-1] * kappa == pytest.approx(1.0)
    assert np.all(np.diff(e.factors) <= 1e-15)


def yarn_by_definition(theta: np.ndarray, kappa: float, L: int) -> tuple[np.ndarray, float]:
    """Definition 5's YaRN written out plane by plane: gamma linear in L / lambda_j from 1 to 32."""
    out = []
    for th in theta:
        turns = L / (2 * math.pi / th)
        gamma = 0.0 if turns <= 1 else 1.0 if turns >= 32 else (turns - 1) / 31
        out.append((1 - gamma) * th / kappa + gamma * th)
    return np.array(out), (0.1 * math.log(kappa) + 1) ** 2


@settings(max_examples=40, deadline=None)
@given(dims, bases, kappas, lengths)
def test_yarn_against_its_definition(d, b, kappa, L):
    theta = omega(d, b)
    e = yarn(theta, kappa, L)
    want, scale = yarn_by_definition(theta, kappa, L)
    assert np.allclose(e.inv_freq, want, rtol=1e-12)
    assert e.logit_scale == pytest.approx(scale)
    assert np.all((e.factors >= 1 / kappa - 1e-15) & (e.factors <= 1 + 1e-15))
    assert np.all(np.diff(e.factors) <= 1e-15)  # slower planes are interpolated at least as much


@settings(max_examples=20, deadline=None)
@given(dims, bases, lengths)
def test_kappa_one_changes_nothing(d, b, L):
    theta = omega(d, b)
    for name in ARTICLE_MAPS:
        e = extend(name, theta, 1, L)
        assert isinstance(e, Extension) and e.name == name
        assert np.allclose(e.factors, 1.0) and e.logit_scale == 1.0
        assert np.array_equal(e.theta, theta)


def test_registry_names_and_article_maps():
    assert set(ARTICLE_MAPS) <= set(MAPS)
    theta = omega(16)
    for name in ARTICLE_MAPS:
        assert extend(name, theta, 4, 32).name == name
    assert extend("none", theta, 4, 32).factors.tolist() == [1.0] * 8


def test_extend_passes_options_on():
    from poskernels.extension.yarn_reference import yarn_hf

    theta = omega(16)
    assert np.array_equal(extend("yarn", theta, 4, 32, beta=2.0).inv_freq, yarn(theta, 4, 32, 1.0, 2.0).inv_freq)
    got = extend("yarn_hf_untruncated", theta, 4, 32, beta_fast=16.0).inv_freq
    assert np.array_equal(got, yarn_hf(theta, 4, 32, beta_fast=16.0, truncate=False).inv_freq)


def test_yarn_ramp_ends():
    theta = omega(16)
    gamma = yarn_ramp_turns(theta, 32)
    turns = 32 * theta / (2 * np.pi)
    assert np.all(gamma[turns <= 1] == 0) and np.all(gamma[turns >= 32] == 1)
    # oracle: "linear in turns from 1 to 32", clamped, is numpy's piecewise-linear interpolation through (1, 0), (32, 1)
    assert np.allclose(gamma, np.interp(turns, [1.0, 32.0], [0.0, 1.0]), rtol=1e-14, atol=0)
    assert 0 < gamma[0] < 1  # plane 0 (5.1 turns) is inside the ramp, so the line above checks its slope
    # with the ramp narrowed to (alpha, beta) = (1, 2), plane 0's 5 turns keep it whole
    assert yarn_ramp_turns(theta, 32, 1.0, 2.0)[0] == 1.0


@pytest.mark.parametrize(
    "call, quoted",
    [
        (lambda: extend("pi", omega(16), 0.5, 32), "0.5"),
        (lambda: extend("ntk", omega(16), float("nan"), 32), "nan"),
        (lambda: extend("yarn", omega(16), True, 32), "True"),
        (lambda: extend("pi", omega(16), 4, 0), "0"),
        (lambda: extend("yarn", omega(16), 4, -32), "-32"),
        (lambda: extend("pi", omega(16), 4, 32.5), "32.5"),
        (lambda: extend("pi", np.array([]), 4, 32), "[]"),
        (lambda: extend("pi", np.array([1.0, -0.1]), 4, 32), "-0.1"),
        (lambda: extend("pi", np.ones((2, 2)), 4, 32), "1."),
        (lambda: extend("xpos?", omega(16), 4, 32), "'xpos?'"),
        (lambda: extend(None, omega(16), 4, 32), "None"),
        (lambda: ntk_aware(omega(2), 4, 32), "2"),
        (lambda: yarn(omega(16), 4, 32, alpha=32.0, beta=1.0), "32.0"),
        (lambda: yarn_ramp_turns(omega(16), 0), "0"),
        (lambda: yarn_ramp_turns(omega(16), -32), "-32"),
        (lambda: yarn_ramp_turns(np.array([1.0, -0.1]), 32), "got array([ 1. , -0.1])"),
        (lambda: yarn(omega(16), 4, 32, alpha="x"), "alpha must be a finite real number of turns; got 'x'"),
        (
            lambda: extend("yarn", omega(16), 4, 32, beta=float("nan")),
            "beta must be a finite real number of turns; got nan",
        ),
        # an unknown option names itself, the map and what the map accepts (read from its signature)
        (lambda: extend("pi", omega(16), 4, 32, alpha=1.0), "map 'pi' takes no option 'alpha'; accepted options: none"),
        (
            lambda: extend("yarn", omega(16), 4, 32, alfa=2.0),
            "map 'yarn' takes no option 'alfa'; accepted options: alpha, beta",
        ),
        # a map that passes its options on: the callee's TypeError, re-raised with the map and the option
        (
            lambda: extend("yarn_hf_untruncated", omega(16), 4, 32, foo=1),
            "map 'yarn_hf_untruncated' takes no option 'foo'",
        ),
    ],
)
def test_bad_input_raises_and_quotes(call, quoted):
    with pytest.raises(PosKernelsError) as err:
        call()
    assert_quotes(str(err.value), quoted)
