"""A reader: a trained head of one scheme, read as trained or through a context-extension map (Definition 5).

:data:`READERS` names every reader once, ``name -> (trained scheme, map)``: each scheme of
:data:`poskernels.encodings.SCHEMES` as trained (map ``"none"``), then the RoPE head re-read with each of
Definition 5's maps (PI, NTK-aware, YaRN).  Each experiment picks its readers from it by name: the tournament's
re-reads (:data:`poskernels.experiments.rescaled.RESCALED_READERS`), the filings' seven
(:data:`poskernels.experiments.filing_maps.FILING_READERS`), every one of them at long context.

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
from ..extension.maps import MAP_COLOURS, MAP_TITLES

__all__ = ["BEYOND", "MAP_COLOURS", "MAP_TITLES", "READERS", "READER_LABELS", "RESCALINGS", "all_readers", "colours",
           "pick", "reader_colour", "reader_label"]  # fmt: skip

#: Definition 5's maps a trained RoPE head is re-read with, in the article's order (``none`` is the head itself).
RESCALINGS = tuple(m for m in ARTICLE_MAPS if m != "none")


def all_readers() -> dict[str, tuple[str, str]]:
    """Every reader of the schemes registered now (those registered from outside included), as :data:`READERS`.

    Returns
    -------
    dict of str to (str, str)
        ``name -> (trained scheme, map)``: each registered scheme as trained (map ``"none"``), then
        ``rope_<map>`` for each map of :data:`RESCALINGS`.

    Examples
    --------
    >>> r = all_readers()
    >>> r["rope"], r["rope_yarn"]
    (('rope', 'none'), ('rope', 'yarn'))
    """
    return {**{s: (s, "none") for s in SCHEMES}, **{f"rope_{m}": ("rope", m) for m in RESCALINGS}}


#: Every reader, name -> (trained scheme, context-extension map of Definition 5; ``"none"``: as trained): the
#: built-in schemes' (:func:`all_readers` adds those of schemes registered later).
READERS: dict[str, tuple[str, str]] = all_readers()

# MAP_TITLES (display names of the maps of poskernels.extension.MAPS; a map not listed is shown by its key) and
# MAP_COLOURS (a re-read RoPE head is drawn in its map's colour; a head read as trained in its scheme's,
# Scheme.colour) are read from the map records, each map's title and colour (poskernels.extension.maps).

#: What marks a scheme the article's tournament does not train.
BEYOND = " (beyond)"


def reader_label(key: str) -> str:
    """How the tables and figures name a reader: a key of :data:`READERS`, ``<scheme>_<map>`` or anything else.

    Parameters
    ----------
    key : str
        A reader's name: a key of :data:`READERS`, a registered scheme and a map of
        :data:`poskernels.extension.MAPS` joined by ``_``, or any other string (named by itself).

    Returns
    -------
    str
        The scheme's title (marked :data:`BEYOND` when the article's tournament does not train it), followed by
        ``" + <map title>"`` for a re-read head; ``key`` itself when it names no scheme.

    Examples
    --------
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


def reader_colour(key: str) -> str:
    """A reader's colour in the figures and on the page: its scheme's, or its map's for a re-read head.

    Parameters
    ----------
    key : str
        A reader's name, as for :func:`reader_label`.

    Returns
    -------
    str
        A ``#rrggbb`` colour; ``"#333333"`` for a name that is not a reader.

    Examples
    --------
    >>> reader_colour("alibi"), reader_colour("rope_pi"), reader_colour("mystery")
    ('#009e73', '#56b4e9', '#333333')
    """
    scheme, m = READERS.get(key, (key, "none"))
    if m != "none":
        return MAP_COLOURS.get(m, "#333333")
    return SCHEMES[scheme].colour if scheme in SCHEMES else "#333333"


def colours() -> dict[str, str]:
    """Every colour the payload carries: each registered scheme's, each reader's, each map's (by its key).

    Returns
    -------
    dict of str to str
        ``name -> "#rrggbb"`` for every scheme of :data:`poskernels.encodings.SCHEMES`, every reader of
        :data:`READERS` and every map of :data:`MAP_COLOURS`.

    Examples
    --------
    >>> c = colours()
    >>> c["rope"], c["rope_yarn"], c["yarn"]
    ('#0072b2', '#7a5195', '#7a5195')
    """
    return {**{n: s.colour for n, s in SCHEMES.items()}, **{k: reader_colour(k) for k in READERS}, **MAP_COLOURS}


#: How the tables, the README, the payload and the figures name each reader of :data:`READERS`.
READER_LABELS: dict[str, str] = {name: reader_label(name) for name in READERS}


def pick(names) -> dict[str, tuple[str, str]]:
    """The readers ``names`` of :data:`READERS`, in that order.

    Parameters
    ----------
    names : iterable of str
        Readers' names, keys of :data:`READERS`.

    Returns
    -------
    dict of str to (str, str)
        ``name -> (trained scheme, map)`` for each of ``names``, in their order.

    Examples
    --------
    >>> pick(["rope", "rope_pi"])
    {'rope': ('rope', 'none'), 'rope_pi': ('rope', 'pi')}
    """
    return {name: READERS[name] for name in names}
