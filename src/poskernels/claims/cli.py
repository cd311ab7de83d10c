"""``python -m poskernels.claims``: every trained claim checked on a ``numbers.json``, with its verdict.

A claim is *asserted* when ten seeds resolve it (on the calibration pool, ``page/claims_calibration.json``, it
passes at most 5% of the time when false and fails at most 1% of fresh blocks) and it is not a finding; every other
claim is a *finding*, reported with its verdict in lower case and marked so, never a failure of the file.

Exit status: 0 when every asserted claim that applies passes, 1 when one fails or the output cannot be written
(disk full),
2 for bad input (a file that cannot be read, is not JSON, or is not a ``numbers.json``: no trained section, a
per-seed dict in its place, a section a claim cannot read, a per-seed list with no number, an integer past
float64) and for an output path the project's one writer refuses (a missing folder, a FIFO nobody reads).  Every
error is one line on stderr, never a traceback.

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
import errno
import json
import os
import sys
from pathlib import Path

from ..atomic import check_output
from ..errors import PosKernelsError
from .report import _unreadable, _verdicts, asserted_ids, load_numbers, render

__all__ = ["main"]


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def main(argv=None) -> int:
    """``python -m poskernels.claims NUMBERS.json [--json PATH|-]``: check every claim on a ``numbers.json``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        ``0`` when no asserted claim fails, ``1`` when one does (or ``--json`` cannot be written), ``2`` for bad
        input such as a file that is not a ``numbers.json`` (the error on standard error).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "numbers.json"
    >>> _ = path.write_text("[1]")
    >>> main([str(path)])
    2
    """
    p = argparse.ArgumentParser(prog="python -m poskernels.claims", description=__doc__.splitlines()[0])
    p.add_argument("numbers", type=Path, help="a numbers.json written by `poskernels reproduce`")
    p.add_argument("--json", metavar="PATH", help="write the verdicts as JSON (`-`: to stdout, instead of the text)")
    args = p.parse_args(argv)
    try:
        out = None
        if args.json is not None and args.json != "-":
            if _same_file(args.json, args.numbers):
                raise PosKernelsError(f"--json {args.json!r} is the numbers file itself; choose another path")
            out = check_output(args.json, "--json", inputs=[args.numbers])  # the one writer's checks, before work
        numbers = load_numbers(args.numbers)
        verdicts = _verdicts(args.numbers, numbers)
        damaged = _unreadable(numbers, verdicts)
        if damaged:
            raise PosKernelsError(
                f"{args.numbers}: not as numbers.json writes it: {len(damaged)} claim(s) cannot read their values,"
                f" e.g. {damaged[0]!r}"
            )
    except PosKernelsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    asserted = asserted_ids()
    data = {
        "numbers": str(args.numbers),
        "claims": [{**v.as_dict(), "asserted": v.claim in asserted} for v in verdicts],
    }
    if out is not None:
        try:
            out.write(json.dumps(data, indent=1) + "\n")
        except PosKernelsError as err:  # a FIFO nobody reads: the writer's refusal
            print(f"error: {err}", file=sys.stderr)
            return 2
        except OSError as err:  # disk full, a device that fails: a runtime failure
            what = err.strerror or str(err)
            if err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
                what = f"disk full ({what})"
            print(f"error: --json {args.json}: {what}", file=sys.stderr)
            return 1
    if args.json == "-":
        json.dump(data, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(render(verdicts, asserted))
    return 1 if any(v.passed is False and v.claim in asserted for v in verdicts) else 0
