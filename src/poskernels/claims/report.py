"""A ``numbers.json`` read for the claims, every claim's verdict on it, and the report of them.

:func:`load_numbers` reads and checks the file, :func:`~poskernels.claims.report.render` writes the report, the
asserted claims marked (:func:`asserted_ids`); ``python -m poskernels.claims`` (:mod:`poskernels.claims.cli`) prints it.
"""

from __future__ import annotations

import json
import math
import warnings

from ..errors import PosKernelsError, parse_json, read_text
from ..page.claims_page import CALIBRATION
from . import CLAIMS
from .calibrate import MAX_FALSE_PASS
from .record import Verdict

__all__ = ["TRAINED_SECTIONS", "asserted_ids", "load_numbers", "render"]


#: The sections of ``numbers.json`` a claim reads; a file with none of them is not one to check.
TRAINED_SECTIONS = ("tournament", "rescaled", "rebound", "sinusoidal", "thm2", "filings", "long")


def load_numbers(path) -> dict:
    """A ``numbers.json`` read and checked for the claims: a JSON object with at least one trained section.

    Parameters
    ----------
    path : str or path-like
        The file (``poskernels reproduce`` writes it).

    Returns
    -------
    dict
        The file's JSON object.

    Raises
    ------
    PosKernelsError
        If the file cannot be read or is not JSON, is not an object with one of :data:`TRAINED_SECTIONS` (each an
        object), is a section's per-seed dict, or holds an integer past float64's range.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "numbers.json"
    >>> _ = path.write_text('{"tournament": {"per_seed": {}}}')
    >>> sorted(load_numbers(path))
    ['tournament']
    >>> _ = path.write_text("[1]")
    >>> load_numbers(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: .../numbers.json: not a numbers.json (a JSON object); got a list
    """
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
    if any(k not in TRAINED_SECTIONS for k in data) and all(_per_seed_like(v) for v in data.values()):
        raise PosKernelsError(
            f"{path}: not a numbers.json: a per-seed dict (scheme -> length -> one value per seed), such as a "
            f"section's 'per_seed'; give the numbers.json that `poskernels reproduce` writes"
        )
    _check_numbers(path, data, "")
    return data


def _per_seed_like(value) -> bool:
    """``{length or part: [values] or null}``: one scheme's per-seed entry, never a section of numbers.json."""
    return isinstance(value, dict) and bool(value) and all(v is None or isinstance(v, list) for v in value.values())


def _check_numbers(path, value, where: str) -> None:
    """Every integer readable as a float64 (JSON allows 400 digits; a statistic of one overflows)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not math.isfinite(_as_float(value)):
        shown = str(value)
        shown = shown if len(shown) <= 24 else f"{shown[:12]}...({len(shown)} digits)"
        raise PosKernelsError(f"{path}: {where or 'the file'} holds the integer {shown}, past float64's range")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_numbers(path, v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_numbers(path, v, f"{where}[{i}]")


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _verdicts(path, numbers: dict) -> list[Verdict]:
    """:func:`check_all`, one claim at a time: a claim whose values cannot be read (a per-seed list with no number
    left, statistics of nothing) names the file as damaged instead of raising."""
    verdicts = []
    for claim in CLAIMS:
        try:
            with warnings.catch_warnings():  # a mean of nothing warns, then raises or gives NaN: the error says it
                warnings.simplefilter("ignore", RuntimeWarning)
                verdicts.append(claim.check(numbers))
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError) as err:
            if isinstance(err, PosKernelsError):
                raise
            raise PosKernelsError(
                f"{path}: not as numbers.json writes it: claim {claim.id!r} cannot read its values "
                f"({type(err).__name__}: {err}); each per-seed list it reads needs finite numbers"
            ) from None
    return verdicts


def _unreadable(numbers: dict, verdicts: list[Verdict]) -> list[str]:
    """The claims whose sections are present but whose values cannot be read: the file is damaged."""
    by_id = {c.id: c for c in CLAIMS}
    return [
        v.claim
        for v in verdicts
        if v.passed is None and not by_id[v.claim].optional and all(k in numbers for k in by_id[v.claim].needs)
    ]


def asserted_ids() -> set[str]:
    """The ids of the asserted claims: resolved on the calibration pool (false pass at most 5%, size at most 1%),
    not a finding.

    Returns
    -------
    set of str
        Empty when the shipped calibration is absent.

    Examples
    --------
    >>> ids = asserted_ids()
    >>> "tournament.no_position_32_sits_at_the_exact_bag_reader" in ids, "beyond.fire_c1_holds_at_1e5" in ids
    (True, False)
    """
    rows = json.loads(CALIBRATION.read_text(encoding="utf-8"))["claims"] if CALIBRATION.is_file() else []
    resolved = {row["id"] for row in rows if row.get("resolved") and row.get("false_pass") <= MAX_FALSE_PASS}
    return {c.id for c in CLAIMS if not c.finding and c.id in resolved}


def render(verdicts: list[Verdict], asserted: set[str] | None = None) -> str:
    """One line per claim: verdict, id, statistic, threshold; then the counts (a finding's verdict in lower case).

    Parameters
    ----------
    verdicts : list of Verdict
        The claims' verdicts.
    asserted : set of str, optional
        The ids asserted (default: :func:`asserted_ids`); the others are findings, reported only.

    Returns
    -------
    str

    Examples
    --------
    >>> print(render([Verdict("tournament.demo", 0.61, "mean - 3 SE >= 0.5", True),
    ...               Verdict("tournament.other", None, "x", None, "no such section")], {"tournament.demo"}))
    pass  tournament.demo  statistic 0.61  threshold mean - 3 SE >= 0.5
    n/a   tournament.other  statistic -  threshold x  (no such section)  [finding: reported, not asserted]
    1 pass, 0 fail, 0 not applicable, of 1 asserted claims; 1 findings reported (0 fail)
    """
    asserted = asserted_ids() if asserted is None else asserted
    word = {True: "pass", False: "FAIL", None: "n/a "}
    lines = []
    for v in verdicts:
        stat = "-" if v.statistic is None else f"{v.statistic:.4g}"
        finding = v.claim not in asserted
        mark = "  [finding: reported, not asserted]" if finding else ""
        lines.append(
            f"{word[v.passed].lower() if finding else word[v.passed]}  {v.claim}  statistic {stat}  threshold"
            f" {v.threshold}" + (f"  ({v.why})" if v.why else "") + mark
        )
    mine = [v for v in verdicts if v.claim in asserted]
    n_pass = sum(v.passed is True for v in mine)
    n_fail = sum(v.passed is False for v in mine)
    n_na = sum(v.passed is None for v in mine)
    found = len(verdicts) - len(mine)
    lines.append(
        f"{n_pass} pass, {n_fail} fail, {n_na} not applicable, of {len(mine)} asserted claims;"
        f" {found} findings reported ({sum(v.passed is False for v in verdicts if v.claim not in asserted)} fail)"
    )
    return "\n".join(lines)
