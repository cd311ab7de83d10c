"""Kerple's and FIRE's length claim as a statistic over seeds: the threshold the tests assert, its size and power.

The papers claim their biases let a head read past its training length where RoPE does not (Chi et al. 2022;
Li et al. 2023).  Here a head *holds* at length ``n`` when its accuracy there is within :data:`HOLD` of its
accuracy at the training length 32; over a block of ten seeds the claim passes when the mean drop
``acc(32) - acc(n)`` plus :data:`K` standard errors is at most :data:`HOLD`, and RoPE *falls* when its mean drop
minus ``K`` standard errors exceeds it.  Both are read at the tournament's longest length (256, its 2,000 test
sequences) and at 10^5 tokens (the long-context section's cue task, 500 sequences, the streaming reader).

* **size**: the probability that a block passes a claim whose true mean drop sits exactly at the threshold, with
  normal seeds: ``P(T_9 >= K)`` for Student's t with 9 degrees of freedom (the same for *holds* and *falls*);
* **power**: the probability that a fresh block of ten passes, estimated by drawing blocks of ten with replacement
  from every seed measured (all the blocks given on the command line).

``tests/test_beyond_schemes.py`` asserts the claims on the test run's block with these thresholds (imported from
here: the one place they are written).

Usage::

    python examples/beyond_claims.py results/numbers.json B2000/numbers.json B3000/numbers.json ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

#: The largest drop in accuracy from the training length that still counts as holding (five points).
HOLD = 0.05
#: Standard errors of margin (the project's tests use 3).
K = 3.0
#: The schemes whose papers make the claim, and the one they contrast with.
CLAIMED = ("kerple_log", "kerple_power", "fire")
CONTRAST = "rope"
#: Where the claim is read: (section of numbers.json, the length past the window).
WHERE = {"tournament at 256": ("tournament", "256"), "cue at 100,000": ("long", "100000")}


def per_seed(numbers: dict, section: str) -> dict:
    """``per_seed[scheme][n]`` of the tournament or of the long section's cue task."""
    return numbers["tournament"]["per_seed"] if section == "tournament" else numbers["long"]["length"]["per_seed"]


def drops(table: dict, scheme: str, far: str) -> np.ndarray:
    """Each seed's ``acc(32) - acc(far)``, shape ``(seeds,)``."""
    return np.asarray(table[scheme]["32"], dtype=float) - np.asarray(table[scheme][far], dtype=float)


def mean_se(d: np.ndarray) -> tuple[float, float]:
    """Mean over the seeds and its standard error."""
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def holds(d: np.ndarray) -> bool:
    """The claim for a block: the mean drop plus ``K`` standard errors is at most :data:`HOLD`."""
    m, se = mean_se(d)
    return m + K * se <= HOLD


def falls(d: np.ndarray) -> bool:
    """The contrast for a block: the mean drop minus ``K`` standard errors exceeds :data:`HOLD`."""
    m, se = mean_se(d)
    return m - K * se > HOLD


def size() -> float:
    """``P(T_9 >= K)``: a block passes at the boundary (true mean drop = HOLD) this often, with normal seeds."""
    from scipy import stats

    return float(stats.t.sf(K, 9))


def power(pool: np.ndarray, test, n: int = 10, draws: int = 20_000, seed: int = 0) -> float:
    """Share of ``draws`` blocks of ``n`` seeds, drawn with replacement from ``pool``, that pass ``test``."""
    rng = np.random.default_rng(seed)
    blocks = pool[rng.integers(0, pool.size, size=(draws, n))]  # (draws, n)
    m = blocks.mean(axis=1)
    se = blocks.std(axis=1, ddof=1) / np.sqrt(n)
    if test is holds:
        return float(np.mean(m + K * se <= HOLD))
    return float(np.mean(m - K * se > HOLD))


def main(argv=None) -> int:
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print(__doc__.split("Usage::")[1].strip(), file=sys.stderr)
        return 2
    blocks = [json.loads(p.read_text()) for p in paths]
    print(f"HOLD = {HOLD}, K = {K}; size at the threshold P(T_9 >= K) = {size():.4f}; {len(blocks)} blocks")
    for where, (section, far) in WHERE.items():
        for scheme, test in [*((s, holds) for s in CLAIMED), (CONTRAST, falls)]:
            per_block = [drops(per_seed(b, section), scheme, far) for b in blocks]
            cells = ", ".join(
                f"{b['tournament']['seeds'][0]}: {m:.3f} ± {se:.3f} {'pass' if test(d) else 'FAIL'}"
                for b, d in zip(blocks, per_block)
                for m, se in [mean_se(d)]
            )
            pool = np.concatenate(per_block)
            m, se = mean_se(pool)
            print(
                f"{where:18s} {scheme:13s} {test.__name__:5s} drop by block [{cells}]; pooled {m:.3f} "
                f"(sd {pool.std(ddof=1):.3f}, {pool.size} seeds); power {power(pool, test):.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
