"""What a hub ``config.json`` leaves out: the model class's defaults, read as transformers fills them in.

Released files hold only what differs from their config class's defaults (Gemma-3-4b-it's ``text_config`` has no
``num_attention_heads``, no ``head_dim``, no base).  :func:`~poskernels.census.config.fill.fill_defaults` completes a
file's text part from its family's defaults, and says which keys it took and from where:

- from the installed transformers when it is importable (``CONFIG_MAPPING[model_type]()``, its text
  sub-config), else from ``data/hf_text_defaults.json``, generated from the same function
  (:func:`defaults_table`; a test holds the two equal);
- a per-layer-type default (Gemma 3's ``{sliding_attention, full_attention}``) takes the file's flat
  ``rope_scaling``, ``rope_theta`` and ``rope_local_base_freq`` on the layer types transformers puts them on
  (probed per family, ``flat_to``);
- ``layer_types`` the file leaves out are the class's for the file's ``num_hidden_layers`` (transformers
  derives them; without it the default pattern is repeated, stated as assumed).
"""


from __future__ import annotations

import functools
import inspect
import json
from importlib import resources

from ..keys import ATTENTION_KEYS
from . import probes
from .hf_cache import memo, transformers_version

__all__ = ["READ_KEYS", "class_defaults", "defaults_table", "use_transformers"]


#: The keys of a text config the census reads (and the family's own names for them, per attribute map).
READ_KEYS = (
    "head_dim",
    "hidden_size",
    "num_attention_heads",
    "num_hidden_layers",
    "max_position_embeddings",
    "original_max_position_embeddings",
    "partial_rotary_factor",
    "rotary_pct",
    "rotary_dim",
    "rotary_emb_base",
    "rope_theta",
    "rope_local_base_freq",
    "rope_parameters",
    "layer_types",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "query_pre_attn_scalar",
    "no_rope_layers",
    "attn_temperature_tuning",
    "floor_scale",
    "attn_scale",
    "per_layer_config",
    "global_head_dim",
    "sliding_window_pattern",
    "sliding_window",
    "attention_chunk_size",
    "local_attention",
    "use_sliding_window",
    "max_window_layers",
)

#: Where a wrapper keeps its language model, in transformers' order (``get_text_config``).
TEXT_PARTS = ("text_config", "decoder", "generator", "text_encoder", "language_config", "llm_config")


_USE_TRANSFORMERS = [True]


def use_transformers(flag: bool | None = None) -> bool:
    """Whether defaults come from the installed transformers (when importable); ``flag`` sets it (tests).

    Parameters
    ----------
    flag : bool, optional
        Read the installed transformers (True) or the shipped table (False) from now on; unchanged when None.

    Returns
    -------
    bool
        Whether defaults come from transformers now (never without it installed).

    Examples
    --------
    >>> isinstance(use_transformers(), bool)
    True
    """
    if flag is not None:
        _USE_TRANSFORMERS[0] = bool(flag)
    if not _USE_TRANSFORMERS[0]:
        return False
    return transformers_version() is not None  # read from its metadata: nothing is imported


def _jsonable(value):
    return json.loads(json.dumps(value, default=str))


def _entry(mapping, model_type: str) -> dict | None:
    """One family's defaults from the installed transformers (None when its class cannot be built)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg = mapping[model_type]()
            text = cfg.get_text_config()
    except Exception:  # noqa: BLE001 - a config class this installation cannot build
        return None
    part = ""
    if text is not cfg and any(k in cfg.to_dict() for k in ATTENTION_KEYS):  # the wrapper has attention keys
        text = cfg
    if text is not cfg:
        part = next((k for k, v in vars(cfg).items() if v is text), None)
        if part is None:
            return None
    raw = text.to_dict()
    names = {v for v in getattr(type(text), "attribute_map", {}).values()}
    keys = [k for k in raw if k in READ_KEYS or k in names]
    entry = {"part": part, "text_model_type": text.model_type, "defaults": _jsonable({k: raw[k] for k in keys})}
    derived = probes.derived(type(text), raw)
    if derived:
        entry["derived"] = derived
    rope = raw.get("rope_parameters")
    if isinstance(rope, dict) and any(isinstance(v, dict) for v in rope.values()):
        entry["flat_to"] = probes.probe(type(text), rope)
    module = inspect.getmodule(type(text))
    entry["mscale_all_dim_in_attention"] = probes.attention_mscale(module)
    return entry


def defaults_table() -> dict:
    """``data/hf_text_defaults.json`` from the installed transformers: every model type's text defaults.

    Run ``python -m poskernels.census.hf_families --defaults PATH`` to regenerate the shipped file.

    Returns
    -------
    dict
        ``{"_source": str, "families": {model_type: entry}}``: the transformers release it was read from, and for
        each model type with a text config its ``part``, ``text_model_type``, ``defaults`` (the keys the census
        reads), ``derived`` keys and ``mscale_all_dim_in_attention``.

    Examples
    --------
    Reading every config class takes a while, so this shows the shipped table the function regenerates:

    >>> import json
    >>> from importlib import resources
    >>> table = json.loads((resources.files("poskernels.census") / "data" / "hf_text_defaults.json").read_text())
    >>> sorted(table)
    ['_source', 'families']
    >>> table["families"]["llama"]["defaults"]["rope_parameters"]
    {'rope_theta': 10000.0, 'rope_type': 'default'}
    """
    import logging

    import transformers
    from transformers import CONFIG_MAPPING

    transformers.logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    table = {}
    for model_type in sorted(CONFIG_MAPPING.keys()):
        entry = _entry(CONFIG_MAPPING, model_type)
        if entry is not None:
            table[model_type] = entry
    source = (
        f"transformers {transformers.__version__}: each config class's text defaults for the keys the census reads "
        "(python -m poskernels.census.hf_families --defaults PATH)"
    )
    return {"_source": source, "families": table}


@functools.cache
def _shipped() -> dict:
    text = (resources.files("poskernels.census") / "data" / "hf_text_defaults.json").read_text()
    return json.loads(text)


def class_defaults(model_type: str) -> tuple[dict | None, str]:
    """One family's text defaults and where they came from (``transformers X.Y`` or the shipped table).

    Parameters
    ----------
    model_type : str
        A ``model_type`` (``"llama"``, ``"gemma3"``).

    Returns
    -------
    entry : dict or None
        ``part`` (the wrapper's key of the text config, or ``""``), ``defaults`` and what the family's attention
        adds; None for a family not known.
    source : str
        Where they were read.

    Examples
    --------
    >>> entry, source = class_defaults("gemma3")
    >>> entry["part"], entry["defaults"]["num_attention_heads"], entry["defaults"]["head_dim"]
    ('text_config', 8, 256)
    """
    if use_transformers():
        return _entry_cached(model_type), f"transformers {transformers_version()}"
    table = _shipped()
    return table["families"].get(model_type), table["_source"].split(":")[0] + " (shipped table)"


@functools.cache
def _entry_cached(model_type: str) -> dict | None:
    """One family's entry, read from transformers once per installed version (:mod:`.hf_cache`)."""

    def compute():
        import logging

        from transformers import CONFIG_MAPPING

        logging.getLogger("transformers").setLevel(logging.ERROR)
        return _entry(CONFIG_MAPPING, model_type) if model_type in CONFIG_MAPPING else None

    return memo("defaults", model_type, compute)
