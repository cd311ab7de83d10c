"""One claim of the article about trained heads, as data: its sentence, where, the statistic, threshold and null.

A :class:`Claim` reads its per-seed values from a ``numbers.json`` dict (``get``), and its kind
(:data:`poskernels.claims.kinds.KINDS`) turns them into a statistic and a :class:`Verdict` at its threshold.  A
``numbers.json`` that lacks a section the claim reads gives a verdict of ``None`` (not applicable), never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import PosKernelsError
from .kinds import KINDS

__all__ = ["SUITES", "Claim", "Verdict", "arr"]

#: The test files that assert the claims, by suite.
SUITES = {
    "tournament": "tests/test_tournament.py",
    "filings": "tests/test_filings.py",
    "long_context": "tests/test_long_context.py",
    "beyond": "tests/test_kerple_fire_claims.py",
    "rotary_family": "tests/test_rotary_variants_claims.py",
    "training": "tests/test_training_variants.py",
}


def arr(values) -> np.ndarray:
    """Per-seed values as floats, ``None`` (a seed with no value) as NaN.

    Parameters
    ----------
    values : iterable
        Numbers or None.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> arr([1, None, 0.5]).tolist()
    [1.0, nan, 0.5]
    """
    return np.array([np.nan if v is None else v for v in values], dtype=float)


@dataclass(frozen=True)
class Verdict:
    """A claim checked on one ``numbers.json``: ``passed`` is None where the file lacks what the claim reads."""

    claim: str
    statistic: float | None
    threshold: str
    passed: bool | None
    why: str = ""

    def as_dict(self) -> dict:
        stat = None if self.statistic is None or not math.isfinite(self.statistic) else self.statistic
        return {
            "claim": self.claim,
            "statistic": stat,
            "threshold": self.threshold,
            "passed": self.passed,
            "why": self.why,
        }


@dataclass(frozen=True)
class Claim:
    """One trained claim.

    Attributes
    ----------
    id : str
        What it asserts, as a test id (``<suite>.<name>``).
    suite : str
        A key of :data:`SUITES`: the test file that asserts it.
    sentence : str
        The article's words it stands for (or the paper's, for a scheme beyond the article).
    where : str
        Where the article says it (section, paragraph or table), or the paper and its section.
    kind : str
        A key of :data:`~poskernels.claims.kinds.KINDS`.
    params : dict
        Its threshold.
    get : callable
        ``numbers -> {name: per-seed array}`` (seeds on axis 0).
    needs : tuple of str
        The ``numbers.json`` sections it reads.
    null : str
        What would make it false (the kind's null unless said).
    optional : bool
        Reads values ``poskernels reproduce`` does not write (the tests compute them): missing, not applicable.
    inputs : dict
        The table's expression of each value it reads (:mod:`poskernels.claims.inputs`), for the reader.
    finding : str
        Non-empty for a *finding*: a figure the table reports beside the papers' claims (the paper's claim that
        does not hold here, or a statement ten seeds cannot settle), with why; it is never asserted.
    """

    id: str
    suite: str
    sentence: str
    where: str
    kind: str
    params: dict
    get: Callable[[dict], dict] = field(repr=False)
    needs: tuple[str, ...]
    null: str = ""
    optional: bool = False
    finding: str = ""
    inputs: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise PosKernelsError(f"claim {self.id!r}: unknown kind {self.kind!r}; accepted: {', '.join(KINDS)}")
        if self.suite not in SUITES:
            raise PosKernelsError(f"claim {self.id!r}: unknown suite {self.suite!r}; accepted: {', '.join(SUITES)}")
        if not self.null:
            object.__setattr__(self, "null", KINDS[self.kind].null_text)

    @property
    def threshold(self) -> str:
        return KINDS[self.kind].text(self.params)

    def values(self, numbers: dict) -> dict | None:
        """The per-seed values the claim reads, or None if ``numbers`` lacks them."""
        if any(key not in numbers for key in self.needs):
            return None
        try:
            return self.get(numbers)
        except (KeyError, IndexError, TypeError, ValueError):
            return None

    def check(self, numbers: dict) -> Verdict:
        """The claim's verdict on a ``numbers.json`` dict."""
        v = self.values(numbers)
        if v is None:
            missing = [k for k in self.needs if k not in numbers]
            why = f"numbers.json lacks {missing}" if missing else "numbers.json lacks the values it reads"
            return Verdict(self.id, None, self.threshold, None, why)
        stat, passed = KINDS[self.kind].evaluate(v, self.params)
        given = {k: float(x) for k, x in v.items() if np.ndim(x) == 0}  # a target the numbers give
        return Verdict(self.id, float(stat), KINDS[self.kind].text({**self.params, **given}), bool(passed))
