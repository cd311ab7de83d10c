"""Assembles every number of the article: the sections of ``numbers.json``, in article order.

Importing this package registers the sections; :func:`assemble` computes them.
"""

from __future__ import annotations

import importlib

from .registry import SECTIONS, Context, Section, format_table, register

# Section modules, in article order.  Each calls ``register(Section(...))`` at import.
_SECTION_MODULES: tuple[str, ...] = ("deterministic_a", "deterministic_b", "trained", "filings", "long_context")

for _name in _SECTION_MODULES:
    importlib.import_module(f"{__name__}.{_name}")

__all__ = ["SECTIONS", "Context", "Section", "assemble", "compute_section", "format_table", "register"]


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


def assemble(ctx: Context | None = None, keys=None, include_trained: bool = True) -> dict:
    """Compute the sections (all, or those whose key is in ``keys``) into one dict.

    Parameters
    ----------
    ctx : Context, optional
        Cache directory and progress logger.
    keys : iterable of str, optional
        Restrict to these top-level keys.
    include_trained : bool
        If false, skip sections that train models.

    Returns
    -------
    dict
        ``{key: data}``, JSON-ready.
    """
    ctx = ctx or Context()
    wanted = None if keys is None else set(keys)
    for section in SECTIONS:
        if wanted is not None and section.key not in wanted:
            continue
        if section.trained and not include_trained:
            continue
        compute_section(ctx, section)
    return ctx.numbers
