"""Where a model's config comes from: a bundled name, a ``config.json`` path, a dict or a transformers config.

Bundled configs of released models live in ``poskernels/census/data/configs`` (:func:`bundled_configs`).  A file is read
as UTF-8 JSON only; what is read from it is :mod:`poskernels.census.config.parse`'s.
"""

from __future__ import annotations

import reprlib
from importlib import resources
from pathlib import Path

from ...errors import PosKernelsError, did_you_mean, parse_json, read_text
from .parse import _text, parse_config, parse_layer_configs
from .record import RopeConfig

__all__ = [
    "bundled_configs",
    "config_path",
    "hub_configs",
    "load_config",
    "load_layer_configs",
    "raw_config",
    "text_config",
]


def _configs_dir():
    return resources.files("poskernels.census") / "data" / "configs"


def bundled_configs() -> list[str]:
    """Names of the bundled configs (``poskernels census NAME``).

    Returns
    -------
    list of str
        The names, sorted.

    Examples
    --------
    >>> "llama-3.1-8b" in bundled_configs()
    True
    """
    return sorted(p.name[: -len(".json")] for p in _configs_dir().iterdir() if p.name.endswith(".json"))


def _raw_config(spec) -> tuple[dict, str]:
    """The dict behind ``spec`` (bundled name, path, dict or transformers config) and a name for it."""
    if isinstance(spec, dict):
        return spec, "config"
    if callable(getattr(spec, "to_dict", None)) and hasattr(spec, "model_type"):  # transformers' PretrainedConfig
        raw = spec.to_dict()  # rope_parameters standardized: rope_theta and the type written out
        return raw, type(spec).__name__
    if not isinstance(spec, (str, Path)):
        raise PosKernelsError(
            f"a config is a bundled name, a config.json path, a dict or a transformers PretrainedConfig; "
            f"got {reprlib.repr(spec)}"
        )
    spec = str(spec)
    if spec in bundled_configs():
        text, name = (_configs_dir() / f"{spec}.json").read_text(encoding="utf-8"), spec
    else:
        path = config_path(spec)
        try:
            found = path.is_file()
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            found = False
        if not found and _is_dir(path):
            raise PosKernelsError(
                f"the folder {spec if len(spec) <= 200 else spec[:100] + '...' + spec[-50:]!r} holds no config.json; "
                "a model folder is read through its config.json (a hub snapshot's), or give the file's path"
            )
        if not found:
            raise PosKernelsError(
                f"no config file at {spec if len(spec) <= 200 else spec[:100] + '...' + spec[-50:]!r} and no bundled "
                f"config of that name{did_you_mean(spec, bundled_configs())}; "
                f"bundled: {', '.join(bundled_configs())}"
            )
        text, name = read_text(path, "config file"), str(path)  # UTF-8 only: binary, UTF-16, Latin-1 refused
    return parse_json(text, f"config {name!r}"), name


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def config_path(spec) -> Path:
    """The file a path names: a model folder (a hub snapshot) is read through its ``config.json``, as transformers does.

    Parameters
    ----------
    spec : str or os.PathLike
        A path.

    Returns
    -------
    pathlib.Path
        ``spec/config.json`` when `spec` is a folder holding one, else `spec` itself (whether it exists or not: the
        caller refuses a missing file).

    Examples
    --------
    >>> config_path("models/llama").name, config_path("x.json").name
    ('llama', 'x.json')
    """
    path = Path(spec)
    try:
        if path.is_dir() and (path / "config.json").is_file():
            return path / "config.json"
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte: refused by the caller
        pass
    return path


def hub_configs() -> dict:
    """``{name: path}`` of the hub-style configs shipped in ``data/hub_configs`` (as the hub holds them).

    Returns
    -------
    dict of str to pathlib.Path
        Each shipped file by its name, sorted.

    Examples
    --------
    >>> sorted(hub_configs())
    ['deepseek-v3', 'gemma-3-4b-it']
    """
    folder = _configs_dir().parent / "hub_configs"
    return {
        p.name[: -len(".json")]: p for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".json")
    }


