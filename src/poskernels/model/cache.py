"""The cache of trained heads and computed results, keyed by their full description.

A result is found under :func:`cache_key` of its description (the configuration, the seed) and
:data:`CODE_VERSION`; :func:`cached_or_build` reads it back when it is there and verified, else builds and saves it.
A result is JSON beside its metadata and SHA-256 (:func:`save_json`, :func:`load_json`); a trained head's arrays
are an ``.npz`` without pickle (:mod:`poskernels.model.cache_arrays`).  Reading checks everything, so a truncated,
corrupt or stale entry is reported and never trusted (the caller rebuilds; :mod:`poskernels.model.cache_entry`).
Writes go through :mod:`poskernels.atomic` (a temporary file and :func:`os.replace`), so no reader sees half a file.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ..atomic import write_text_atomic
from .cache_entry import CacheError, _clear, discard, read_regular

__all__ = [
    "CODE_VERSION",
    "article_cache",
    "cache_key",
    "cached_by_source",
    "cached_json",
    "cached_or_build",
    "load_json",
    "save_json",
]

#: Bump whenever a change alters what training produces (head, schemes, initialization, Adam,
#: the cue stream), so old cache entries stop matching.
CODE_VERSION = "head-6"


def article_cache(fallback: Path, folders: list[Path] | None = None) -> Path:
    """The cache of the article's trained heads that the notebook reads.

    ``$POSKERNELS_CACHE`` when it is set and not empty; else ``.cache/poskernels`` in the first of `folders` where
    that folder exists (the cache ``make reproduce`` fills, in the repository's root: the current folder, or the one
    above it where Jupyter runs a notebook of ``notebooks/``); else `fallback` (the notebook's own folder, where the
    heads then train).

    Parameters
    ----------
    fallback : pathlib.Path
        The cache used when neither ``$POSKERNELS_CACHE`` nor a filled ``.cache/poskernels`` exists.
    folders : list of pathlib.Path, optional
        Where to look for ``.cache/poskernels``, in order; default: the current folder, then its parent.

    Returns
    -------
    pathlib.Path
        The cache folder chosen (not created).

    Examples
    --------
    >>> import os, tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / ".cache" / "poskernels").mkdir(parents=True)
    >>> saved = os.environ.pop("POSKERNELS_CACHE", None)
    >>> article_cache(root / "mine", [root / "notebooks", root]) == root / ".cache" / "poskernels"
    True
    >>> article_cache(root / "mine", [root / "notebooks"]) == root / "mine"
    True
    >>> os.environ["POSKERNELS_CACHE"] = str(root / "named")
    >>> article_cache(root / "mine", [root]) == root / "named"
    True
    >>> del os.environ["POSKERNELS_CACHE"]
    >>> if saved is not None:
    ...     os.environ["POSKERNELS_CACHE"] = saved
    """
    named = os.environ.get("POSKERNELS_CACHE")
    if named:
        return Path(named)
    here = Path.cwd()
    for folder in [here, here.parent] if folders is None else folders:
        if (folder / ".cache" / "poskernels").is_dir():
            return folder / ".cache" / "poskernels"
    return fallback


def cache_key(description: dict) -> str:
    """Hex key of a JSON-ready description (the configuration, the seed) and :data:`CODE_VERSION`.

    Parameters
    ----------
    description : dict
        JSON-ready; key order does not matter.

    Returns
    -------
    str
        The key, in hexadecimal.

    Examples
    --------
    >>> k = cache_key({"scheme": "rope", "seed": 0})
    >>> len(k), k == cache_key({"seed": 0, "scheme": "rope"})
    (20, True)
    """
    text = json.dumps({"code": CODE_VERSION, **description}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _json_digest(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def save_json(path: Path, data, meta: dict) -> None:
    """Write ``{"meta": meta + sha256 of data, "data": data}`` to ``path`` atomically (computed results).

    Parameters
    ----------
    path : Path
        The JSON file (a folder in its place is moved aside).
    data : object
        JSON-ready result.
    meta : dict
        JSON-ready description stored beside it (what :func:`load_json` checks).

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.json"
    >>> save_json(p, {"acc": [0.5, 0.25]}, {"seed": 0})
    >>> load_json(p, expect={"seed": 0})
    {'acc': [0.5, 0.25]}
    """
    # keys keep their order (lengths, offsets); the digest is over the key-sorted form
    _clear(path)
    write_text_atomic(path, json.dumps({"meta": {**meta, "sha256": _json_digest(data)}, "data": data}))


def load_json(path: Path, expect: dict | None = None):
    """Read and verify a file written by :func:`save_json`; raises as :func:`load_arrays` does.

    Parameters
    ----------
    path : Path
        The JSON file.
    expect : dict, optional
        Entries the stored meta must equal.

    Returns
    -------
    object
        The stored data.

    Raises
    ------
    FileNotFoundError
        If there is no file.
    CacheError
        If the file is unreadable, altered, or describes another result.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.json"
    >>> save_json(p, [1, 2], {"key": "k"})
    >>> load_json(p, expect={"key": "k"})
    [1, 2]
    >>> _ = p.write_text(p.read_text().replace("[1, 2]", "[1, 3]"))
    >>> load_json(p)
    Traceback (most recent call last):
    ...
    poskernels.model.cache_entry.CacheError: r.json: the data do not match their stored SHA-256
    """
    path = Path(path)
    raw = read_regular(path)
    try:
        blob = json.loads(raw.decode("utf-8"))
        meta, data = blob["meta"], blob["data"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise CacheError(f"{path.name}: unreadable ({type(err).__name__}: {str(err)[:200]})") from None
    if not isinstance(meta, dict):
        raise CacheError(f"{path.name}: its meta is a JSON {type(meta).__name__}, not an object")
    if meta.get("sha256") != _json_digest(data):
        raise CacheError(f"{path.name}: the data do not match their stored SHA-256")
    for k, v in (expect or {}).items():
        if meta.get(k) != v:
            raise CacheError(f"{path.name}: stored {k} differs from the requested one")
    return data


def cached_json(path: Path | None, key: str, log=None, tag: str = "cache"):
    """The verified result cached at ``path`` under ``key``, or None when it must be computed.

    A missing file is None; a corrupt, stale or foreign one is logged as ``[tag] discarding ...``, removed, and
    None too, so the caller recomputes and rewrites it (a corrupt cache entry is rebuilt, never trusted).

    Parameters
    ----------
    path : Path or None
        The JSON file; None caches nothing.
    key : str
        The key the result must be stored under.
    log : callable, optional
        ``log(message)`` for a discarded entry.
    tag : str
        The log line's tag.

    Returns
    -------
    object or None
        The stored data, or None.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.json"
    >>> cached_json(p, "k") is None
    True
    >>> save_json(p, {"a": 1}, {"key": "k"})
    >>> cached_json(p, "k")
    {'a': 1}
    >>> cached_json(p, "other") is None, p.exists()  # stored under another key: removed, to be recomputed
    (True, False)
    """
    if path is None:
        return None
    try:
        return load_json(path, expect={"key": key})
    except FileNotFoundError:
        return None
    except CacheError as err:
        if log is not None:
            log(f"[{tag}] discarding {err}; recomputing")
        discard(path)
        return None


def cached_or_build(path: Path | None, description: dict, build, log=None, tag: str = "cache"):
    """The result of ``description``: read from ``path`` when it is there and verified, else ``build()``, saved.

    The one "read a cached result or rebuild it" of the library: the key is :func:`cache_key` of ``description``,
    which is stored beside the result; a corrupt, stale or foreign file is discarded (:func:`cached_json`) and
    rebuilt; ``path`` None builds without caching.

    Parameters
    ----------
    path : Path or None
        The JSON file; None builds without caching.
    description : dict
        JSON-ready description of the result (its key is :func:`cache_key` of it).
    build : callable
        ``build() -> data``, JSON-ready.
    log : callable, optional
        ``log(message)`` for a discarded entry.
    tag : str
        The log line's tag.

    Returns
    -------
    object
        The result, read or built.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.json"
    >>> cached_or_build(p, {"what": "answer"}, lambda: {"a": 42})
    {'a': 42}
    >>> cached_or_build(p, {"what": "answer"}, lambda: 1 / 0)  # read back: not built again
    {'a': 42}
    """
    key = cache_key(description)
    data = cached_json(path, key, log, tag)
    if data is None:
        data = build()
        if path is not None:
            save_json(path, data, {"key": key, **description})
    return data


def cached_by_source(
    cache_dir: Path | None,
    name: str,
    module: ModuleType,
    description: dict,
    build: Callable[[], object],
    log=None,
):
    """A deterministic result, cached as JSON under its arguments and the source of the module that computes it.

    For what is not trained but costs every run its time (200-digit arithmetic, the exact bag reader, a function
    of ``scipy.special``, whose import alone is 0.15 s): the key (:func:`cache_key`, which holds
    :data:`CODE_VERSION`) is ``description`` with a digest of ``module``'s source, so a change to that code
    recomputes (a module whose source cannot be read is not cached); a corrupt or foreign entry is rebuilt, never
    trusted (:func:`cached_or_build`).  A float is stored as JSON writes it, the shortest text that reads back the
    same double: a cached result is the computed one bit for bit.

    Parameters
    ----------
    cache_dir : Path or None
        The cache folder: the result is ``cache_dir/results/NAME-KEY.json``; None builds without caching.
    name : str
        The file's prefix (``"condition"``, ``"bag-reader"``).
    module : module
        The module whose source holds the computation.
    description : dict
        JSON-ready: what is computed and its arguments.
    build : callable
        ``build() -> data``, JSON-ready: the computation itself.
    log : callable, optional
        ``log(message)`` for a discarded entry.

    Returns
    -------
    object
        The result, read from the cache or built (and saved).

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.theory import bag_reader
    >>> cache = Path(tempfile.mkdtemp())
    >>> what = {"what": "expected_max_count", "K": 3, "n_symbols": 2}
    >>> cached_by_source(cache, "max", bag_reader, what, lambda: bag_reader.expected_max_count(3, 2).tolist())
    [0.0, 1.0, 1.5, 2.25]
    >>> cached_by_source(cache, "max", bag_reader, what, lambda: 1 / 0)  # read back, not built again
    [0.0, 1.0, 1.5, 2.25]
    """
    try:
        source = hashlib.sha256(inspect.getsource(module).encode()).hexdigest()[:16]
    except (OSError, TypeError):  # no source to key it by (an install of bytecode alone): computed, not cached
        return build()
    description = {**description, "source": source}
    path = None if cache_dir is None else Path(cache_dir) / "results" / f"{name}-{cache_key(description)}.json"
    return cached_or_build(path, description, build, log)
