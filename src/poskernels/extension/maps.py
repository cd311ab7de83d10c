"""Every context-extension map as one record: what it computes, how a config names it, what ``advise`` writes for it.

A :class:`MapSpec` holds all that is known of one map: its compute function (:mod:`~poskernels.extension.article`
or :mod:`~poskernels.extension.ecosystem`), its transformers ``rope_type`` spelling and aliases, its options as a
config spells them (:class:`Option`), how its ``kappa`` is read, the block ``poskernels advise`` writes for it, its
line in the census guide and its title and colour.  Every table keyed by a map is read from :data:`MAP_SPECS`:
:data:`~poskernels.extension.MAPS`, :data:`ROPE_TYPES`, :data:`MAP_ALIASES`, :data:`MAP_TITLES`, :data:`MAP_COLOURS`,
:data:`TRIAL_OPTIONS`, :func:`advised_types`, :func:`guide_table`; the parser, ``advise``, the transformers family
check and the readers hold no per-map branch.  :func:`register_map` adds a map from outside (the tables are rebuilt
in place: every importer sees it), :func:`unregister_map` takes it out.  The advise writers read a
:class:`~poskernels.rope_config.RopeConfig` duck-typed: this module imports nothing above the math floor.

>>> ROPE_TYPES["linear"], ROPE_TYPES["su"], [o.name for o in MAP_SPECS["llama3"].options]
('pi', 'longrope', ['factor', 'low_freq_factor', 'high_freq_factor'])
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import PosKernelsError
from .article import ARTICLE_MAPS, MapFn
from .ecosystem import ECOSYSTEM_MAPS

__all__ = [
    "DEFAULT_TYPE",
    "MAPS",
    "MAP_ALIASES",
    "MAP_COLOURS",
    "MAP_SPECS",
    "MAP_TITLES",
    "ROPE_TYPES",
    "TRIAL_OPTIONS",
    "MapSpec",
    "Option",
    "advised_types",
    "criterion_order",
    "guide_table",
    "reach",
    "register_map",
    "spec_of",
    "unregister_map",
]


@dataclass(frozen=True)
class Option:
    """One option of a map as a config spells it (a key of its ``rope_parameters`` dict).

    ``kind`` is ``number`` (finite), ``bool`` or ``factors`` (one positive number per plane); ``minimum`` bounds a
    number from below (``strict``: the bound itself refused); ``passed``: handed to the compute function as a
    keyword; ``carried``: kept in the block ``advise`` writes from the shipped map; ``written``: the value a block
    writes for a model that did not ship the map; ``trial``: the value the transformers family check tries (for
    ``factors``, the slope ``s`` of the list ``1 + s j / P``).
    """

    name: str
    kind: str = "number"
    required: bool = False
    minimum: float | None = None
    strict: bool = False
    passed: bool = True
    carried: bool = True
    written: Any = None
    trial: Any = None


def _factor(required: bool = True, trial: float | None = None, passed: bool = False) -> Option:
    return Option("factor", required=required, minimum=1.0, passed=passed, carried=False, trial=trial)


@dataclass(frozen=True)
class MapSpec:
    """One context-extension map, everything known of it (see the module docstring).

    Attributes
    ----------
    name, compute, via : str, callable or None, str or None
        Its key in :data:`MAPS` and its ``map(theta, kappa, L, **options) -> Extension``; a map without a compute
        function of its own (proportional) computes with the :data:`MAPS` key ``via``.
    rope_type, aliases : str or None, tuple of str
        transformers' spelling (None: no config names it) and the other spellings it is read under (``su``).
    alias : bool
        ``extend`` accepts ``rope_type`` as this map's name (it is the same thing: ``linear`` is ``pi``).
    options : tuple of Option
        Its config options, in the order a block writes them.
    variants : tuple of (key, value, map)
        An option value that makes the config read through another map (YaRN's ``truncate: false``).
    follows : str or None
        What kappa is read against: None, the config's factor; ``"max_position_embeddings"`` (dynamic NTK:
        ``max(N, max_position_embeddings) / max_position_embeddings``, any length reached); ``"training_length"``
        (LongRoPE's switch past ``L``).
    length_from_factor : bool
        Without ``original_max_position_embeddings``, ``L = max_position_embeddings / factor`` (linear).
    factor_from_lengths : bool
        The factor is ``max_position_embeddings / L`` unless given, handed to the map, and not written (LongRoPE).
    plain_at_unit_factor : bool
        A factor of 1 reads the trained RoPE: the census's default target is ``4 L`` as for plain RoPE.
    head_planes : bool
        Frequencies ``b**(-2j/head_dim)`` on the first ``partial_rotary_factor`` of the planes, zero on the rest
        (proportional RoPE as transformers ships it): the parser reads the turning planes' width and base.
    needs_length : bool
        transformers requires ``original_max_position_embeddings`` in the block.
    advise_order : int or None
        Its place in the order of preference of the maps ``advise`` writes (None: not offered to every model).
    advise_if_shipped : bool
        ``advise`` offers it only to a model that ships it (LongRoPE's lists are searched per model).
    alone : str or None
        A model shipping this map is advised no other map, for this reason (``{rope_type}``: the other's name).
    block : callable or None
        ``block(spec, cfg, N) -> (rope_parameters or None, max_position_embeddings, how)``, what ``advise`` writes.
    what : str
        One line for the census guide's table.
    title, colour : str or None
        Its name and colour in the figures (a map without one is shown by its key, in grey).
    """

    name: str
    compute: MapFn | None = None
    via: str | None = None
    rope_type: str | None = None
    aliases: tuple[str, ...] = ()
    alias: bool = False
    options: tuple[Option, ...] = ()
    variants: tuple[tuple[str, Any, str], ...] = ()
    follows: str | None = None
    length_from_factor: bool = False
    factor_from_lengths: bool = False
    plain_at_unit_factor: bool = False
    head_planes: bool = False
    needs_length: bool = False
    advise_order: int | None = None
    advise_if_shipped: bool = False
    alone: str | None = None
    block: Callable[..., tuple[dict | None, int, str]] | None = field(default=None, repr=False)
    what: str = ""
    title: str | None = None
    colour: str | None = None

    @property
    def map(self) -> str:  # the MAPS key it computes with
        return self.name if self.compute is not None else str(self.via)

    @property
    def plain(self) -> bool:
        """It reads the head as trained (the identity map, ``none``)."""
        return self.map == "none"

    def option(self, name: str) -> Option | None:
        """Its option ``name``, or None."""
        return next((o for o in self.options if o.name == name), None)

    def variant(self, scaling: dict) -> str:
        """The :data:`MAPS` key a config's options read through (``yarn_hf_untruncated`` for ``truncate: false``)."""
        return next((m for key, value, m in self.variants if scaling.get(key, not value) is value), self.map)


def reach(cfg) -> float:
    """How far the shipped map reaches: the longer of ``factor L`` and ``max_position_embeddings`` (the length the
    config declares for it; LongRoPE's lists were searched for it); dynamic NTK follows the length: any ``N``."""
    spec = spec_of(cfg.rope_type)
    if spec.follows == "max_position_embeddings":
        return math.inf
    if spec.plain:
        return cfg.training_length
    return max(cfg.factor * cfg.training_length, cfg.max_position_embeddings)


def _base_block(spec: MapSpec, cfg) -> dict:
    block = {"rope_type": spec.rope_type, "rope_theta": cfg.base}
    if cfg.partial_rotary_factor != 1.0 and cfg.read_from.get("width") != "qk_rope_head_dim":
        block["partial_rotary_factor"] = cfg.partial_rotary_factor
    if cfg.read_from.get("mrope_section"):
        block["mrope_section"] = cfg.read_from["mrope_section"]
    if spec.rope_type == cfg.rope_type:  # the shipped map: its own options
        for o in spec.options:
            if o.carried and cfg.scaling.get(o.name) is not None:
                v = cfg.scaling[o.name]
                block[o.name] = list(v) if o.kind == "factors" else v
    return block


def factor_block(spec: MapSpec, cfg, N: int) -> tuple[dict | None, int, str]:
    """A block at factor ``N / L`` (the shipped map kept when it reaches ``N``), with ``L`` written."""
    L, own = cfg.training_length, spec.rope_type == cfg.rope_type
    keep_max = max(cfg.max_position_embeddings, N)  # never lowered
    block = _base_block(spec, cfg)
    how = ("kept" if reach(cfg) >= N else "rescaled") if own else "written"
    block |= {"factor": cfg.factor if how == "kept" else N / L, "original_max_position_embeddings": L}
    if spec.length_from_factor and keep_max == N:  # transformers' linear reads no length: L = N / factor, as read
        del block["original_max_position_embeddings"]
    if not own:
        block |= {o.name: o.written for o in spec.options if o.written is not None}
    if spec.factor_from_lengths:
        del block["factor"]  # LongRoPE's factor is max_position_embeddings / original
    return block, keep_max, how


def dynamic_block(spec: MapSpec, cfg, N: int) -> tuple[dict | None, int, str]:
    """Dynamic NTK scales only past ``max_position_embeddings``: that must stay ``L``, or it is not advised."""
    L, own = cfg.training_length, spec.rope_type == cfg.rope_type
    if cfg.max_position_embeddings > L:
        return (
            None,
            0,
            (
                f"transformers' dynamic NTK scales only past max_position_embeddings, so it would lower "
                f"max_position_embeddings from {cfg.max_position_embeddings} to L = {L}"
            ),
        )
    block = _base_block(spec, cfg) | {"factor": cfg.factor if own else N / L}
    return block, L, "kept" if own else "written"


def proportional_block(spec: MapSpec, cfg, N: int) -> tuple[dict | None, int, str]:
    """Proportional RoPE takes one option, ``factor`` (the turning planes divided by it)."""
    how = "kept" if reach(cfg) >= N else "rescaled"
    block = {
        "rope_type": spec.rope_type,
        "rope_theta": cfg.read_from["proportional"]["rope_theta"],
        "partial_rotary_factor": cfg.partial_rotary_factor,
        "factor": cfg.factor if how == "kept" else N / cfg.training_length,
        "original_max_position_embeddings": cfg.training_length,  # what the census reads L from
    }
    return block, max(cfg.max_position_embeddings, N), how


_YARN_NUMBERS = tuple(Option(k) for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor"))

_BUILT_IN = (
    MapSpec("none", ARTICLE_MAPS["none"], rope_type="default", alias=True, options=(_factor(required=False),),
            title="nothing", colour="#0072b2"),
    MapSpec("pi", ARTICLE_MAPS["pi"], rope_type="linear", alias=True, options=(_factor(trial=4.0),),
            length_from_factor=True, advise_order=3, block=factor_block, title="PI", colour="#56b4e9"),
    MapSpec("ntk", ARTICLE_MAPS["ntk"], title="NTK-aware", colour="#d55e00"),
    MapSpec("yarn", ARTICLE_MAPS["yarn"], title="YaRN", colour="#7a5195"),
    MapSpec("dynamic", ECOSYSTEM_MAPS["dynamic"], rope_type="dynamic", options=(_factor(trial=2.0, passed=True),),
            follows="max_position_embeddings", advise_order=4, block=dynamic_block,
            what="dynamic NTK: base `b (factor kappa - (factor - 1))^(d/(d-2))`, `kappa` = sequence length / "
            "`max_position_embeddings`"),
    MapSpec("yarn_hf", ECOSYSTEM_MAPS["yarn_hf"], rope_type="yarn",
            options=(_factor(trial=8.0), *_YARN_NUMBERS, Option("truncate", "bool", passed=False)),
            variants=(("truncate", False, "yarn_hf_untruncated"),), needs_length=True, advise_order=0,
            block=factor_block,
            what="YaRN as the reference code and transformers run it: ramp linear in the plane index "
            "(`find_correction_dim`), ends floored/ceiled; `mscale` / `mscale_all_dim` / `attention_factor` as "
            "transformers"),
    MapSpec("yarn_hf_untruncated", ECOSYSTEM_MAPS["yarn_hf_untruncated"],
            what="the same with `truncate=False` (gpt-oss)"),
    MapSpec("llama3", ECOSYSTEM_MAPS["llama3"], rope_type="llama3",
            options=(_factor(trial=8.0), *(Option(k, required=True, minimum=0.0, strict=True, written=w, trial=w)
                                           for k, w in (("low_freq_factor", 1.0), ("high_freq_factor", 4.0)))),
            needs_length=True, advise_order=1, block=factor_block,
            what="Llama 3.1 smoothing (`low_freq_factor`, `high_freq_factor`)"),
    MapSpec("longrope", ECOSYSTEM_MAPS["longrope"], rope_type="longrope", aliases=("su",),
            options=(_factor(required=False), Option("short_factor", "factors", required=True, trial=0.5),
                     Option("long_factor", "factors", required=True, trial=40.0), Option("attention_factor")),
            follows="training_length", factor_from_lengths=True, needs_length=True, advise_order=2,
            advise_if_shipped=True, block=factor_block,
            what="LongRoPE per-plane `short_factor` / `long_factor`, switch on the sequence length past `L`, "
            "attention factor `sqrt(1 + ln s / ln L)`"),
    MapSpec("proportional", via="pi", rope_type="proportional", options=(_factor(required=False),),
            plain_at_unit_factor=True, head_planes=True, advise_if_shipped=True, block=proportional_block,
            alone="the model's proportional RoPE pairs coordinates j and j + head_dim / 2 over every plane (the ones "
            "that do not turn included); a {rope_type} block rotates a partial width, pairing them otherwise"),
)  # fmt: skip

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
    """The record a config's rope type (or alias) names.

    >>> spec_of("su").name, spec_of("linear").map
    ('longrope', 'pi')
    """
    found = next((s for s in MAP_SPECS.values() if rope_type in (s.rope_type, *s.aliases)), None)
    if found is None:
        raise PosKernelsError(f"unknown rope type {rope_type!r}; accepted: {', '.join(ROPE_TYPES)}")
    return found


def advised_types() -> tuple[str, ...]:
    """The rope types ``advise`` writes, in its order of preference on a tie.

    >>> advised_types()
    ('yarn', 'llama3', 'longrope', 'linear', 'dynamic')
    """
    ranked = sorted(
        (s for s in MAP_SPECS.values() if s.advise_order is not None), key=lambda s: int(s.advise_order or 0)
    )
    return tuple(str(s.rope_type) for s in ranked)


def criterion_order() -> str:
    """The tie-break of ``advise``'s ranking in words."""
    return "the order " + ", ".join(advised_types())


def register_map(spec: MapSpec) -> MapSpec:
    """Add a map: from then on the parser reads its rope type, the census and ``extend`` compute it, ``advise``
    writes it (with an ``advise_order``), the family check tries it and the guide's table lists it.

    A name or a rope type already registered is refused.

    >>> from poskernels.extension import extend, position_interpolation
    >>> s = register_map(MapSpec("half_doc", lambda t, k, L: position_interpolation(t, 2.0, L), rope_type="half"))
    >>> ROPE_TYPES["half"], extend("half_doc", [1.0], 4.0, 8).inv_freq
    ('half_doc', array([0.5]))
    >>> unregister_map("half_doc"); "half" in ROPE_TYPES
    False
    """
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
    """Take a map added by :func:`register_map` out again (a built-in map is refused)."""
    if name in {s.name for s in _BUILT_IN} or name not in MAP_SPECS:
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

    >>> print(guide_table().splitlines()[2][:13])
    | `dynamic` |
    """
    article = set(ARTICLE_MAPS.values())
    lines = ["| registry name | what | transformers `rope_type` |", "|---|---|---|"]
    for s in MAP_SPECS.values():
        if s.compute is not None and s.compute not in article:
            lines.append(f"| `{s.name}` | {s.what} | {_spelled(s)} |")
    return "\n".join(lines) + "\n"


for _spec in _BUILT_IN:
    MAP_SPECS[_spec.name] = _spec
_rebuild()
