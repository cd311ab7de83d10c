"""Property: arbitrary numbers fed to the public math API raise PosKernelsError or nothing, in bounded time and memory.

Every public function of the math layer (:mod:`~poskernels.encodings`, :mod:`~poskernels.extension` and its
ecosystem, every ``poskernels.theory`` module) and the edge validators (``model.validate``, ``tasks.validate``)
is called with arguments drawn by the parameter's role: sizes (huge, negative, fractional, NaN), reals (NaN,
infinities, 400-digit integers, bools), arrays (NaN, empty, odd shapes), names.  Each call must return or raise
:class:`~poskernels.errors.PosKernelsError`, within the time and memory bounds of :mod:`robust`, without a
RuntimeWarning and without returning NaN from arguments that held none (float64's edges: see :mod:`robust`).
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from poskernels.extension import MAPS
from robust import assert_only_library_error

MODULES = [
    *("encodings", "extension", "extension.ecosystem", "extension.yarn_reference", "extension.yarn_ramp_gap"),
    *("model.validate", "tasks.validate"),
    *(f"theory.{m}" for m in ("alibi", "census", "commutant", "counting", "decay", "kernel", "rope")),
]

_huge = st.sampled_from([10**400, -(10**400), 2**63, 2**64 + 1, 10**9, 2 * 10**6, 20000, 2**25])
_odd = st.sampled_from([float("nan"), float("inf"), -float("inf"), True, False, None, "3", 1e308, -0.0, 5e-324])
NUMBER = st.one_of(st.integers(-5, 300), st.floats(), _huge, _odd, st.integers())
SIZE = st.one_of(st.integers(-3, 70), st.integers(0, 5000), NUMBER)
REAL = st.one_of(st.floats(-1e3, 1e6), st.floats(1.0, 1e6), NUMBER)
_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
ARRAY = st.one_of(
    hnp.arrays(np.float64, _shapes, elements=st.floats(allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=8), elements=st.floats(1e-4, 10)),
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=8), elements=st.integers(-50, 50)),
    st.lists(NUMBER, max_size=5),
    NUMBER,
)

# Parameters by role (the article's names); any other parameter draws from every role.
SIZES = {"d", "n", "W", "H", "K", "L", "num_buckets", "max_distance", "n_symbols", "n_samples", "digits",
         "max_octave_start", "start", "rotated_planes", "D", "n_classes", "batch"}  # fmt: skip
ARRAYS = {"m", "positions", "delta", "theta", "w", "h", "q", "k", "x", "M", "U", "c", "e", "V", "a", "r",
          "relative_position", "p", "phi", "o", "Delta", "beta", "alpha", "short_factor", "long_factor",
          "targets"}  # fmt: skip
NAMES = {"name": st.one_of(st.sampled_from(sorted(MAPS) + ["rope", "pi"]), st.text(max_size=5))}


def _strategy(param: inspect.Parameter):
    if param.name == "rng":
        return st.builds(np.random.default_rng, st.integers(0, 3))
    if param.name in NAMES:
        return NAMES[param.name]
    role = SIZE if param.name in SIZES else ARRAY if param.name in ARRAYS else REAL
    if param.default is not inspect.Parameter.empty:
        return st.one_of(st.just(param.default), role)
    return role


def _public_functions():
    for mod_name in MODULES:
        mod = importlib.import_module(f"poskernels.{mod_name}")
        for name in mod.__all__:
            fn = getattr(mod, name)
            if inspect.isfunction(fn):
                yield pytest.param(fn, id=f"{mod_name}.{name}")


def _arguments(fn):
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_POSITIONAL]
    named = {p.name: _strategy(p) for p in params if p.kind is not p.VAR_KEYWORD}
    if any(p.kind is p.VAR_KEYWORD for p in params):  # extend(name, ..., **options): any map's options
        options = ["alpha", "beta", "factor", "beta_fast", "beta_slow", "mscale", "truncate", "low_freq_factor"]
        named["options"] = st.dictionaries(st.sampled_from(options), st.one_of(REAL, st.booleans(), st.text()))
    return st.fixed_dictionaries(named)


@pytest.mark.parametrize("fn", list(_public_functions()))
# No deadline: assert_only_library_error bounds each input's work by a count of calls (robust.work_limit), not a clock.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_only_the_library_error_escapes(fn, data):
    kwargs = data.draw(_arguments(fn))
    options = kwargs.pop("options", {})
    assert_only_library_error(fn, **kwargs, **options)
