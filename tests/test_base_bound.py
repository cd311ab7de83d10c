"""Men et al.'s base bound as a bound is reported: the smallest passing base found on a stated grid and the base from
which every grid base checked passes, each with its resolution, held against a scan at ten times that resolution
by the direct sum of cosines (not the blocked engine the census scans with)."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.census.compute import census_all
from poskernels.encodings import omega
from poskernels.theory.base_bound import _kernel, base_bounds, first_negative_offset


def _passes(d: int, N: int, b: float) -> bool:
    return bool((_kernel(np.arange(N, dtype=np.float64), omega(d, b)) >= 0).all())


@pytest.mark.parametrize(("d", "N"), [(32, 1024), (16, 512)])
def test_both_figures_hold_against_a_scan_at_ten_times_the_resolution(d, N):
    coarse = base_bounds(d, N, steps_per_decade=50, low=10.0, high=1e8)
    assert coarse.smallest_passing < coarse.every_base_passes_from <= coarse.checked_to
    grid = 10.0 * 10 ** (np.arange(0, 1 + int(50 * np.log10(coarse.checked_to / 10.0) + 1e-9)) / 50)
    ok = np.array([_passes(d, N, b) for b in grid])
    first = int(np.argmax(ok))
    assert grid[first] == pytest.approx(coarse.smallest_passing, rel=1e-12)  # the first passing grid base
    start = int(np.searchsorted(grid, coarse.every_base_passes_from * (1 - 1e-12)))
    assert ok[start:].all() and not ok[start - 1]  # every grid base from it passes; the one before fails
    fine = 10.0 * 10 ** (np.arange(0, 1 + int(500 * np.log10(coarse.checked_to / 10.0) + 1e-9)) / 500)
    fine_ok = np.array([_passes(d, N, b) for b in fine])
    assert fine[np.argmax(fine_ok)] <= coarse.smallest_passing * (1 + 1e-12)  # a bound: nothing smaller was missed
    last_fine_fail = fine[np.flatnonzero(~fine_ok)[-1]]
    assert last_fine_fail >= grid[start - 1] * (1 - 1e-12)  # the finer grid sees at least the coarse failure
    assert coarse.step == pytest.approx(10 ** (1 / 50) - 1)


def test_the_census_reports_both_figures_with_their_resolution():
    """Llama 2 to 16k: the grid of 50 a decade finds 3.64e5 first while 2.35e5 passes (an island between grid
    bases): the census says which grid, and that a finer one can find smaller passing bases."""
    from poskernels.census import render_census

    data = census_all("llama-2-7b", 16384)
    bound = data["context"]["base_bound"]
    assert bound["steps_per_decade"] == 50 and bound["step"] == pytest.approx(10 ** (1 / 50) - 1)
    assert first_negative_offset(omega(128, 2.35e5), 16383) is None and bound["smallest_passing"] > 2.35e5
    assert bound["every_base_passes_from"] > bound["smallest_passing"]
    assert data["context"]["smallest_base"] == bound["smallest_passing"]
    text = render_census(data, None)
    assert "on a grid of 50 bases per decade (steps of 4.7%)" in text and "finer grid can find smaller" in text
