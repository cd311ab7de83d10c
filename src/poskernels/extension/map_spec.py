"""The record of one context-extension map (:class:`MapSpec`) and of one of its config options (:class:`Option`).

A record holds all that is known of one map; the built-in records are in :mod:`~poskernels.extension.maps`, the
tables read from them and the functions that add or find one in :mod:`~poskernels.extension.map_registry`, and the
blocks ``poskernels advise`` writes in :mod:`~poskernels.extension.map_blocks`.

>>> spec = MapSpec("half", via="pi", rope_type="half", options=(Option("factor", minimum=1.0),))
>>> spec.map, spec.plain, spec.option("factor").minimum, spec.option("beta")
('pi', False, 1.0, None)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .article import MapFn

__all__ = ["MapSpec", "Option"]


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


@dataclass(frozen=True)
class MapSpec:
    """One context-extension map, everything known of it (the built-in ones: :mod:`~poskernels.extension.maps`).

    Attributes
    ----------
    name, compute, via : str, callable or None, str or None
        Its key in :data:`~poskernels.extension.map_registry.MAPS` and its ``map(theta, kappa, L, **options) ->
        Extension``; a map without a compute function of its own (proportional) computes with the ``MAPS`` key
        ``via``.
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
        """The :data:`~poskernels.extension.map_registry.MAPS` key a config's options read through
        (``yarn_hf_untruncated`` for ``truncate: false``)."""
        return next((m for key, value, m in self.variants if scaling.get(key, not value) is value), self.map)
