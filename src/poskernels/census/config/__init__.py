"""A model's RoPE, read from its ``config.json``: the frequencies it trains with and the extension it asks for.

:mod:`~poskernels.census.config.record` (the :class:`RopeConfig` record and the extension the config asks for),
:mod:`~poskernels.census.config.parse` (the keys read as transformers reads them),
:mod:`~poskernels.census.config.defaults` and :mod:`~poskernels.census.config.fill` (what a file leaves to its
transformers class) and :mod:`~poskernels.census.config.load` (where a config comes from: bundled configs of released
models, files, dicts, transformers configs).  Every name is importable from here.
"""

from __future__ import annotations

from .load import bundled_configs, config_path, hub_configs, load_config, load_layer_configs, raw_config, text_config
from .parse import REFUSED_TYPES, ROPE_TYPES, parse_config, parse_layer_configs
from .record import RopeConfig, config_extension

__all__ = [
    "REFUSED_TYPES",
    "ROPE_TYPES",
    "RopeConfig",
    "bundled_configs",
    "config_path",
    "hub_configs",
    "config_extension",
    "load_config",
    "load_layer_configs",
    "parse_config",
    "parse_layer_configs",
    "raw_config",
    "text_config",
]
