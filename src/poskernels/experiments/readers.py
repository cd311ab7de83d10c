"""A reader: a trained head of one scheme, read as trained or through a context-extension map (Definition 5).

:data:`READERS` names every reader once, ``name -> (trained scheme, map)``: each scheme as trained (map ``"none"``),
then the RoPE head re-read with PI, NTK-aware and YaRN.  Each experiment picks its readers from it by name: the
tournament's re-reads (:data:`poskernels.experiments.tournament.RESCALED_READERS`), the filings' seven
(:data:`poskernels.experiments.filings_reader.FILING_READERS`), every one of them at long context.

>>> READERS["rope_ntk"], READERS["alibi"]
(('rope', 'ntk'), ('alibi', 'none'))
"""

from __future__ import annotations

__all__ = ["READERS", "pick"]

#: Every reader, name -> (trained scheme, context-extension map of Definition 5; ``"none"``: as trained).
READERS: dict[str, tuple[str, str]] = {
    **{s: (s, "none") for s in ("nope", "sinusoidal", "learned", "rope", "alibi", "t5", "shaw")},
    **{f"rope_{m}": ("rope", m) for m in ("pi", "ntk", "yarn")},
}


def pick(names) -> dict[str, tuple[str, str]]:
    """The readers ``names`` of :data:`READERS`, in that order.

    >>> pick(["rope", "rope_pi"])
    {'rope': ('rope', 'none'), 'rope_pi': ('rope', 'pi')}
    """
    return {name: READERS[name] for name in names}
