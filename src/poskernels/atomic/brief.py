"""How an output path is quoted in a message: its text, shortened in the middle past 120 characters."""

from __future__ import annotations

__all__ = ["_brief"]


def _brief(path) -> str:
    """``repr`` of the path's text, its middle elided past 120 characters.

    Examples
    --------
    >>> _brief("out.json")
    "'out.json'"
    >>> len(_brief("x" * 500)) < 110
    True
    """
    text = str(path)
    return repr(text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}")
