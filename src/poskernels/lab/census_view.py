"""The lab's census of a released model: a bundled config picked from a list, or a ``config.json`` dropped in.

The page asks the lab server (:mod:`poskernels.lab.server`) at three addresses:

- ``GET /census/models``: the bundled configs (``poskernels census NAME``) and the shipped hub-style files;
- ``GET /census/model?name=NAME&target=N``: the census of one of them at ``N`` (empty: the config's default);
- ``POST /census/upload?target=N`` with a ``config.json`` as the body: the census of that file.

A file is read through the same code as ``poskernels census`` (:func:`~poskernels.errors.decode_text`,
:func:`~poskernels.errors.parse_json`, :func:`~poskernels.census.compute.census_all`), at most :data:`UPLOAD_LIMIT`
bytes.  The answer is :func:`view`'s JSON; bad input is ``{"error": one line}`` with status 400 (413 past the
size limit), never a traceback.  The smallest-base scan of the command line (seconds per config) is left out, and
the target is at most :data:`MAX_TARGET`, so no request holds a worker long.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qs

from ..census.compute import census_all
from ..census.config import bundled_configs, hub_configs
from ..census.render import census_lines
from ..errors import PosKernelsError, decode_text, parse_json

__all__ = [
    "CHART_MAPS",
    "MAX_TARGET",
    "UPLOAD_LIMIT",
    "chart",
    "models",
    "query_target",
    "upload_name",
    "view",
    "view_of_bytes",
    "view_of_model",
]

#: Largest config.json the lab reads (released configs are a few KiB; LongRoPE's factor lists some tens).
UPLOAD_LIMIT = 2**20
#: Largest target length the lab computes (the command line goes to 2**53).
MAX_TARGET = 2**24


def models() -> list[dict]:
    """The configs the reader may pick: ``{"name", "label"}`` each, bundled first.

    Returns
    -------
    list of dict
        The bundled configs, then the shipped hub files (``hub:NAME``).

    Examples
    --------
    >>> [m["name"] for m in models()][:2]
    ['llama-2-7b', 'llama-3-8b']
    """
    out = [{"name": n, "label": n} for n in bundled_configs()]
    return out + [{"name": f"hub:{n}", "label": f"{n} (hub file)"} for n in hub_configs()]


def query_target(query: str) -> int | None:
    """The ``target`` of a query string: None when absent or empty, else a positive integer up to :data:`MAX_TARGET`.

    Parameters
    ----------
    query : str
        The request's query string.

    Returns
    -------
    int or None

    Raises
    ------
    PosKernelsError
        If the target is not a whole number in ``1..MAX_TARGET``.

    Examples
    --------
    >>> query_target("target=65536"), query_target("")
    (65536, None)
    >>> query_target("target=1e9")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the target length must be a whole number of tokens; got '1e9'
    """
    values = parse_qs(query, keep_blank_values=True).get("target", [""])
    text = values[-1].strip()
    if not text:
        return None
    if not text.isdigit() or len(text) > 20:
        raise PosKernelsError(f"the target length must be a whole number of tokens; got {text[:40]!r}")
    N = int(text)
    if not 1 <= N <= MAX_TARGET:
        raise PosKernelsError(f"the target length must lie in 1..{MAX_TARGET} in the lab (the command line goes on); "
                              f"got {N}")  # fmt: skip
    return N


def upload_name(query: str) -> str:
    """The file name the page gives with an upload (``file=...``), shortened and printable; ``config.json`` if none.

    Parameters
    ----------
    query : str
        The request's query string.

    Returns
    -------
    str
        At most 80 printable characters.

    Examples
    --------
    >>> upload_name("file=my%20config.json&target=9"), upload_name("")
    ('my config.json', 'config.json')
    """
    name = parse_qs(query).get("file", ["config.json"])[-1]
    name = "".join(c for c in name if c.isprintable())[:80]
    return name or "config.json"


#: The maps the census chart draws, each plane's factor on theta_j at the target (the config's own map first).
CHART_MAPS = ("config", "pi", "ntk", "yarn", "dynamic", "llama3", "yarn_hf", "longrope")


def chart(data: dict) -> dict:
    """The census chart: each map's factor on ``theta_j`` per plane, at the census's target (Definition 5).

    Parameters
    ----------
    data : dict
        One census, as :func:`poskernels.census.compute.census_all` returns it (or one of its layer types).

    Returns
    -------
    dict
        ``planes`` (j), ``maps`` (``{"key", "label"}``, the config's own map first), ``factors[map]`` (one per
        plane) and ``log2`` (``log2`` of each factor, what the page's y axis shows), with ``y`` its axis.

    Examples
    --------
    >>> from poskernels.census.compute import census_all
    >>> c = chart(census_all("llama-3.1-8b", 131072, scan_base=False))
    >>> c["maps"][0]["label"], c["factors"]["pi"][0], c["y"]["min"]
    ("the config's own (llama3)", 0.0625, -4.0)
    """
    keys = [m for m in CHART_MAPS if all(m in p["factors"] for p in data["planes"])]
    factors = {m: [float(p["factors"][m]) for p in data["planes"]] for m in keys}
    own = data["maps"]["config"]["map"]
    labels = {"config": f"the config's own ({own})"}
    log2 = {m: [round(math.log2(f), 4) if f > 0 else None for f in fs] for m, fs in factors.items()}
    shown = [v for vs in log2.values() for v in vs if v is not None]
    lo, hi = math.floor(min(shown, default=0.0)), math.ceil(max(shown, default=0.0))
    lo, hi = (lo, hi) if lo < hi else (lo - 1, hi + 1)
    step = max(1, math.ceil((hi - lo) / 8))
    return {
        "planes": [p["plane"] for p in data["planes"]],
        "maps": [{"key": m, "label": labels.get(m, m)} for m in keys],
        "factors": factors,
        "log2": log2,
        "y": {"min": float(lo), "max": float(hi), "log": False, "ticks": [float(t) for t in range(lo, hi + 1, step)],
              "label": "log₂ of the factor on θ_j"},  # fmt: skip
    }


def _one(data: dict) -> dict:
    """One census as the page draws it: its lines, one table row per plane and the chart of every map's factor."""
    planes = [[p["plane"], p["wavelength"], p["turns"], p["full_turn"], p["factors"]["config"]] for p in data["planes"]]
    return {
        "chart": chart(data),
        "layer_type": data["config"].get("layer_type"),
        "lines": census_lines(data),
        "columns": ["j", "wavelength λ_j", "turns in L", "whole turn", f"factor ({data['maps']['config']['map']})"],
        "planes": planes,
        "unseen": data["context"]["unseen_planes"]["config"],
    }


def view(spec, target: int | None, name: str) -> dict:
    """The census of ``spec`` (a bundled name, a path or a dict) at ``target``, for the page.

    Parameters
    ----------
    spec : str, path-like or dict
        The config, as :func:`poskernels.census.compute.census_all` takes it.
    target : int or None
        The target length (None: the config's own).
    name : str
        The name the page shows.

    Returns
    -------
    dict
        ``name`` and ``censuses``: one per layer type (its lines, a row per plane, the chart of every map).

    Examples
    --------
    >>> v = view("mistral-7b", 65536, "mistral-7b")
    >>> v["name"], len(v["censuses"]), len(v["censuses"][0]["planes"])
    ('mistral-7b', 1, 64)
    """
    data = census_all(spec, target, scan_base=False, name=name)
    parts = list(data["layer_types"].values()) if "layer_types" in data else [data]
    return {"name": name, "censuses": [_one(d) for d in parts]}


def view_of_model(query: str) -> dict:
    """:func:`view` of the model a ``name=...&target=...`` query picks.

    Parameters
    ----------
    query : str
        The request's query string: ``name`` one of :func:`models`.

    Returns
    -------
    dict
        :func:`view`'s.

    Raises
    ------
    PosKernelsError
        If ``name`` is not a config of :func:`models`, or the target is refused (:func:`query_target`).

    Examples
    --------
    >>> view_of_model("name=mistral-7b&target=65536")["name"]
    'mistral-7b'
    >>> view_of_model("name=lama-2-7b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: no bundled config named 'lama-2-7b'; the list: llama-2-7b, llama-3-8b, ...
    """
    names = parse_qs(query).get("name", [""])
    name = names[-1]
    hubs = hub_configs()
    if name.startswith("hub:") and name[4:] in hubs:
        spec = str(hubs[name[4:]])
    elif name in bundled_configs():
        spec = name
    else:
        raise PosKernelsError(
            f"no bundled config named {name[:80]!r}; the list: {', '.join(m['name'] for m in models())}"
        )
    return view(spec, query_target(query), name)


def view_of_bytes(body: bytes, query: str, filename: str = "config.json") -> dict:
    """:func:`view` of an uploaded ``config.json`` (its bytes), read as ``poskernels census FILE`` reads a file.

    Parameters
    ----------
    body : bytes
        The uploaded file, at most :data:`UPLOAD_LIMIT` bytes.
    query : str
        The request's query string (its ``target``).
    filename : str
        The upload's name, shown and quoted in errors.

    Returns
    -------
    dict
        :func:`view`'s.

    Raises
    ------
    PosKernelsError
        If the file is too large, not UTF-8 JSON, not an object, or a config the census refuses.

    Examples
    --------
    >>> body = b'{"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32}'
    >>> v = view_of_bytes(body, "target=64", "tiny.json")
    >>> v["name"], len(v["censuses"][0]["planes"])
    ('tiny.json', 8)
    >>> view_of_bytes(b"[1]", "")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: a config must be a JSON object; got a JSON list
    """
    if len(body) > UPLOAD_LIMIT:
        raise PosKernelsError(f"the config file is {len(body)} bytes; the limit is {UPLOAD_LIMIT} bytes")
    raw = parse_json(decode_text(body, filename), f"config {filename!r}")
    if not isinstance(raw, dict):
        raise PosKernelsError(f"a config must be a JSON object; got a JSON {type(raw).__name__}")
    return view(raw, query_target(query), filename)
