"""The registry of the context-extension maps: every table keyed by a map, read from the records in :data:`MAP_SPECS`.

:data:`MAPS`, :data:`ROPE_TYPES`, :data:`MAP_ALIASES`, :data:`MAP_TITLES`, :data:`MAP_COLOURS` and
:data:`TRIAL_OPTIONS` are derived from the records (:class:`~poskernels.extension.map_spec.MapSpec`), as are
:func:`advised_types` and :func:`guide_table`; :func:`spec_of` finds the record a config's rope type names.
:func:`register_map` adds a map from outside (the tables are refilled in place: every importer sees it),
:func:`unregister_map` takes it out.  The built-in records are installed by :mod:`~poskernels.extension.maps`.

>>> ROPE_TYPES["linear"], ROPE_TYPES["su"], MAP_ALIASES["linear"], MAPS["pi"] is MAP_SPECS["pi"].compute
('pi', 'longrope', 'pi', True)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from ..errors import PosKernelsError
from .article import ARTICLE_MAPS, MapFn
from .map_spec import MapSpec

__all__ = [
    "DEFAULT_TYPE",
    "MAPS",
    "MAP_ALIASES",
    "MAP_COLOURS",
    "MAP_SPECS",
    "MAP_TITLES",
    "ROPE_TYPES",
    "TRIAL_OPTIONS",
    "advised_types",
    "criterion_order",
    "guide_table",
    "reach",
    "register_map",
    "spec_of",
    "unregister_map",
]

#: Every map, by name (the built-in ones, then those registered with :func:`register_map`).
MAP_SPECS: dict[str, MapSpec] = {}
#: Registry of compute functions, by name: every record's that has one (``proportional`` reads through ``pi``).
MAPS: dict[str, MapFn] = {}
#: rope type in a config (and its aliases: ``su`` is LongRoPE's first name) -> the :data:`MAPS` key it computes with.
ROPE_TYPES: dict[str, str] = {}
#: transformers' rope-type names that ``extend`` accepts for the same map (``linear`` is ``pi``; its ``yarn`` is
#: ``yarn_hf``, not the article's ``yarn``, so it is not an alias: the two ramps differ).
MAP_ALIASES: dict[str, str] = {}
#: Display names of the maps that have one (the article's); a map not listed is shown by its key.
MAP_TITLES: dict[str, str] = {}
#: Colours of the maps that have one (colour-blind safe: Okabe-Ito).
MAP_COLOURS: dict[str, str] = {}
#: rope type -> the options the transformers family check tries it with (per-plane lists made per config).
TRIAL_OPTIONS: dict[str, dict] = {}
#: The rope type of a config that names none (transformers' ``default``).
DEFAULT_TYPE = "default"
#: The names of the built-in maps, which :func:`unregister_map` refuses.
_BUILT_IN: set[str] = set()


def _install(specs: Iterable[MapSpec]) -> None:
    """Enter the built-in records (:mod:`~poskernels.extension.maps`), in order, and fill the tables."""
    for spec in specs:
        MAP_SPECS[spec.name] = spec
        _BUILT_IN.add(spec.name)
    _rebuild()


def _rebuild() -> None:
    """Refill every derived table in place (importers hold the same objects)."""
    specs = list(MAP_SPECS.values())
    tables: list[tuple[dict, dict]] = [
        (MAPS, {s.name: s.compute for s in specs if s.compute is not None}),
        (ROPE_TYPES, {t: s.map for s in specs if s.rope_type for t in (s.rope_type, *s.aliases)}),
        (MAP_ALIASES, {s.rope_type: s.name for s in specs if s.alias and s.rope_type}),
        (MAP_TITLES, {s.name: s.title for s in specs if s.title}),
        (MAP_COLOURS, {s.name: s.colour for s in specs if s.colour}),
        (TRIAL_OPTIONS, {
            s.rope_type: {o.name: o.trial for o in s.options if o.trial is not None and o.kind != "factors"}
            for s in specs if s.rope_type and any(o.trial is not None for o in s.options)
        }),
    ]  # fmt: skip
    for table, value in tables:
        table.clear()
        table.update(value)


def spec_of(rope_type: str) -> MapSpec:
    """The record a config's rope type (or one of its aliases) names.

    Parameters
    ----------
    rope_type : str
        A ``rope_type`` as a config spells it (``"linear"``, ``"yarn"``, ``"su"``, ...): a key of
        :data:`ROPE_TYPES`.

    Returns
    -------
    MapSpec
        The record of :data:`MAP_SPECS` whose ``rope_type`` or ``aliases`` hold it.

    Raises
    ------
    PosKernelsError
        No record spells it, with the rope types accepted.

    Examples
    --------
    >>> spec_of("su").name, spec_of("linear").map, spec_of("yarn").name
    ('longrope', 'pi', 'yarn_hf')
    >>> spec_of("lineer")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown rope type 'lineer'; accepted: default, linear, dynamic, yarn, ...
    """
    found = next((s for s in MAP_SPECS.values() if rope_type in (s.rope_type, *s.aliases)), None)
    if found is None:
        raise PosKernelsError(f"unknown rope type {rope_type!r}; accepted: {', '.join(ROPE_TYPES)}")
    return found


def reach(cfg: Any) -> float:
    """How far the map a config ships reaches.

    The longer of ``factor L`` and ``max_position_embeddings`` (the length the config declares for it; LongRoPE's
    lists were searched for it); ``L`` for plain RoPE; dynamic NTK follows the length, so it reaches any ``N``.

    Parameters
    ----------
    cfg : RopeConfig
        A parsed config (:func:`poskernels.census.config.parse_config`), read duck-typed: its ``rope_type``,
        ``factor``, ``training_length`` and ``max_position_embeddings``.

    Returns
    -------
    float
        The longest sequence length the shipped map was set for (an int where the config gives one; ``inf`` for
        dynamic NTK).

    Raises
    ------
    PosKernelsError
        The config's rope type is not registered (:func:`spec_of`).

    Examples
    --------
    >>> from poskernels.census.config import parse_config
    >>> shape = {"head_dim": 128, "max_position_embeddings": 4096}
    >>> yarn = {"rope_type": "yarn", "rope_theta": 1e4, "factor": 8.0, "original_max_position_embeddings": 4096}
    >>> reach(parse_config(shape | {"rope_parameters": yarn}))  # 8 x 4096, past max_position_embeddings
    32768.0
    >>> reach(parse_config(shape | {"rope_parameters": {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0}}))
    inf
    >>> reach(parse_config(shape | {"rope_theta": 1e4}))  # plain RoPE: its training length
    4096
    """
    spec = spec_of(cfg.rope_type)
    if spec.follows == "max_position_embeddings":
        return math.inf
    if spec.plain:
        return cfg.training_length
    return max(cfg.factor * cfg.training_length, cfg.max_position_embeddings)


def advised_types() -> tuple[str, ...]:
    """The rope types ``poskernels advise`` writes, in its order of preference on a tie.

    Read from the records that have an ``advise_order`` (a map registered later is included).

    Returns
    -------
    tuple of str
        Their ``rope_type`` spellings, by ``advise_order``.

    Examples
    --------
    >>> advised_types()
    ('yarn', 'llama3', 'longrope', 'linear', 'dynamic')
    """
    ranked = sorted(
        (s for s in MAP_SPECS.values() if s.advise_order is not None), key=lambda s: int(s.advise_order or 0)
    )
    return tuple(str(s.rope_type) for s in ranked)


def criterion_order() -> str:
    """The tie-break of ``poskernels advise``'s ranking in words (the order of :func:`advised_types`).

    Returns
    -------
    str
        ``"the order "`` and the advised rope types, comma-separated.

    Examples
    --------
    >>> criterion_order()
    'the order yarn, llama3, longrope, linear, dynamic'
    """
    return "the order " + ", ".join(advised_types())


def register_map(spec: MapSpec) -> MapSpec:
    """Add a map to the registry.

    From then on the parser reads its rope type, the census and ``extend`` compute it, ``advise`` writes it (with
    an ``advise_order``), the family check tries it and the guide's table lists it; every table of this module is
    refilled in place.  :func:`unregister_map` takes it out again.

    Parameters
    ----------
    spec : MapSpec
        The map's record: a name and a rope type (and aliases) not registered yet, and a compute function or a
        registered map ``via`` to compute with.

    Returns
    -------
    MapSpec
        ``spec``, as registered.

    Raises
    ------
    PosKernelsError
        Its name or one of its rope-type spellings is registered already, or it has no compute function and reads
        through no registered map.

    Examples
    --------
    >>> from poskernels.extension import extend, position_interpolation
    >>> s = register_map(MapSpec("half_doc", lambda t, k, L: position_interpolation(t, 2.0, L), rope_type="half"))
    >>> ROPE_TYPES["half"], extend("half_doc", [1.0], 4.0, 8).inv_freq
    ('half_doc', array([0.5]))
    >>> unregister_map("half_doc"); "half" in ROPE_TYPES
    False
    >>> register_map(MapSpec("linear_doc", MAPS["pi"], rope_type="linear"))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: rope type 'linear' is read as map 'pi' already
    """
    if not isinstance(spec, MapSpec):
        raise PosKernelsError(f"register_map takes a MapSpec record; got {spec!r} ({type(spec).__name__})")
    spellings = (spec.rope_type, *spec.aliases) if spec.rope_type else ()
    if spec.name in MAP_SPECS or spec.name in MAPS:
        raise PosKernelsError(f"a map named {spec.name!r} is registered already; choose another name")
    taken = [t for t in spellings if t in ROPE_TYPES]
    if taken:
        raise PosKernelsError(f"rope type {taken[0]!r} is read as map {ROPE_TYPES[taken[0]]!r} already")
    if spec.compute is None and spec.via not in MAPS:
        raise PosKernelsError(f"map {spec.name!r} has no compute function and reads through no map; got {spec.via!r}")
    MAP_SPECS[spec.name] = spec
    _rebuild()
    return spec


def unregister_map(name: str) -> None:
    """Take a map added by :func:`register_map` out of the registry again (every table refilled in place).

    Parameters
    ----------
    name : str
        The name it was registered under; a built-in map is refused.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        ``name`` is a built-in map or no registered map, with the names registered.

    Examples
    --------
    >>> s = register_map(MapSpec("pi_doc", via="pi", rope_type="pi_doc"))
    >>> ROPE_TYPES["pi_doc"], unregister_map("pi_doc"), "pi_doc" in MAP_SPECS
    ('pi', None, False)
    >>> unregister_map("pi")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: 'pi' is not a map registered from outside; registered: none, pi, ntk, ...
    """
    if name in _BUILT_IN or name not in MAP_SPECS:
        raise PosKernelsError(f"{name!r} is not a map registered from outside; registered: {', '.join(MAP_SPECS)}")
    del MAP_SPECS[name]
    _rebuild()


def _spelled(spec: MapSpec) -> str:
    """How a config names a map (```longrope`` (``su``)``), or the option that makes it (``truncate: false``)."""
    if spec.rope_type:
        return f"`{spec.rope_type}`" + "".join(f" (`{a}`)" for a in spec.aliases)
    for s in MAP_SPECS.values():
        for key, value, m in s.variants:
            if m == spec.name:
                return f"`{s.rope_type}` + `{key}: {json.dumps(value)}`"
    return "none"


def guide_table() -> str:
    """The census guide's table of the maps beyond the article (those with a compute function of their own).

    Returns
    -------
    str
        A Markdown table, one row per record: its registry name, its ``what`` line and how a config names it
        (its ``rope_type`` and aliases, or the option that makes it); newline-terminated.

    Examples
    --------
    >>> print(guide_table().splitlines()[2][:13])
    | `dynamic` |
    >>> [row.split(" | ")[0] for row in guide_table().splitlines()[2:]]
    ['| `dynamic`', '| `yarn_hf`', '| `yarn_hf_untruncated`', '| `llama3`', '| `longrope`']
    """
    article = set(ARTICLE_MAPS.values())
    lines = ["| registry name | what | transformers `rope_type` |", "|---|---|---|"]
    for s in MAP_SPECS.values():
        if s.compute is not None and s.compute not in article:
            lines.append(f"| `{s.name}` | {s.what} | {_spelled(s)} |")
    return "\n".join(lines) + "\n"
