"""The article's claims about trained heads, as one table, checked on any ``numbers.json``.

The table is ``claims/rows/<suite>.toml``, one row per claim, read by :mod:`poskernels.claims.table`.  Each
:class:`~poskernels.claims.record.Claim` names the article's sentence it stands for, where the article says
it, the statistic (a share of seeds, a mean with ``k`` standard errors, a gap in joined standard errors, a median,
a mode), its threshold and the null under which it would be false.  The claims of the papers beyond the article
(Kerple, FIRE: :mod:`poskernels.claims.kerple_fire`; xPos, p-RoPE, partial rotary:
:mod:`poskernels.claims.rotary_variants`; the scaled softmax and randomized positions:
:mod:`poskernels.claims.training`) are rows of the same table, each naming the paper's sentence.  The table is the
only place a threshold is written: the test files (``tests/test_tournament.py``, ``tests/test_filings.py``,
``tests/test_long_context.py``, ``tests/test_kerple_fire_claims.py``, ``tests/test_rotary_variants_claims.py``,
``tests/test_training_variants.py``) parametrize over it, and the calibration (:mod:`poskernels.claims.calibrate`)
reads it to measure each claim's size and how often it passes when false.

``python -m poskernels.claims NUMBERS.json [--json PATH|-]`` prints every claim with its statistic, threshold and
verdict, and exits 1 if an asserted claim fails (2 for a file that is not a ``numbers.json``): a reproduction is
checked on the machine that made it, and numbers in which an asserted claim is false make it fail.

Examples
--------
>>> len({c.id for c in CLAIMS}) == len(CLAIMS)
True
>>> sorted({c.suite for c in CLAIMS})
['beyond', 'filings', 'long_context', 'rotary_family', 'tournament', 'training']
>>> by_id("tournament.alibi_median_head_holds_0.95_at_256").threshold
'median - 2.5 SE > 0.95'
"""

from __future__ import annotations

from ..errors import PosKernelsError
from .filings import FILINGS_CLAIMS
from .kerple_fire import BEYOND_CLAIMS
from .long_context import LONG_CLAIMS
from .record import SUITES, Claim, Verdict
from .rotary_variants import ROTARY_CLAIMS
from .tournament import TOURNAMENT_CLAIMS
from .training import TRAINING_CLAIMS

__all__ = ["CLAIMS", "SUITES", "Claim", "Verdict", "by_id", "check_all", "of_suite"]

#: Every trained claim, in the order of the article, then the claims of the papers beyond it (Kerple, FIRE; the
#: rotary family: xPos, p-RoPE, partial rotary; the training side: the scaled softmax, randomized positions).
CLAIMS: tuple[Claim, ...] = (
    TOURNAMENT_CLAIMS + FILINGS_CLAIMS + LONG_CLAIMS + BEYOND_CLAIMS + ROTARY_CLAIMS + TRAINING_CLAIMS
)


def of_suite(suite: str) -> tuple[Claim, ...]:
    """The claims one test file asserts.

    Parameters
    ----------
    suite : str
        A key of :data:`SUITES` (``"tournament"``, ``"filings"``, ``"long_context"``, ``"beyond"``,
        ``"rotary_family"``, ``"training"``).

    Returns
    -------
    tuple of Claim
        The claims of that suite, in the order of :data:`CLAIMS`.

    Raises
    ------
    PosKernelsError
        If ``suite`` is not a key of :data:`SUITES`.

    Examples
    --------
    >>> {c.suite for c in of_suite("filings")}
    {'filings'}
    >>> of_suite("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown suite 'nope'; accepted: tournament, filings, long_context, ...
    """
    if suite not in SUITES:
        raise PosKernelsError(f"unknown suite {suite!r}; accepted: {', '.join(SUITES)}")
    return tuple(c for c in CLAIMS if c.suite == suite)


def by_id(claim_id: str) -> Claim:
    """The claim of that id.

    Parameters
    ----------
    claim_id : str
        A claim's id, ``<suite>.<name>`` (a row of ``claims/rows/<suite>.toml``).

    Returns
    -------
    Claim
        The claim of :data:`CLAIMS` with that id.

    Raises
    ------
    PosKernelsError
        If no claim has that id.

    Examples
    --------
    >>> by_id("tournament.alibi_median_head_holds_0.95_at_256").suite
    'tournament'
    >>> by_id("tournament.nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: no claim 'tournament.nope'; the ids are the rows of claims/rows/*.toml ...
    """
    for c in CLAIMS:
        if c.id == claim_id:
            return c
    raise PosKernelsError(
        f"no claim {claim_id!r}; the ids are the rows of claims/rows/*.toml (`python -m poskernels.claims NUMBERS.json`"
        " prints every one)"
    )


def check_all(numbers: dict, claims=CLAIMS) -> list[Verdict]:
    """Every claim's verdict on a ``numbers.json`` dict.

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` as read by :func:`json.load` (what ``poskernels reproduce`` writes).
    claims : sequence of Claim, optional
        The claims to check; all of :data:`CLAIMS` by default.

    Returns
    -------
    list of Verdict
        One per claim, in order; a verdict's ``passed`` is None (not applicable, never a pass) where ``numbers``
        lacks a section the claim reads.

    Examples
    --------
    The shipped reference numbers pass every tournament claim; an empty dict is checked by none:

    >>> import json
    >>> from poskernels.page.readme import REFERENCE_NUMBERS
    >>> numbers = json.loads(REFERENCE_NUMBERS.read_text(encoding="utf-8"))
    >>> {v.passed for v in check_all(numbers, of_suite("tournament"))}
    {True}
    >>> check_all({}, of_suite("filings"))[0].why
    "numbers.json lacks ['filings']"
    """
    return [c.check(numbers) for c in claims]
