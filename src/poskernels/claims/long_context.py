"""The claims of Theorem 3 about the trained ALiBi heads far past the window (the ``long`` section).

The rows are in ``rows/long_context.toml`` (:mod:`poskernels.claims.table`); its ``[constants]`` name the needle
offsets the claims read, :data:`INSIDE` (inside half of every horizon ``W/s >= 24``) and :data:`BEYOND` (beyond
twice every horizon).

Examples
--------
>>> INSIDE, BEYOND
(('1', '4', '8', '12', '16'), ('256', '1024', '4096', '100000'))
"""

from __future__ import annotations

from .record import Claim
from .table import constants, suite

__all__ = ["BEYOND", "INSIDE", "LONG_CLAIMS"]

INSIDE: tuple[str, ...] = constants("long_context")["INSIDE"]
BEYOND: tuple[str, ...] = constants("long_context")["BEYOND"]

LONG_CLAIMS: tuple[Claim, ...] = suite("long_context")
