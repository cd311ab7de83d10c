"""The claims of "Finance case study: which company was named last?" about the filing heads and their readers.

The rows are in ``rows/filings.toml`` (:mod:`poskernels.claims.table`); this module names them.

Examples
--------
>>> FILINGS_CLAIMS[1].inputs["x"]
'misses_are_wide()'
"""

from __future__ import annotations

from .record import Claim
from .table import suite

__all__ = ["FILINGS_CLAIMS"]

FILINGS_CLAIMS: tuple[Claim, ...] = suite("filings")
