"""``python -m poskernels.claims``: every trained claim checked on a ``numbers.json``, with its verdict.

Exit status: 0 when every claim that applies passes, 1 when one fails, 2 for bad input (a file that cannot be
read, is not JSON, or is not a ``numbers.json``: no trained section, or a section a claim cannot read).

Examples
--------
>>> import json, tempfile
>>> from pathlib import Path
>>> bad = Path(tempfile.mkdtemp()) / "numbers.json"
>>> _ = bad.write_text(json.dumps({"prop1": {}}))
>>> main([str(bad)])
2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..atomic import check_writable, write_json_atomic
from ..errors import PosKernelsError, parse_json, read_text
from . import CLAIMS, check_all
from .record import Verdict

__all__ = ["TRAINED_SECTIONS", "load_numbers", "main", "render"]

#: The sections of ``numbers.json`` a claim reads; a file with none of them is not one to check.
TRAINED_SECTIONS = ("tournament", "rescaled", "rebound", "sinusoidal", "thm2", "filings", "long")


def load_numbers(path) -> dict:
    """A ``numbers.json`` read and checked for the claims: a JSON object with at least one trained section."""
    data = parse_json(read_text(path, "numbers file"), str(path))
    if not isinstance(data, dict):
        raise PosKernelsError(f"{path}: not a numbers.json (a JSON object); got a {type(data).__name__}")
    present = [k for k in TRAINED_SECTIONS if k in data]
    if not present:
        raise PosKernelsError(
            f"{path}: not a numbers.json with trained numbers: none of the sections {', '.join(TRAINED_SECTIONS)};"
            f" got keys {sorted(data)[:12]}"
        )
    bad = [k for k in present if not isinstance(data[k], dict)]
    if bad:
        raise PosKernelsError(f"{path}: the section(s) {bad} must be JSON objects")
    return data


def _unreadable(numbers: dict, verdicts: list[Verdict]) -> list[str]:
    """The claims whose sections are present but whose values cannot be read: the file is damaged."""
    by_id = {c.id: c for c in CLAIMS}
    return [
        v.claim
        for v in verdicts
        if v.passed is None and not by_id[v.claim].optional and all(k in numbers for k in by_id[v.claim].needs)
    ]


def render(verdicts: list[Verdict]) -> str:
    """One line per claim: verdict, id, statistic, threshold; then the count."""
    word = {True: "pass", False: "FAIL", None: "n/a "}
    lines = []
    for v in verdicts:
        stat = "-" if v.statistic is None else f"{v.statistic:.4g}"
        lines.append(
            f"{word[v.passed]}  {v.claim}  statistic {stat}  threshold {v.threshold}"
            + (f"  ({v.why})" if v.why else "")
        )
    n_pass = sum(v.passed is True for v in verdicts)
    n_fail = sum(v.passed is False for v in verdicts)
    n_na = sum(v.passed is None for v in verdicts)
    lines.append(f"{n_pass} pass, {n_fail} fail, {n_na} not applicable, of {len(verdicts)} claims")
    return "\n".join(lines)


def main(argv=None) -> int:
    """``python -m poskernels.claims NUMBERS.json [--json PATH|-]``."""
    p = argparse.ArgumentParser(prog="python -m poskernels.claims", description=__doc__.splitlines()[0])
    p.add_argument("numbers", type=Path, help="a numbers.json written by `poskernels reproduce`")
    p.add_argument("--json", metavar="PATH", help="write the verdicts as JSON (`-`: to stdout, instead of the text)")
    args = p.parse_args(argv)
    try:
        out = None
        if args.json is not None and args.json != "-":
            out = check_writable(Path(args.json), what="--json")
            if out.resolve() == args.numbers.resolve():
                raise PosKernelsError(f"--json {args.json!r} is the numbers file itself; choose another path")
        numbers = load_numbers(args.numbers)
        verdicts = check_all(numbers)
        damaged = _unreadable(numbers, verdicts)
        if damaged:
            raise PosKernelsError(
                f"{args.numbers}: not as numbers.json writes it: {len(damaged)} claim(s) cannot read their values,"
                f" e.g. {damaged[0]!r}"
            )
    except PosKernelsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    data = {"numbers": str(args.numbers), "claims": [v.as_dict() for v in verdicts]}
    if out is not None:
        write_json_atomic(out, data)
    if args.json == "-":
        json.dump(data, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(render(verdicts))
    return 1 if any(v.passed is False for v in verdicts) else 0
