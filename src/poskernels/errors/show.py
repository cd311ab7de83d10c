"""What counts as a number to the validators, and how a refused value is quoted in their messages.

A bool is not an integer, ``10**400`` is not a finite real, and a value whose ``repr`` runs past 80 characters
is shortened in the middle, so a message stays one readable line whatever was passed.
"""

from __future__ import annotations

import math
import numbers


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_finite_real(value) -> bool:
    """A real number (not a bool) that float64 holds finite: ``10**400`` is not, and raises no OverflowError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except (OverflowError, TypeError, ValueError):
        return False


def _show(value) -> str:
    """``repr`` of a value, shortened in the middle past 80 characters (a 5,000-digit integer, a long list)."""
    if _is_int(value) and abs(value) > 10**60:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else f"{text[:60]}...{text[-15:]}"
