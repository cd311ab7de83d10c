"""Size and power of every trained claim of ``poskernels.claims``, on seed blocks the tests do not run.

The tests check the claims on the blocks 0-9 and 1000-1009 (``POSKERNELS_FIRST_SEED``); the thresholds of
:data:`poskernels.claims.CLAIMS` are set on other seeds, and this script measures them there: for each claim the
probability that a fresh block of ten fails it while it holds (size), that it passes when false (the pooled
values moved onto the claim's null), and the probability that a fresh block fails any asserted claim (joint size).
See :mod:`poskernels.claims.calibrate` for the statistics.

Reproduce (the heads of each block train once into ``.cache/poskernels``; about a minute a block on two idle cores)::

    for F in 2000 3000 4000 5000 6000 7000 8000 9000 10000 11000; do
        nice -n 10 poskernels reproduce --first-seed $F --out results-$F
    done
    python examples/claim_calibration.py results-{2000,3000,4000,5000,6000,7000,8000,9000,10000,11000} \\
        --out src/poskernels/page/claims_calibration.json --csv examples/claim_calibration.csv

A pool of fewer blocks, or of blocks computed for some sections only (``reproduce --only tournament long``), is
honest when said: ``--keep OLD.json`` takes the rows of the claims this pool cannot read from an earlier
calibration, each marked with the blocks it was measured on (``kept_from``), so that the file says which pool
measured which claim.

``claims_calibration.json`` ships with the package: the README's list of claims not resolved by ten seeds is
rendered from it (``python -m poskernels.page.readme``).  A block holding a seed the tests run is refused.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from poskernels.atomic import write_json_atomic, write_text_atomic
from poskernels.claims import CLAIMS
from poskernels.claims.calibrate import MAX_FALSE_PASS, MAX_JOINT_SIZE, MAX_SIZE, calibrate
from poskernels.claims.report import load_numbers
from poskernels.errors import PosKernelsError

TESTED = set(range(0, 10)) | set(range(1000, 1010))  # the blocks the tests run


def _seeds(numbers: dict) -> list[int]:
    return list(numbers.get("tournament", {}).get("seeds", [])) + list(numbers.get("filings", {}).get("seeds", []))


def keep_rows(out: dict, old: dict, claims) -> dict:
    """Fill ``out``'s rows of the claims its pool cannot read from the earlier calibration ``old``, each marked
    ``kept_from`` (the blocks it was measured on): only for the same statistic and threshold (a ``near`` reads its
    target from the numbers).  The floor on a standard error (``claims.kinds.SD_FLOOR``) only makes a pass harder,
    so a kept false-pass rate measured before it is an upper bound."""
    earlier = {row["id"]: row for row in old["claims"]}
    kept = old.get("kept_from_seeds", old["first_seeds"])
    for i, (claim, row) in enumerate(zip(claims, out["claims"])):
        was = earlier.get(row["id"])
        same = was is not None and was["kind"] == claim.kind and (was["threshold"] == claim.threshold
                                                                 or claim.kind == "near")  # fmt: skip
        if row["size"] is None and same and was["size"] is not None:  # an earlier pool that measured it
            out["claims"][i] = {**was, "finding": claim.finding, "kept_from": was.get("kept_from", kept)}
    out["kept_from_seeds"], out["kept_seeds"] = kept, old.get("kept_seeds", old["seeds"])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", type=Path, help="folders holding numbers.json, one per seed block")
    ap.add_argument("--out", type=Path, help="write the calibration as JSON (the shipped page/claims_calibration.json)")
    ap.add_argument("--csv", type=Path, help="write one row per claim as CSV")
    ap.add_argument("--draws", type=int, default=4000, help="blocks drawn for each rate (default 4000)")
    ap.add_argument("--keep", type=Path, help="an earlier calibration whose rows fill the claims this pool cannot read")
    args = ap.parse_args(argv)
    try:
        blocks, firsts = [], []
        for folder in args.results:
            numbers = load_numbers(folder / "numbers.json")
            tested = sorted(TESTED & set(_seeds(numbers)))
            if tested:
                raise PosKernelsError(f"{folder}: holds seeds the tests run ({tested[:3]}...); calibrate on others")
            blocks.append(numbers)
            firsts.append(numbers["tournament"]["seeds"][0])
    except PosKernelsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = calibrate(blocks, CLAIMS, draws=args.draws)
    out["first_seeds"] = firsts
    if args.keep is not None:
        keep_rows(out, json.loads(args.keep.read_text(encoding="utf-8")), CLAIMS)
    if args.out is not None:
        write_json_atomic(args.out, out)
    if args.csv is not None:
        buf = io.StringIO()
        fields = ["id", "kind", "threshold", "null", "pooled", "size", "false_pass", "power", "resolved"]
        w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for row in out["claims"]:
            w.writerow({k: (f"{row[k]:.4g}" if isinstance(row[k], float) else row[k]) for k in fields})
        write_text_atomic(args.csv, buf.getvalue())
    rows = out["claims"]
    for row in rows:
        if row["size"] is None:
            print(f"  n/a   {row['id']}")
            continue
        flag = "" if row["resolved"] else "  NOT RESOLVED"
        big = "  SIZE" if row["size"] > MAX_SIZE else ""
        print(f"  size {row['size']:.4f}  false pass {row['false_pass']:.3f}  {row['id']}{flag}{big}")
    weak = [r for r in rows if r["resolved"] is False]
    print(
        f"{len(rows)} claims over {out['seeds']} pooled seeds (blocks {', '.join(map(str, firsts))}); joint size"
        f" {out['joint_size']:.4f} (<= {MAX_JOINT_SIZE}); {len(weak)} not resolved by ten seeds (false pass >"
        f" {MAX_FALSE_PASS}, or size > {MAX_SIZE})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
