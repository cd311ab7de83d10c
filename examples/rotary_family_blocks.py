"""The rotary family's claims on seed blocks the tests do not run: each block's verdicts, and size and false pass.

Trains (or loads from the cache) only the heads the claims of :mod:`poskernels.claims.rotary_variants` read, RoPE and
the rotary family, for each block of ten seeds, reads them as ``poskernels reproduce`` does (the tournament's test
sets, every rotary head's ``rebound_height``, the cue task at 32, 512 and 10^5 tokens by the streaming reader), and
prints every claim's verdict per block, then its size and false-pass rate over the pooled blocks
(:func:`poskernels.claims.calibrate.calibrate`).  These blocks only check the thresholds; the claims table's
calibration is measured on the blocks of every scheme (``examples/claim_calibration.py``).

Reproduce (about a minute a block on two idle cores)::

    nice -n 10 python examples/rotary_family_blocks.py 5000 6000 7000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from poskernels.claims.calibrate import calibrate
from poskernels.claims.rotary_variants import ROTARY_CLAIMS
from poskernels.experiments.laboratory import read_head
from poskernels.experiments.long_context import run_long_context
from poskernels.experiments.tournament import tournament_table
from poskernels.model.config import preset
from poskernels.model.train import train_stack

SCHEMES = ("rope", "xpos", "p_rope", "partial_rotary")
TESTED = set(range(0, 10)) | set(range(1000, 1010))  # the blocks the tests run


def block(first: int, cache: Path) -> dict:
    """The parts of ``numbers.json`` the rotary family's claims read, for seeds ``first .. first + 9``."""
    seeds = tuple(range(first, first + 10))
    readings = {}
    for s in SCHEMES:
        for seed, head in zip(seeds, train_stack(preset("tournament", s), seeds, cache)):
            readings[s, seed] = read_head(head)
    tour = tournament_table(readings, SCHEMES, seeds)
    for key in ("rebound_height", "window_fall"):
        tour[key] = {s: [readings[s, seed][key] for seed in seeds] for s in SCHEMES}
    far = run_long_context(cache, seeds=seeds, lengths=(32, 512, 100_000), offsets=(64,), schemes=SCHEMES)
    return {"tournament": tour, "long": far}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("first", nargs="+", type=int, help="first seed of each block of ten")
    ap.add_argument("--cache", type=Path, default=Path(".cache") / "poskernels")
    args = ap.parse_args(argv)
    if clash := [f for f in args.first if TESTED & set(range(f, f + 10))]:
        print(f"error: blocks {clash} hold seeds the tests run; use others", file=sys.stderr)
        return 2
    blocks = [block(f, args.cache) for f in args.first]
    width = max(len(c.id) for c in ROTARY_CLAIMS)
    print(f"{'claim':<{width}}  " + "  ".join(f"{f:>14}" for f in args.first))
    for c in ROTARY_CLAIMS:
        cells = []
        for b in blocks:
            v = c.check(b)
            cells.append(f"{'pass' if v.passed else 'FAIL'} {v.statistic:9.4g}")
        print(f"{c.id:<{width}}  " + "  ".join(f"{x:>14}" for x in cells))
    out = calibrate(blocks, ROTARY_CLAIMS)
    print(f"\nover the {10 * len(blocks)} pooled seeds (blocks of ten drawn with replacement):")
    for row in out["claims"]:
        print(f"{row['id']:<{width}}  size {row['size']:.3f}  false pass {row['false_pass']}")
    print(f"joint size {out['joint_size']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
