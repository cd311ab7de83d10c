"""The three files of trained claims parametrize over one table, :data:`poskernels.claims.CLAIMS`.

A claim is asserted under ``test_claim_holds`` when, measured on seeds the tests do not run
(``src/poskernels/page/claims_calibration.json``), it passes at most 5% of the time when false and fails at most 1%
of fresh blocks, and it is not a finding.  Every other claim is a finding (``Claim.finding``, or not resolved by ten
seeds): ``test_claim_is_reported_not_asserted`` checks that the numbers give its statistic, and the findings table
(``docs/guide/claims.md``) reports it; it is not asserted, since a statement that passes more than 5% of the time
when false is no test, and one that fails a true block more often than that would fail the suites by chance.
"""

from __future__ import annotations

import json
from pathlib import Path

from poskernels.claims import Claim, of_suite
from poskernels.claims.calibrate import MAX_FALSE_PASS

CALIBRATION = Path(__file__).resolve().parents[1] / "src" / "poskernels" / "page" / "claims_calibration.json"


def _rows() -> dict[str, dict]:
    if not CALIBRATION.exists():
        return {}
    return {row["id"]: row for row in json.loads(CALIBRATION.read_text())["claims"]}


ROWS = _rows()
FALSE_PASS = {k: row["false_pass"] for k, row in ROWS.items()}


def resolved(claim: Claim) -> bool:
    """Whether ten seeds resolve the claim: measured, a false claim passes at most 5% of the time, and a fresh block
    fails it at most 1% of the time (the calibration's ``resolved``)."""
    rate = FALSE_PASS.get(claim.id)
    return rate is not None and rate <= MAX_FALSE_PASS and bool(ROWS[claim.id].get("resolved"))


def holds(suite: str) -> list[Claim]:
    return [c for c in of_suite(suite) if resolved(c) and not c.finding]


def reported(suite: str) -> list[Claim]:
    return [c for c in of_suite(suite) if not resolved(c) or c.finding]


def claim_id(claim: Claim) -> str:
    return claim.id.split(".", 1)[1]


def assert_claim(numbers: dict, claim: Claim) -> None:
    """The claim's verdict on the session's numbers: it must apply and pass."""
    v = claim.check(numbers)
    assert v.passed is not None, f"{claim.id}: not applicable ({v.why})"
    assert v.passed, (
        f"{claim.id}: statistic {v.statistic:.4g} fails {v.threshold}\n  the article: {claim.sentence} ({claim.where})"
    )


def assert_reported(numbers: dict, claim: Claim) -> None:
    """A finding: the session's numbers give its statistic (a number), whatever its verdict."""
    v = claim.check(numbers)
    assert v.passed is not None, f"{claim.id}: not applicable ({v.why})"
    assert v.statistic is not None and v.statistic == v.statistic, f"{claim.id}: no statistic ({v.statistic})"