def raw_config(spec) -> tuple[dict, str]:
    """The JSON object behind a bundled name, a path, a dict or a transformers config, and a name for it.

    Parameters
    ----------
    spec : str, os.PathLike, dict or transformers.PretrainedConfig
        A bundled name (:func:`bundled_configs`), a ``config.json`` path or a model folder holding one, a config dict,
        or a transformers config.

    Returns
    -------
    tuple of (dict, str)
        The config as a dict, and the name the census prints for it.

    Raises
    ------
    PosKernelsError
        If `spec` names no file and no bundled config, is of another type, or the file is not a valid config
        (a missing key, a value out of range: the message names the key).

    Examples
    --------
    >>> raw_config("mistral-7b")[0]["model_type"]
    'mistral'
    """
    return _raw_config(spec)


def load_config(spec, layer_type: str | None = None) -> RopeConfig:
    """Read a bundled config by name, a ``config.json`` by path, a dict, or a transformers ``PretrainedConfig``.

    Parameters
    ----------
    spec : str, os.PathLike, dict or transformers.PretrainedConfig
        A bundled name (:func:`bundled_configs`), a ``config.json`` path or a model folder holding one, a config dict,
        or a transformers config.
    layer_type : str, optional
        For a config with one RoPE per kind of layer (Gemma 3's ``sliding_attention`` and ``full_attention``), the
        kind to read; default None (a config with one RoPE for all layers).

    Returns
    -------
    RopeConfig
        The rotary width ``d``, the base, the training length ``L``, the scaling map and its options.

    Raises
    ------
    PosKernelsError
        If `spec` names no file and no bundled config, is of another type, or the file is not a valid config
        (a missing key, a value out of range: the message names the key), or `layer_type` does not fit the config
        (given to a config with one RoPE for all layers; missing, or a kind it lacks, where it has one per kind).

    Examples
    --------
    >>> c = load_config("llama-3.1-8b")
    >>> c.rope_type, c.training_length, c.factor
    ('llama3', 8192, 8.0)
    >>> load_config({"head_dim": 64, "max_position_embeddings": 2048, "rope_theta": 5e5}).base
    500000.0
    >>> gemma = hub_configs()["gemma-3-4b-it"]  # one RoPE per kind of layer
    >>> [(c.base, c.rope_type) for c in (load_config(gemma, t) for t in ("sliding_attention", "full_attention"))]
    [(10000.0, 'default'), (1000000.0, 'linear')]
    """
    raw, name = _raw_config(spec)
    return parse_config(raw, name=name, layer_type=layer_type)


def load_layer_configs(spec) -> dict[str | None, RopeConfig]:
    """Every RoPE of a config (:func:`parse_layer_configs`), from anything :func:`load_config` reads.

    Parameters
    ----------
    spec : str, os.PathLike, dict or transformers.PretrainedConfig
        A bundled name (:func:`bundled_configs`), a ``config.json`` path or a model folder holding one, a config dict,
        or a transformers config.

    Returns
    -------
    dict of str or None to RopeConfig
        One entry per kind of layer; the key None for a config with one RoPE for all layers.

    Raises
    ------
    PosKernelsError
        If `spec` names no file and no bundled config, is of another type, or the file is not a valid config
        (a missing key, a value out of range: the message names the key).

    Examples
    --------
    >>> list(load_layer_configs("mistral-7b"))
    [None]
    """
    raw, name = _raw_config(spec)
    return parse_layer_configs(raw, name=name)


def text_config(raw: dict) -> dict:
    """The language model's keys of a config dict, with the class defaults the file leaves out (as the census reads).

    Parameters
    ----------
    raw : dict
        A config as ``config.json`` holds it (a multimodal one's ``text_config`` is read).

    Returns
    -------
    dict
        The text model's keys, its class defaults filled in.

    Raises
    ------
    PosKernelsError
        If `raw` is not a dict.

    Examples
    --------
    >>> text = text_config({"model_type": "gemma3", "text_config": {"sliding_window": 1024}})
    >>> text["sliding_window"], text["layer_types"][:6].count("full_attention")
    (1024, 1)
    """
    if not isinstance(raw, dict):
        raise PosKernelsError(f"a config must be a JSON object; got {reprlib.repr(raw)}")
    return _text(raw)[0]
