"""What the census probes in a transformers config class: defaults it derives, where it puts a file's flat keys,
and whether its attention multiplies the logits by YaRN's mscale.  Used by :mod:`.defaults` when it reads a family
from the installed transformers (and kept by :mod:`.hf_cache`)."""

from __future__ import annotations

import copy
import inspect

__all__ = ["attention_mscale", "derived", "probe"]

#: Probes of how a family with per-layer-type defaults places a file's flat keys.
_PROBES = {
    "rope_scaling": {"rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    "rope_theta": {"rope_theta": 12345.0},
    "rope_local_base_freq": {"rope_local_base_freq": 23456.0},
}


def derived(cls, raw: dict) -> list[str]:
    """Defaults the class computes from other keys (Llama's ``head_dim = hidden_size // num_attention_heads``).

    Probed: the class built with twice its ``hidden_size``; a ``head_dim`` that follows it is derived, and a
    file that gives ``hidden_size`` or ``num_attention_heads`` without ``head_dim`` gets it from them.

    Parameters
    ----------
    cls : type
        A transformers config class.
    raw : dict
        Its defaults (``cls().to_dict()``).

    Returns
    -------
    list of str
        The derived keys (``["head_dim"]`` or ``[]``).

    Examples
    --------
    >>> from transformers import Gemma3TextConfig, LlamaConfig
    >>> derived(LlamaConfig, LlamaConfig().to_dict())  # a Llama file without head_dim: hidden / heads
    ['head_dim']
    """
    import warnings

    hidden, heads = raw.get("hidden_size"), raw.get("num_attention_heads")
    if not (isinstance(hidden, int) and isinstance(heads, int) and raw.get("head_dim") == hidden // heads):
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probed = cls(hidden_size=2 * hidden).to_dict().get("head_dim")
    except Exception:  # noqa: BLE001 - the class refuses the probe: the default is read as given
        return []
    return ["head_dim"] if probed == 2 * hidden // heads else []


def probe(cls, default_rope: dict) -> dict:
    """For each flat key of :data:`_PROBES`, the layer types transformers puts it on (None: it replaces the dict).

    Parameters
    ----------
    cls : type
        A transformers config class.
    default_rope : dict
        Its default ``rope_parameters``.

    Returns
    -------
    dict of str to list of str or None
        By flat key (``rope_scaling``, ``rope_theta``, ``rope_local_base_freq``): the layer types it sets, None
        where the class has one RoPE for all layers, ``[]`` where the class refuses the key.

    Examples
    --------
    >>> from transformers import Gemma3TextConfig, LlamaConfig
    >>> probe(Gemma3TextConfig, {})
    {'rope_scaling': ['full_attention'], 'rope_theta': ['full_attention'],
     'rope_local_base_freq': ['sliding_attention']}
    >>> probe(LlamaConfig, {})
    {'rope_scaling': None, 'rope_theta': None, 'rope_local_base_freq': None}
    """
    import warnings

    out = {}
    for key, kwargs in _PROBES.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rope = cls(**copy.deepcopy(kwargs)).rope_parameters
        except Exception:  # noqa: BLE001 - the class refuses the probe: the key is not read
            out[key] = []
            continue
        if not any(isinstance(v, dict) for v in rope.values()):
            out[key] = None
            continue
        marker = {"rope_scaling": ("factor", 2.0), "rope_theta": ("rope_theta", 12345.0)}.get(
            key, ("rope_theta", 23456.0)
        )
        out[key] = sorted(k for k, v in rope.items() if isinstance(v, dict) and v.get(marker[0]) == marker[1])
    return out


def attention_mscale(config_module) -> bool:
    """Whether the family's attention multiplies its logits by YaRN's ``mscale(factor, mscale_all_dim)**2``.

    Parameters
    ----------
    config_module : module or None
        The family's ``configuration_*`` module (its ``modeling_*`` module's source is read).

    Returns
    -------
    bool
        False too where there is no modeling module or no source.

    Examples
    --------
    >>> import importlib
    >>> models = "transformers.models"
    >>> attention_mscale(importlib.import_module(f"{models}.deepseek_v3.configuration_deepseek_v3"))
    True
    >>> attention_mscale(importlib.import_module(f"{models}.llama.configuration_llama")), attention_mscale(None)
    (False, False)
    """
    import importlib

    if config_module is None:
        return False
    name = config_module.__name__.replace(".configuration_", ".modeling_")
    try:
        source = inspect.getsource(importlib.import_module(name))
    except Exception:  # noqa: BLE001 - no modeling module (or no source): nothing known
        return False
    return "mscale_all_dim" in source and "scaling * mscale * mscale" in source.replace("self.scaling", "scaling")
