"""Comparing two seed blocks' means: the check the shipped reference files and a fresh run must pass.

Two blocks of ten seeds (the shipped reference, seeds 0-9 made on one machine; a fresh run, here or with
``POSKERNELS_FIRST_SEED=1000``) agree on a cell when their means lie within ``K`` joined standard errors, plus a
floor for cells whose seeds hardly spread (a standard error near 0 says nothing of another machine's rounding).
``K = 4``: with ten seeds a mean over its estimated standard error follows Student's t with 9 degrees of freedom,
and many cells are compared at once, so 3 would fail about one run in four by chance.
"""

import math

K = 4.0
FLOOR = 0.005  # accuracies: half a percentage point


def within(a, se_a, b, se_b, floor: float = FLOOR, k: float = K) -> bool:
    """Whether means ``a`` and ``b`` (with standard errors) agree; two missing values agree."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= k * math.hypot(se_a or 0.0, se_b or 0.0) + floor


def leaves(mean: dict, stderr: dict, path=()):
    """``(path, mean, stderr)`` of every leaf of two tables with the same nesting."""
    for key, value in mean.items():
        if isinstance(value, dict):
            yield from leaves(value, stderr[key], (*path, key))
        else:
            yield (*path, key), value, stderr[key]
