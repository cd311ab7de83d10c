"""Adam in place: the same bits as the textbook update written with fresh arrays (Kingma and Ba, Algorithm 1)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.model.optim import AdamState, adam_init, adam_step


def _textbook(x, g, m, v, t, lr, beta1, beta2, eps):
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * (g * g)
    step = lr / (1.0 - beta1**t)
    return x - step * m / (np.sqrt(v / (1.0 - beta2**t)) + eps), m, v


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 300),
    steps=st.integers(1, 6),
    lr=st.floats(1e-4, 0.5),
    scale=st.floats(1e-6, 1e3),
)
def test_adam_in_place_equals_the_textbook_update_bit_for_bit(seed, size, steps, lr, scale):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=size)
    ref, m, v = x.copy(), np.zeros(size), np.zeros(size)
    state = adam_init(size)
    for t in range(1, steps + 1):
        g = rng.normal(size=size) * scale
        adam_step(x, g, state, lr, 0.9, 0.999, 1e-8)
        ref, m, v = _textbook(ref, g, m, v, t, lr, 0.9, 0.999, 1e-8)
        assert np.array_equal(x, ref) and np.array_equal(state.m, m) and np.array_equal(state.v, v)
    assert state.t == steps


def test_a_state_built_without_scratch_gets_its_own():
    x, g = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.25, -1.0])
    state = AdamState(np.zeros(3), np.zeros(3))  # as before the scratch vectors existed
    adam_step(x, g, state, lr=0.1)
    ref, _, _ = _textbook(np.array([1.0, -2.0, 3.0]), g, np.zeros(3), np.zeros(3), 1, 0.1, 0.9, 0.999, 1e-8)
    assert np.array_equal(x, ref) and len(state.work) == 2 and state.work[0].shape == (3,)
    assert not np.shares_memory(state.work[0], x) and not np.shares_memory(state.work[0], g)
