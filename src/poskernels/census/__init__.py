"""Reading a released model: its config (the census, advice) and its weights (the probe).

The config is read as transformers reads it (:mod:`~poskernels.census.keys`, the keys family by family;
:mod:`~poskernels.census.config`, the :class:`~poskernels.census.config.RopeConfig` record, the defaults a file leaves
to its class, the bundled and hub files of :mod:`poskernels.census` ``data/``).  From it:

- the census (:mod:`~poskernels.census.compute`: Theorem 5 plane by plane and every extension map's factors;
  :mod:`~poskernels.census.context`: what the frequencies mean for a context of ``N`` tokens), printed by
  :mod:`~poskernels.census.render` and drawn by :mod:`~poskernels.census.plot`;
- the advice (:mod:`~poskernels.census.advice`: the block to paste to reach ``N`` tokens, ranked by
  :mod:`~poskernels.census.rank`, printed by :mod:`~poskernels.census.advice_text`);
- the table across released models (:mod:`~poskernels.census.table`, ``python -m poskernels.census.table``);
- the check of every transformers family (:mod:`~poskernels.census.hf_families`);
- the probe of a released model's weights (:mod:`poskernels.census.probe`: the article's kernels on its own forward
  pass; PyTorch and transformers, imported when it runs).

The commands that print them are :mod:`poskernels.cli`'s (``poskernels census``, ``advise``, ``probe``); nothing
here imports a command.  The names below are importable from here.

Examples
--------
>>> from poskernels.census import census, load_config
>>> census(load_config("llama-3.1-8b"), 131072, scan_base=False)["kappa"]
16.0
"""

from __future__ import annotations

from .advice import advise, advised_config
from .compute import census, census_all, has_rope, json_safe, text_of
from .config import RopeConfig, bundled_configs, hub_configs, load_config, load_layer_configs, parse_config
from .context import context_census, logit_multiplier
from .plot import plot_census
from .render import census_lines, render_census, terminal_width

__all__ = [
    "RopeConfig",
    "advise",
    "advised_config",
    "bundled_configs",
    "census",
    "census_all",
    "census_lines",
    "context_census",
    "has_rope",
    "hub_configs",
    "json_safe",
    "load_config",
    "load_layer_configs",
    "logit_multiplier",
    "parse_config",
    "plot_census",
    "render_census",
    "terminal_width",
    "text_of",
]
