"""Assembles every number of the article: the sections of ``numbers.json``, in the page's order.

:data:`SECTIONS` lists them explicitly, one module per part of the article: :mod:`.order` ("Order, and how a mask
leaks it"), :mod:`.clocks` ("Position as a set of clocks"), :mod:`.relative` ("Relative position: biases and the
ALiBi kernel"), :mod:`.rotations` ("Rotations: RoPE"), :mod:`.window` ("Past the training window"),
:mod:`.filings` (the finance case study) and :mod:`.long_context` (beyond the article).  :func:`assemble`
computes them; ``poskernels reproduce`` prints each one's table as it goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from . import clocks, filings, long_context, order, relative, rotations, window
from .registry import Context, Section, format_table

__all__ = ["SECTIONS", "Context", "Section", "assemble", "choose", "compute_section", "format_table"]

#: Every section, in the order ``numbers.json`` holds its keys: the deterministic statements in article order, then
#: the trained ones.  The trained heads' Theorem 2 defects come after the diagnostics that train the same heads and
#: merge into ``thm2`` (``Section.merge``), which keeps its place among the statements.
SECTIONS: tuple[Section, ...] = (
    order.PROP1,
    clocks.THM1,
    clocks.THM2,
    relative.DEF3,
    relative.THM3,
    rotations.PROP4,
    window.THM5,
    window.TOURNAMENT,
    window.RESCALED,
    window.REBOUND,
    window.SINUSOIDAL,
    clocks.THM2_TRAINED,
    filings.FILINGS,
    long_context.LONG,
)


def compute_section(ctx: Context, section: Section) -> dict:
    """Compute ``section`` into ``ctx.numbers`` and return its data.

    A section with ``merge=True`` adds its keys to those already under its key (the trained part of ``thm2``
    joins the deterministic part); any other section replaces its key.

    Examples
    --------
    >>> ctx = Context(log=lambda msg: None)
    >>> ctx.numbers["k"] = {"a": 1}
    >>> compute_section(ctx, Section("k", "K", lambda c: {"b": 2}, str, merge=True))
    {'b': 2}
    >>> ctx.numbers
    {'k': {'a': 1, 'b': 2}}
    """
    data = section.compute(ctx)
    if section.merge and section.key in ctx.numbers:
        ctx.numbers[section.key].update(data)
    else:
        ctx.numbers[section.key] = data
    return data


def choose(keys: Iterable[str] | None = None, include_trained: bool = True) -> list[Section]:
    """The sections whose key is in ``keys`` (all when None), without the trained ones unless ``include_trained``.

    >>> [s.key for s in choose(["thm2", "prop1"], include_trained=False)]
    ['prop1', 'thm2']
    >>> len(choose(["thm2"]))  # the deterministic part and the trained heads' defects
    2
    """
    wanted = None if keys is None else set(keys)
    return [s for s in SECTIONS if (wanted is None or s.key in wanted) and (include_trained or not s.trained)]


def assemble(
    ctx: Context | None = None,
    keys=None,
    include_trained: bool = True,
    each: Callable[[Section, dict], None] | None = None,
) -> dict:
    """Compute the sections (all, or those whose key is in ``keys``) into one dict.

    Parameters
    ----------
    ctx : Context, optional
        Cache directory and progress logger.
    keys : iterable of str, optional
        Restrict to these top-level keys.
    include_trained : bool
        If false, skip sections that train models.
    each : callable, optional
        ``each(section, data)`` after each section is computed (``reproduce`` prints its table there).

    Returns
    -------
    dict
        ``{key: data}``, JSON-ready.
    """
    ctx = ctx or Context()
    for section in choose(keys, include_trained):
        data = compute_section(ctx, section)
        if each is not None:
            each(section, data)
    return ctx.numbers
