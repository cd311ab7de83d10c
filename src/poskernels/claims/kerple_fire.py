"""The claims of the papers beyond the article: Kerple and FIRE hold past the training length where RoPE does not.

Chi et al. 2022 (Kerple) and Li et al. 2023 (FIRE) claim that their biases let a model read past the length it was
trained on, where RoPE does not.  Here a head *holds* at length ``n`` when its accuracy there is within
:data:`HOLD` of its accuracy at the training length 32: over a block of ten seeds the claim passes when the mean
drop ``acc(32) - acc(n)`` plus three standard errors is at most :data:`HOLD`, and RoPE *falls* when its mean drop
minus three standard errors is at least :data:`HOLD`.  Both are read at the tournament's longest length (256, its
2,000 test sequences; ``numbers.json``'s ``tournament``) and at 10^5 tokens (the long-context section's cue task,
500 sequences, the streaming reader; ``long.length``).  Chi et al.'s comparison of Kerple with ALiBi is read at
both lengths too, as a gap and as a tie within :data:`TIE`.

FIRE at 10^5 is read from both initialisations of ``c`` (the paper's code's 0.1, ``fire``; 1, ``fire_c1``), three
ways: the paper's claim (it holds, within :data:`HOLD`), what ten seeds of our heads can show (it holds within
:data:`FAR_HOLD`, twice that), and the statement an earlier machine's heads gave (it is *shown to fall*: mean drop
less three standard errors beyond :data:`HOLD`), a finding kept so that it can fail.  Which of them the suites
assert is the calibration's to say (``docs/guide/claims.md``).

The rows are in ``rows/beyond.toml`` (:mod:`poskernels.claims.table`), whose ``[constants]`` give :data:`HOLD`
and :data:`TIE`.

Examples
--------
>>> [c.id for c in BEYOND_CLAIMS][:2]
['beyond.kerple_log_holds_at_256', 'beyond.kerple_power_holds_at_256']
>>> c = BEYOND_CLAIMS[0]
>>> c.threshold, c.where
('mean + 3 SE <= 0.05', 'Chi et al. 2022, abstract and experiments (extrapolation past the training length)')
"""

from __future__ import annotations

from .record import Claim
from .table import constants, suite

__all__ = ["BEYOND_CLAIMS", "CLAIMED", "CONTRAST", "FAR_HOLD", "FAR_SCHEMES", "HOLD", "TIE"]

#: The largest drop in accuracy from the training length that still counts as holding (five points).
HOLD: float = constants("beyond")["HOLD"]
#: The margin of a tie between Kerple's and ALiBi's mean accuracies (three points, as the tournament's ties).
TIE: float = constants("beyond")["TIE"]
#: What FIRE's heads are shown to hold within at 10^5 tokens, where five points are not shown: ten points.
FAR_HOLD: float = constants("beyond")["FAR_HOLD"]
#: The schemes whose papers make the claim, and the one they contrast with.
CLAIMED = ("kerple_log", "kerple_power", "fire")
CONTRAST = "rope"
#: Every scheme the claims read at 10^5 tokens: the claimed ones, RoPE, FIRE from c = 1 and ALiBi (Chi et al.'s).
FAR_SCHEMES = (CONTRAST, *CLAIMED, "fire_c1", "alibi")

BEYOND_CLAIMS: tuple[Claim, ...] = suite("beyond")
