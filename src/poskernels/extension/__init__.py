"""Context-extension maps for RoPE (Definition 5), in one registry by name.

Each map reads a head trained at length ``L`` on length ``kappa * L`` by changing the
per-plane frequencies, and possibly scaling the logits.  Every map has the signature::

    map(theta, kappa, L, **options) -> Extension

where ``theta`` are the trained frequencies ``b**(-2j/d)`` (shape ``(d/2,)``).  The result's
``inv_freq`` replaces ``theta`` with the positions left as integers; position interpolation
``m -> m/kappa`` is the same thing as ``theta -> theta/kappa``.

``attention_factor`` follows Hugging Face transformers' convention: it multiplies cos and sin,
so it multiplies both the rotated query and key, and the score by its square
(:attr:`Extension.logit_scale`).  YaRN's ``(0.1 ln kappa + 1)**2`` of the article is that square.

The compute functions live in three modules: :mod:`~poskernels.extension.article` (Definition 5: ``none``, ``pi``,
``ntk``, ``yarn``) and :mod:`~poskernels.extension.ecosystem` (the maps released models use: ``dynamic``,
``llama3``, ``longrope``; and ``yarn_hf``, ``yarn_hf_untruncated`` from :mod:`~poskernels.extension.yarn_reference`,
YaRN as its reference code ships it).  Each map is one record of
:mod:`~poskernels.extension.maps` (:class:`MapSpec`: its compute function, its ``rope_type`` spelling and options,
what ``advise`` writes for it, its title and colour); :data:`MAPS` and :data:`MAP_ALIASES` are read from the records.
A new map is a function with the signature above and one record (:func:`register_map` from outside).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import PosKernelsError, check_name
from . import article, ecosystem, yarn_reference
from .article import ARTICLE_MAPS, Extension, MapFn, ntk_aware, position_interpolation, yarn, yarn_ramp_turns
from .ecosystem import ECOSYSTEM_MAPS
from .maps import MAP_ALIASES, MAP_SPECS, MAPS, MapSpec, Option, register_map, unregister_map

__all__ = [
    "ARTICLE_MAPS",
    "ECOSYSTEM_MAPS",
    "MAPS",
    "MAP_ALIASES",
    "MAP_SPECS",
    "Extension",
    "MapFn",
    "MapSpec",
    "Option",
    "extend",
    "ntk_aware",
    "position_interpolation",
    "register_map",
    "unregister_map",
    "yarn",
    "yarn_ramp_turns",
]


def extend(name: str, theta: ArrayLike, kappa: float, L: int, **options: Any) -> Extension:
    """Apply the context-extension map ``name`` of :data:`MAPS` to RoPE's frequencies (Definition 5).

    A head trained at length ``L`` is read at ``kappa * L`` with new frequencies: each map returns the
    :class:`Extension` holding them, the factor each plane's frequency was multiplied by and the logit scale the
    scores are multiplied by (YaRN's attention factor, 1 elsewhere).

    Parameters
    ----------
    name : str
        A key of :data:`MAPS` (the article's ``"pi"``, ``"ntk"``, ``"yarn"``; the ecosystem's ``"dynamic"``,
        ``"llama3"``, ``"yarn_hf"``, ``"longrope"``, ...) or a transformers ``rope_type`` alias of one
        (``"linear"`` is ``"pi"``).
    theta : array_like, shape (d/2,)
        The trained frequencies ``theta_j``, positive (:func:`poskernels.encodings.omega` for ``b**(-2j/d)``).
    kappa : float
        The extension factor, target length over ``L``; at least 1.
    L : int
        The training length (transformers' ``original_max_position_embeddings``).
    **options
        The map's own settings (YaRN's ``alpha`` and ``beta``; Llama 3's ``low_freq_factor``, ...); an option the
        map does not take is refused with the list of those it does.

    Returns
    -------
    Extension
        ``inv_freq`` (the new frequencies, shape (d/2,)), ``factors`` (``inv_freq / theta``), ``logit_scale``
        and ``name`` (the map's key).

    Raises
    ------
    PosKernelsError
        An unknown map or option (with the closest name), or a ``theta``, ``kappa`` or ``L`` out of range.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> e = extend("yarn", omega(16), 4, 32)  # read a head trained at 32 at length 128
    >>> e.factors.round(3)[:3], round(e.logit_scale, 4)
    (array([0.349, 0.265, 0.25 ]), 1.2965)
    >>> extend("pi", omega(4), 2, 32).inv_freq
    array([0.5  , 0.005])
    >>> extend("longrope?", omega(4), 2, 32)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown extension map 'longrope?' (did you mean 'longrope'?); accepted: ...
    >>> extend("linear", omega(4), 2, 32).name  # transformers' name for position interpolation
    'pi'
    >>> extend("yarn", omega(4), 2, 32, alfa=2.0)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: extension map 'yarn' takes no option 'alfa'; accepted options: alpha, beta
    """
    name, fn, accepted = _map_and_options(name, options)
    core = _CORES.get(fn)
    if core is None:  # a registered map: it checks its own arguments
        return _call(name, accepted, options, lambda: fn(theta, kappa, L, **options))
    return _call(name, accepted, options, lambda: core(*map_arguments(theta, kappa, L), **options))


def map_arguments(theta: ArrayLike, kappa: float, L: int) -> tuple[np.ndarray, float, int]:
    """Every map's three arguments, checked once: `theta` as float64 frequencies, `kappa` at least 1, `L` a length.

    For a caller that reads several maps of one head (the census) and then calls :func:`extend_core` per map; not in
    ``__all__``.

    Parameters
    ----------
    theta : array_like, shape (d/2,)
        The trained frequencies, positive (a torch tensor is read as float64).
    kappa : float
        The extension factor, at least 1.
    L : int
        The training length.

    Returns
    -------
    tuple
        ``(theta, kappa, L)`` checked: an ndarray of float64, a float and an int.

    Raises
    ------
    PosKernelsError
        If one of them is out of range.

    Examples
    --------
    >>> map_arguments([1.0, 0.1], 4, 32)
    (array([1. , 0.1]), 4.0, 32)
    """
    return article._check(theta, kappa, L)


def extend_core(name: str, theta: np.ndarray, kappa: float, L: int, **options: Any) -> Extension:
    """:func:`extend` on `theta`, `kappa` and `L` that :func:`map_arguments` checked: it trusts them.

    A core shared with the census (not in ``__all__``): it still checks the map's name and options, and each map
    checks its own options' values; a map registered from outside, with no core, checks all its arguments.

    Parameters
    ----------
    name : str
        A key of :data:`MAPS` or a transformers ``rope_type`` alias of one.
    theta, kappa, L
        :func:`map_arguments`'s result.
    **options
        The map's own settings.

    Returns
    -------
    Extension
        As :func:`extend` returns it.

    Examples
    --------
    >>> extend_core("pi", *map_arguments([1.0, 0.1], 2, 32)).inv_freq
    array([0.5 , 0.05])
    """
    name, fn, accepted = _map_and_options(name, options)
    core = _CORES.get(fn, fn)
    return _call(name, accepted, options, lambda: core(theta, kappa, L, **options))


def map_core(name: str) -> MapFn | None:
    """The core of the map ``name`` (a key of :data:`MAPS`): it trusts ``(theta, kappa, L)`` from
    :func:`map_arguments` and checks the map's own options; None for a map registered from outside (call
    :func:`extend_core`).  Not in ``__all__``: the census reads every map of one head through the cores.

    Parameters
    ----------
    name : str
        A key of :data:`MAPS`.

    Returns
    -------
    callable or None
        ``core(theta, kappa, L, **options) -> Extension``.

    Examples
    --------
    >>> map_core("pi")(*map_arguments([1.0, 0.1], 2, 32)).inv_freq
    array([0.5 , 0.05])
    """
    return _CORES.get(MAPS[check_name("extension map", name, MAPS)])


def _map_and_options(name, options: dict) -> tuple[str, MapFn, list[str]]:
    """The map ``name`` names (an alias read), its function and the options it accepts; refuse an unknown option."""
    name = MAP_ALIASES.get(name, name) if isinstance(name, str) else name
    fn = MAPS[check_name("extension map", name, MAPS)]
    accepted = _options(fn)
    unknown = [key for key in options if key not in accepted]
    if unknown and not any(a.startswith("**") for a in accepted):  # a map that passes options on is checked below
        raise PosKernelsError(
            f"extension map {name!r} takes no option {unknown[0]!r}; accepted options: {', '.join(accepted) or 'none'}"
        )
    return name, fn, accepted


def _call(name: str, accepted: list[str], options: dict, compute: Callable[[], Extension]) -> Extension:
    """Compute a map (or its core), a ``TypeError`` from its options told as the map's refusal of them."""
    try:
        return compute()
    except TypeError as err:  # an option the map passes on and its callee refuses, or a value of the wrong type
        if not options:
            raise
        raise PosKernelsError(
            f"extension map {name!r} refused its options {options!r} ({err}); "
            f"accepted options: {', '.join(accepted) or 'none'}"
        ) from err


#: Each built-in map's core, which trusts ``(theta, kappa, L)`` checked by :func:`map_arguments`.
_CORES: dict[MapFn, MapFn] = {
    article._identity: article._identity_core,
    position_interpolation: article._position_interpolation,
    ntk_aware: article._ntk_aware,
    yarn: article._yarn,
    ecosystem.dynamic_ntk: ecosystem._dynamic_ntk,
    ecosystem.llama3: ecosystem._llama3,
    ecosystem.longrope: ecosystem._longrope,
    yarn_reference.yarn_hf: yarn_reference._yarn_hf,
    yarn_reference.yarn_hf_untruncated: yarn_reference._yarn_hf_untruncated,
}


def _options(fn: MapFn) -> list[str]:
    """The names a map takes after ``(theta, kappa, L)``; ``**name`` for a map that passes options on."""
    params = list(inspect.signature(fn).parameters.values())[3:]
    return [("**" if p.kind is p.VAR_KEYWORD else "") + p.name for p in params if p.kind is not p.VAR_POSITIONAL]
