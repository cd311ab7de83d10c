"""A reader: a trained head of one scheme, read as trained or through a context-extension map (Definition 5).

:data:`READERS` names every reader once, ``name -> (trained scheme, map)``: each scheme of
:data:`poskernels.encodings.SCHEMES` as trained (map ``"none"``), then the RoPE head re-read with each of
Definition 5's maps (PI, NTK-aware, YaRN).  Each experiment picks its readers from it by name: the tournament's
re-reads (:data:`poskernels.experiments.tournament.RESCALED_READERS`), the filings' seven
(:data:`poskernels.experiments.filings_reader.FILING_READERS`), every one of them at long context.

:data:`READER_LABELS` is the one table of how a reader is named, in the page's tables, the README, the payload
and the figures: a scheme's title (:attr:`poskernels.encodings.Scheme.title`, marked ``(beyond)`` when the
article's tournament does not train it), and ``<title> + <map>`` for a re-read (:data:`MAP_TITLES`).

>>> READERS["rope_ntk"], READERS["alibi"]
(('rope', 'ntk'), ('alibi', 'none'))
>>> READER_LABELS["rope_pi"], READER_LABELS["sinusoidal"], READER_LABELS["t5"]
('RoPE + PI', 'sinusoidal, added', 'T5 buckets (beyond)')
"""

from __future__ import annotations

from ..encodings import SCHEMES
from ..extension import ARTICLE_MAPS, MAPS

__all__ = ["BEYOND", "MAP_TITLES", "READERS", "READER_LABELS", "RESCALINGS", "pick", "reader_label"]

#: Definition 5's maps a trained RoPE head is re-read with, in the article's order (``none`` is the head itself).
RESCALINGS = tuple(m for m in ARTICLE_MAPS if m != "none")

#: Every reader, name -> (trained scheme, context-extension map of Definition 5; ``"none"``: as trained).
READERS: dict[str, tuple[str, str]] = {
    **{s: (s, "none") for s in SCHEMES},
    **{f"rope_{m}": ("rope", m) for m in RESCALINGS},
}

#: Display names of the context-extension maps of :data:`poskernels.extension.MAPS` (Definition 5); a map not
#: listed is shown by its key.
MAP_TITLES = {"none": "nothing", "pi": "PI", "ntk": "NTK-aware", "yarn": "YaRN"}

#: What marks a scheme the article's tournament does not train.
BEYOND = " (beyond)"


def reader_label(key: str) -> str:
    """How the tables and figures name a reader: a key of :data:`READERS`, ``<scheme>_<map>`` or anything else.

    >>> reader_label("shaw"), reader_label("rope_longrope"), reader_label("rope_pi"), reader_label("mystery")
    ('Shaw relative keys (beyond)', 'RoPE + longrope', 'RoPE + PI', 'mystery')
    """
    scheme, m = READERS.get(key, (key, "none"))
    if scheme not in SCHEMES:  # a scheme re-read through any map of MAPS, by its key
        head, _, rest = key.partition("_")
        if head not in SCHEMES or rest not in MAPS:
            return key
        scheme, m = head, rest
    s = SCHEMES[scheme]
    title = s.title if s.in_article else s.title + BEYOND
    return title if m == "none" else f"{title} + {MAP_TITLES.get(m, m)}"


#: How the tables, the README, the payload and the figures name each reader of :data:`READERS`.
READER_LABELS: dict[str, str] = {name: reader_label(name) for name in READERS}


def pick(names) -> dict[str, tuple[str, str]]:
    """The readers ``names`` of :data:`READERS`, in that order.

    >>> pick(["rope", "rope_pi"])
    {'rope': ('rope', 'none'), 'rope_pi': ('rope', 'pi')}
    """
    return {name: READERS[name] for name in names}
