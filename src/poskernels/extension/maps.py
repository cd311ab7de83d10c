"""Every context-extension map as one record: what it computes, how a config names it, what ``advise`` writes for it.

A :class:`~poskernels.extension.map_spec.MapSpec` holds all that is known of one map: its compute function
(:mod:`~poskernels.extension.article` or :mod:`~poskernels.extension.ecosystem`), its transformers ``rope_type``
spelling and aliases, its options as a config spells them (:class:`~poskernels.extension.map_spec.Option`), how its
``kappa`` is read, the block ``poskernels advise`` writes for it (:mod:`~poskernels.extension.map_blocks`), its line
in the census guide and its title and colour.  This module holds the built-in records and installs them in the
registry (:mod:`~poskernels.extension.map_registry`), where every table keyed by a map is read from
:data:`~poskernels.extension.map_registry.MAP_SPECS`: ``MAPS``, ``ROPE_TYPES``, ``MAP_ALIASES``, ``MAP_TITLES``,
``MAP_COLOURS``, ``TRIAL_OPTIONS``, ``advised_types``, ``guide_table``; the parser, ``advise``, the transformers
family check and the readers hold no per-map branch.  ``register_map`` adds a map from outside (the tables are
rebuilt in place: every importer sees it), ``unregister_map`` takes it out.  Every name of the three modules is
importable from here.  The advise writers read a :class:`~poskernels.census.config.RopeConfig` duck-typed: these
modules import nothing above the math floor.

>>> ROPE_TYPES["linear"], ROPE_TYPES["su"], [o.name for o in MAP_SPECS["llama3"].options]
('pi', 'longrope', ['factor', 'low_freq_factor', 'high_freq_factor'])
"""

from __future__ import annotations

from .article import ARTICLE_MAPS
from .ecosystem import ECOSYSTEM_MAPS
from .map_blocks import dynamic_block, factor_block, proportional_block
from .map_registry import (
    DEFAULT_TYPE,
    MAP_ALIASES,
    MAP_COLOURS,
    MAP_SPECS,
    MAP_TITLES,
    MAPS,
    ROPE_TYPES,
    TRIAL_OPTIONS,
    _install,
    advised_types,
    criterion_order,
    guide_table,
    reach,
    register_map,
    spec_of,
    unregister_map,
)
from .map_spec import MapSpec, Option

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


def _factor(required: bool = True, trial: float | None = None, passed: bool = False) -> Option:
    return Option("factor", required=required, minimum=1.0, passed=passed, carried=False, trial=trial)


#: YaRN's numeric options as transformers spells them.
_YARN_NUMBERS = tuple(Option(k) for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor"))

#: The built-in maps, in their order in the registry (the article's, then the ecosystem's).
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

_install(_BUILT_IN)
