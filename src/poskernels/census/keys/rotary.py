"""The rotary width, the partial rotation and the base, read from the keys that hold them family by family (the
family's default base, ``default_theta``, shipped in ``data/hf_attribute_map.json``).
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from ...errors import PosKernelsError
from .families import _real
from .values import count

__all__ = ["base_key", "default_theta", "partial_rotation", "width_keys"]


def width_keys(raw: dict) -> tuple[int, str]:
    """The per-head width RoPE works in, before partial rotation, and the key(s) it came from.

    Multi-head latent attention (``qk_rope_head_dim``) rotates only its rope part: that is the width.

    Parameters
    ----------
    raw : dict
        The language model's keys.

    Returns
    -------
    width : int
        The head width.
    keys : str
        ``"qk_rope_head_dim"``, ``"head_dim"`` or ``"hidden_size / num_attention_heads"``.

    Raises
    ------
    PosKernelsError
        If no width is given, a width is not a positive integer, or the heads do not divide ``hidden_size``.

    Examples
    --------
    >>> width_keys({"hidden_size": 4096, "num_attention_heads": 32})
    (128, 'hidden_size / num_attention_heads')
    >>> width_keys({"hidden_size": 10, "num_attention_heads": 3})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config keys 'hidden_size' = 10 and 'num_attention_heads' = 3 do not give
    a whole head_dim; set 'head_dim'
    """
    for key in ("qk_rope_head_dim", "head_dim"):
        value = count(raw, key, required=False)  # a positive integer, kept exact (10**400 refused, not overflowed)
        if value is not None:
            return value, key
    for key in ("hidden_size", "num_attention_heads"):
        if raw.get(key) is None:
            raise PosKernelsError(f"config key {key!r} is missing; a RoPE config needs it (or 'head_dim')")
    hidden, heads = count(raw, "hidden_size"), count(raw, "num_attention_heads")
    if hidden % heads:
        raise PosKernelsError(
            f"config keys 'hidden_size' = {raw['hidden_size']!r} and 'num_attention_heads' = "
            f"{raw['num_attention_heads']!r} do not give a whole head_dim; set 'head_dim'"
        )
    return hidden // heads, "hidden_size / num_attention_heads"


def partial_rotation(raw: dict, scaling: dict, scope: str = "rope_parameters", head_dim: int | None = None):
    """The fraction of the width that rotates, and the key it came from (None: the whole width).

    ``rotary_dim`` (GPT-J, CodeGen, MiniMax M2) counts rotated coordinates: the fraction is ``rotary_dim / head_dim``.

    Parameters
    ----------
    raw : dict
        The language model's keys (``partial_rotary_factor``, ``rotary_pct`` or ``rotary_dim``).
    scaling : dict
        The RoPE dict, whose ``partial_rotary_factor`` wins.
    scope : str
        The RoPE dict's key, quoted in an error.
    head_dim : int, optional
        The head width ``rotary_dim`` divides (default: ``raw["head_dim"]``).

    Returns
    -------
    fraction : float
        In ``(0, 1]``.
    key : str or None
        The key it came from; None when nothing is set (``fraction == 1``).

    Raises
    ------
    PosKernelsError
        If the fraction is not in ``(0, 1]`` or ``rotary_dim`` is not in ``(0, head_dim]``.

    Examples
    --------
    >>> partial_rotation({"rotary_dim": 64}, {}, head_dim=128)
    (0.5, 'rotary_dim')
    >>> partial_rotation({"partial_rotary_factor": 2}, {})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'partial_rotary_factor' must lie in (0, 1]; got 2
    """
    candidates = [(scaling, "partial_rotary_factor", f"{scope}.partial_rotary_factor")]
    candidates += [(raw, k, k) for k in ("partial_rotary_factor", "rotary_pct")]
    for where, key, label in candidates:
        value = where.get(key)
        if value is None:
            continue
        if not _real(value) or not 0 < value <= 1:
            raise PosKernelsError(f"config key {label!r} must lie in (0, 1]; got {value!r}")
        return float(value), label
    head = head_dim or raw.get("head_dim")
    if raw.get("rotary_dim") is not None and head:
        value = raw["rotary_dim"]
        if not _real(value) or not 0 < value <= head:
            raise PosKernelsError(f"config key 'rotary_dim' must lie in (0, head_dim = {head!r}]; got {value!r}")
        return value / head, "rotary_dim"
    return 1.0, None


@functools.cache
def default_theta() -> dict:
    """``{model_type: base}``: the ``default_theta`` of each transformers config class (used when a file has none).

    >>> default_theta()["cohere"], default_theta()["llama"]
    (500000.0, 10000.0)
    """
    text = (resources.files("poskernels.census") / "data" / "hf_attribute_map.json").read_text()
    return json.loads(text)["default_theta"]


def base_key(raw: dict, scaling: dict, scope: str, default: float, per_layer: bool = False) -> tuple[float, str]:
    """The base ``b`` and where it came from: a key, ``transformers default`` or ``assumed``.

    A file without a base takes its family's default (:func:`default_theta`), or ``default``, reported as
    assumed, for a family transformers does not know.  A per-layer-type RoPE without its base is refused:
    the layer types' defaults differ (Gemma 3: 10**6 global, 10**4 local).

    Parameters
    ----------
    raw : dict
        The language model's keys (``rope_theta``, ``rotary_emb_base``, ``model_type``).
    scaling : dict
        The RoPE dict, whose ``rope_theta`` wins.
    scope : str
        The RoPE dict's key, quoted in an error.
    default : float
        The base assumed for a family transformers does not know.
    per_layer : bool
        Whether ``scaling`` is one layer type's dict (then a missing base is refused).

    Returns
    -------
    base : float
    key : str
        The key, ``"transformers default"`` or ``"assumed"``.

    Raises
    ------
    PosKernelsError
        If the base is not a finite number > 1, or a per-layer-type dict has none.

    Examples
    --------
    >>> base_key({"rotary_emb_base": 10000}, {}, "rope_parameters", 1e4)
    (10000.0, 'rotary_emb_base')
    >>> base_key({"model_type": "cohere"}, {}, "rope_parameters", 1e4)
    (500000.0, 'transformers default')
    >>> base_key({}, {}, "rope_parameters", 1e4)
    (10000.0, 'assumed')
    >>> base_key({"rope_theta": 1}, {}, "rope_parameters", 1e4)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: config key 'rope_theta' must be a finite number > 1; got 1
    """
    for where, key, label in (
        (scaling, "rope_theta", f"{scope}.rope_theta"),
        (raw, "rope_theta", "rope_theta"),
        (raw, "rotary_emb_base", "rotary_emb_base"),
    ):
        value = where.get(key)
        if value is None:
            continue
        if not _real(value) or value <= 1:
            raise PosKernelsError(f"config key {label!r} must be a finite number > 1; got {value!r}")
        return float(value), label
    if per_layer:
        raise PosKernelsError(
            f"config key {scope + '.rope_theta'!r} is missing; per-layer-type bases have no common default"
        )
    theirs = default_theta().get(raw.get("model_type"))
    if _real(theirs):
        return float(theirs), "transformers default"
    return float(default), "assumed"
