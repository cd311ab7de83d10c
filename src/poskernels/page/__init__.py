"""Assembles every number of the article: the sections of ``numbers.json``, in the page's order.

:data:`SECTIONS` lists them explicitly, one module per part of the article: :mod:`.order` ("Order, and how a mask
leaks it"), :mod:`.clocks` ("Position as a set of clocks"), :mod:`.relative` ("Relative position: biases and the
ALiBi kernel"), :mod:`.rotations` ("Rotations: RoPE"), :mod:`.window` ("Past the training window"),
:mod:`.filings` (the finance case study) and :mod:`.long_context` (beyond the article).  :func:`assemble`
computes them; ``poskernels reproduce`` prints each one's table as it goes.

With a cache directory and more than one CPU, the trained sections overlap: the work of :data:`PREPARE` starts
first, on the pool, while this thread computes the deterministic sections, and the sections of :data:`AFTER`
compute in the background as soon as the sections they read are done, all on one process pool
(:func:`poskernels.pool.sharing`), so no core idles while another section's last stack trains.  Sections still
enter ``numbers.json`` and print in the page's order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import ExitStack

from ..experiments.filings import prepare_filings
from ..experiments.filings_beyond import prepare_beyond
from ..pool import available_cpus, sharing
from . import clocks, fidelity, filings, long_context, order, relative, rotations, window
from .registry import Context, Section, format_table

__all__ = [
    "AFTER",
    "PREPARE",
    "SECTIONS",
    "Context",
    "Section",
    "assemble",
    "choose",
    "compute_section",
    "format_table",
]

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
    rotations.THM5,
    window.TOURNAMENT,
    window.RESCALED,
    window.REBOUND,
    window.SINUSOIDAL,
    clocks.THM2_TRAINED,
    filings.FILINGS,
    long_context.LONG,
    fidelity.FIDELITY,
)


_IDLE_AFTER = 0.5  # seconds a background section may take past its turn before assemble's idle hook is called

#: Work a section can do before its turn, needing no other section (the filing heads train with the tournament's).
PREPARE: dict[str, Callable[[Context], None]] = {
    "filings": lambda ctx: (
        prepare_filings(ctx.cache_dir, ctx.log, seeds=ctx.seeds),
        prepare_beyond(ctx.cache_dir, ctx.log, seeds=ctx.seeds),  # every scheme beyond the article, on filings
    ),
}

#: Sections that may compute in the background once the sections listed are computed: the filings and the long
#: context read the tournament's heads; the long context, the largest, also waits for the filings, whose short reads
#: would otherwise queue behind its points (and whose table prints first).  The fidelity section reads no head (it
#: gathers the test-draw errors the sections resampled from their own reads): it computes in its turn.
AFTER: dict[str, tuple[str, ...]] = {
    "filings": ("tournament",),
    "long": ("tournament", "filings"),
}


def compute_section(ctx: Context, section: Section) -> dict:
    """Compute ``section`` into ``ctx.numbers`` and return its data.

    A section with ``merge=True`` adds its keys to those already under its key (the trained part of ``thm2``
    joins the deterministic part); any other section replaces its key.

    Parameters
    ----------
    ctx : Context
        Where the result goes (``ctx.numbers``), the cache and the logger the section may use.
    section : Section
        The section to compute.

    Returns
    -------
    dict
        The section's data, JSON-ready.

    Examples
    --------
    >>> ctx = Context(log=lambda msg: None, first_seed=0)
    >>> ctx.numbers["k"] = {"a": 1}
    >>> compute_section(ctx, Section("k", "K", lambda c: {"b": 2}, str, merge=True))
    {'b': 2}
    >>> ctx.numbers
    {'k': {'a': 1, 'b': 2}}
    """
    return _merge(ctx, section, section.compute(ctx))


def _merge(ctx: Context, section: Section, data: dict) -> dict:
    if section.merge and section.key in ctx.numbers:
        ctx.numbers[section.key].update(data)
    else:
        ctx.numbers[section.key] = data
    return data


def choose(keys: Iterable[str] | None = None, include_trained: bool = True) -> list[Section]:
    """The sections whose key is in ``keys`` (all when None), without the trained ones unless ``include_trained``.

    Parameters
    ----------
    keys : iterable of str, optional
        Section keys (``"thm1"``, ``"prop1"``, ...); default None (every section).  A key no section has chooses
        nothing.
    include_trained : bool, optional
        Keep the sections that train heads; default True.

    Returns
    -------
    list of Section
        The chosen sections, in :data:`SECTIONS` order.

    Examples
    --------
    >>> [s.key for s in choose(["thm2", "prop1"], include_trained=False)]
    ['prop1', 'thm2']
    >>> len(choose(["thm2"]))  # the deterministic part and the trained heads' defects
    2
    """
    wanted = None if keys is None else set(keys)
    return [s for s in SECTIONS if (wanted is None or s.key in wanted) and (include_trained or not s.trained)]


def assemble(
    ctx: Context,
    keys=None,
    include_trained: bool = True,
    each: Callable[[Section, dict], None] | None = None,
    idle: Callable[[Section], None] | None = None,
) -> dict:
    """Compute the sections (all, or those whose key is in ``keys``) into one dict.

    Parameters
    ----------
    ctx : Context
        Cache directory, progress logger and the first seed of the trained sections' block.
    keys : iterable of str, optional
        Restrict to these top-level keys.
    include_trained : bool
        If false, skip sections that train models.
    each : callable, optional
        ``each(section, data)`` after each section is computed (``reproduce`` prints its table there).
    idle : callable, optional
        ``idle(section)`` when this thread waits for a section computing in the background (its turn has come and
        it is not done half a second later): work that needs only the sections before it can run there.

    Returns
    -------
    dict
        ``{key: data}``, JSON-ready (``ctx.numbers``).

    Examples
    --------
    >>> numbers = assemble(Context(log=lambda msg: None, first_seed=0), ["prop1"], include_trained=False)
    >>> list(numbers), list(numbers["prop1"])
    (['prop1'], ['bag_reader'])
    """
    chosen = choose(keys, include_trained)
    workers = available_cpus()
    if ctx.cache_dir is None or workers < 2 or not any(s.key in AFTER or s.key in PREPARE for s in chosen):
        for section in chosen:
            data = compute_section(ctx, section)
            if each is not None:
                each(section, data)
        return ctx.numbers
    # The process pool is the inner context: on a Ctrl-C or an error it is halted first, so the background threads'
    # jobs fail at once and the threads end, instead of the threads being waited for while the pool computes on.
    with ThreadPoolExecutor(max_workers=len(AFTER) + len(PREPARE)) as threads, ExitStack() as pool:
        # the pool starts in this thread before any background thread exists, at the first trained section
        _overlapped(ctx, chosen, threads, each, idle, lambda: pool.enter_context(sharing(workers)))
    return ctx.numbers


def _overlapped(ctx: Context, chosen: list[Section], threads: ThreadPoolExecutor, each, idle, start_pool) -> None:
    """Compute ``chosen`` in order, the sections of :data:`AFTER` in ``threads`` as soon as they may start."""
    keys = {s.key for s in chosen}
    started: list = []
    prepared: dict[str, Future] = {}
    early: dict[str, Future] = {}
    done: set[str] = set()

    def prepare() -> None:  # the pool and PREPARE's work, once, before any section: it trains beside them
        if not started:
            started.append(start_pool())
            prepared.update({k: threads.submit(fn, ctx) for k, fn in PREPARE.items() if k in keys})

    def launch() -> None:
        for s in chosen:
            after = AFTER.get(s.key)
            if after is not None and s.key not in early and all(a in done or a not in keys for a in after):
                prepare()
                early[s.key] = threads.submit(_after, s, ctx, prepared.get(s.key))

    if any(s.trained for s in chosen):
        prepare()  # the deterministic sections compute in this thread while the pool trains PREPARE's heads
    launch()
    for section in chosen:
        if section.key in early:
            try:
                result = early[section.key].result(timeout=_IDLE_AFTER)
            except FutureTimeout:  # still computing: tell idle, then wait
                if idle is not None:
                    idle(section)
                result = early[section.key].result()
            data = _merge(ctx, section, result)
        else:
            data = compute_section(ctx, section)
        done.add(section.key)
        launch()
        if each is not None:
            each(section, data)


def _after(section: Section, ctx: Context, prepared: Future | None) -> dict:
    if prepared is not None:
        prepared.result()  # its heads are in the cache: the section loads them
    return section.compute(ctx)
