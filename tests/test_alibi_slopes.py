"""ALiBi's slopes against Press et al.'s, as BLOOM writes them out in ``transformers``: equal at every power of two,
different (as :func:`poskernels.encodings.alibi_slopes` states) at every other head count."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

from poskernels.encodings import alibi_slopes


def _press(H: int) -> np.ndarray:
    return _get_alibi_slopes(H, torch.device("cpu")).double().numpy()  # (H,) Press et al.'s, BLOOM's code


@pytest.mark.parametrize("H", [1, 2, 4, 8, 16, 32, 64])
def test_at_a_power_of_two_the_slopes_are_press_et_als(H):
    np.testing.assert_allclose(alibi_slopes(H), _press(H), rtol=1e-6)


@pytest.mark.parametrize("H", [3, 5, 6, 12, 20, 40, 96])
def test_elsewhere_they_differ_as_the_docstring_says(H):
    ours, press = alibi_slopes(H), _press(H)
    assert np.abs(ours - press).max() > 0.05  # a real difference, not rounding
    n = 2 ** int(np.floor(np.log2(H)))  # Press: the slopes of n heads, then every other one of 2n heads
    np.testing.assert_allclose(press[:n], alibi_slopes(n), rtol=1e-6)
    np.testing.assert_allclose(press[n:], alibi_slopes(2 * n)[0::2][: H - n], rtol=1e-6)
    assert not np.all(np.diff(press) < 0) and np.all(np.diff(ours) < 0)  # theirs not sorted, ours decreasing
    np.testing.assert_allclose(np.log2(ours), -8 * np.arange(1, H + 1) / H)  # geometric, 2^-8 at the last head


def test_the_docstrings_h12_values():
    np.testing.assert_allclose(_press(12)[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]), rtol=1e-6)
    np.testing.assert_allclose(_press(12)[:8], 2.0 ** -np.arange(1, 9), rtol=1e-6)
    np.testing.assert_allclose(alibi_slopes(12)[[0, -1]], [2 ** (-2 / 3), 2**-8])
