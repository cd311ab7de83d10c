"""``gram_matrix`` of a huge window is refused before it allocates, with the memory it would need.

The budget is counted in the array the call would build, ``(n, n, d/2)`` cosines; :mod:`tracemalloc` checks that
the refusal allocates nothing near the ``(n, n)`` offsets (which a window of 6,000 positions makes 288 MB).
"""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

from poskernels.errors import MAX_ELEMENTS, PosKernelsError
from poskernels.theory.kernel import gram_matrix, kappa_d


@pytest.mark.parametrize("n, d", [(6_000, 2), (100_000, 64), (10**6, 128), (2_000, 4096)])
def test_a_huge_window_is_refused_before_any_allocation(n, d):
    tracemalloc.start()
    try:
        with pytest.raises(PosKernelsError) as info:
            gram_matrix(np.arange(n), d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20 + 16 * n  # the positions themselves, nothing of size n^2
    gib = n * n * (d // 2) * 8 / 2**30
    shown = re.search(r"([0-9.e+]+) GiB", str(info.value))
    assert shown and float(shown.group(1)) == pytest.approx(gib, rel=0.06)
    assert f"{n} positions" in str(info.value) and "\n" not in str(info.value)


def test_the_largest_window_in_budget_is_computed_and_equals_kappa_d_of_its_offsets():
    d = 8
    n = int(np.sqrt(MAX_ELEMENTS // (d // 2)))  # n^2 d/2 at the limit
    m = np.arange(n) * 3
    G = gram_matrix(m, d)
    assert G.shape == (n, n)
    rows = np.random.default_rng(0).integers(0, n, 5)
    for i in rows:
        np.testing.assert_allclose(G[i], kappa_d(m - m[i], d), rtol=0, atol=1e-12)
    with pytest.raises(PosKernelsError, match="GiB"):
        gram_matrix(np.arange(n + 1), d)


def test_an_odd_width_is_refused_before_the_budget():
    with pytest.raises(PosKernelsError, match="even"):
        gram_matrix(np.arange(10**6), 3)
