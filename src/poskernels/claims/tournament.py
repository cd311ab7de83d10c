"""The claims of "Past the training window" about the tournament's heads, their re-readings and the rebound.

The rows are in ``rows/tournament.toml`` (:mod:`poskernels.claims.table`); this module names them.

Examples
--------
>>> TOURNAMENT_CLAIMS[0].id
'tournament.no_position_32_sits_at_the_exact_bag_reader'
>>> TOURNAMENT_CLAIMS[0].inputs["extra"]
'binomial_se("tournament/bag_reader/32", TEST_COUNT)'
"""

from __future__ import annotations

from .record import Claim
from .table import constants, suite

__all__ = ["TEST_COUNT", "TIE", "TOURNAMENT_CLAIMS"]

#: Test sequences per point (:data:`poskernels.experiments.held_out.TEST_COUNT`), and the margin of a tie (three
#: points), as the table's ``[constants]`` give them.
TEST_COUNT: int = constants("tournament")["TEST_COUNT"]
TIE: float = constants("tournament")["TIE"]

TOURNAMENT_CLAIMS: tuple[Claim, ...] = suite("tournament")
