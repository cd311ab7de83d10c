"""On-disk cache of trained heads: ``.npz`` without pickle, keyed by the full configuration.

A file holds the head's arrays, its loss curve and one string entry, ``__meta__``: JSON with the
configuration, the seed, :data:`CODE_VERSION` and the SHA-256 of every array.  Reading checks all
of it, so a truncated, corrupt or stale file is reported and never trusted (the caller retrains).
Writes go through :mod:`poskernels.atomic` (a temporary file and :func:`os.replace`), so no reader sees half a file.
Reads open only regular files (:func:`read_regular`): a FIFO or a device where an entry should be is refused, not
waited on, and moved out of the way (:func:`discard`) like any other untrusted entry.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import stat
import zipfile
from pathlib import Path

import numpy as np

from ..atomic import replacing, write_text_atomic

__all__ = [
    "CODE_VERSION",
    "CacheError",
    "article_cache",
    "cached_json",
    "array_digest",
    "discard",
    "cache_key",
    "cached_or_build",
    "load_arrays",
    "load_json",
    "read_regular",
    "save_arrays",
    "save_json",
]

#: Bump whenever a change alters what training produces (head, schemes, initialization, Adam,
#: the cue stream), so old cache entries stop matching.
CODE_VERSION = "head-5"

_META = "__meta__"


class CacheError(Exception):
    """A cache file that exists but cannot be trusted (internal; callers log it and rebuild)."""


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


def array_digest(arrays: dict) -> str:
    """SHA-256 over names, dtypes, shapes and bytes of ``arrays`` (in name order).

    Parameters
    ----------
    arrays : dict of str to ndarray
        The arrays.

    Returns
    -------
    str
        The digest, in hexadecimal.

    Examples
    --------
    >>> array_digest({"a": np.zeros(2)}) == array_digest({"a": np.zeros(2)})
    True
    >>> array_digest({"a": np.zeros(2)}) == array_digest({"a": np.zeros(3)})
    False
    """
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_arrays(path: Path, arrays: dict, meta: dict) -> None:
    """Write ``arrays`` and ``meta`` (plus the arrays' digest) to ``path`` atomically.

    Parameters
    ----------
    path : Path
        The ``.npz`` file (a folder in its place is moved aside).
    arrays : dict of str to ndarray
        What is stored.
    meta : dict
        JSON-ready description stored beside them (what :func:`load_arrays` checks).

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x.npz"
    >>> save_arrays(p, {"w": np.arange(3.0)}, {"seed": 1})
    >>> arrays, meta = load_arrays(p)
    >>> arrays["w"].tolist(), meta["seed"]
    ([0.0, 1.0, 2.0], 1)
    """
    path = Path(path)
    if _META in arrays:
        raise ValueError(f"{_META!r} is reserved")
    full_meta = {**meta, "sha256": array_digest(arrays)}
    _clear(path)
    with replacing(path) as tmp, open(tmp, "wb") as fh:  # an open file: np.savez would add .npz to a name
        np.savez(fh, **arrays, **{_META: np.array(json.dumps(full_meta, sort_keys=True))})


def load_arrays(path: Path, expect: dict | None = None) -> tuple[dict, dict]:
    """Read a file written by :func:`save_arrays` and verify it.

    Parameters
    ----------
    path : Path
    expect : dict, optional
        Entries the stored meta must equal (the configuration, the seed, the code version).

    Returns
    -------
    arrays : dict of ndarray
    meta : dict

    Raises
    ------
    FileNotFoundError
        If there is no file.
    CacheError
        If the file is unreadable, truncated, altered, or describes another run.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x.npz"
    >>> save_arrays(p, {"w": np.arange(3.0)}, {"seed": 1})
    >>> load_arrays(p, expect={"seed": 1})[0]["w"].tolist()
    [0.0, 1.0, 2.0]
    >>> load_arrays(p, expect={"seed": 2})
    Traceback (most recent call last):
    ...
    poskernels.model.cache.CacheError: x.npz: stored seed differs from the requested one
    """
    path = Path(path)
    blob = read_regular(path)
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, RuntimeError, MemoryError) as err:
        raise CacheError(f"{path.name}: unreadable ({type(err).__name__}: {err})") from None
    if _META not in arrays:
        raise CacheError(f"{path.name}: no {_META} entry")
    try:
        meta = json.loads(str(arrays.pop(_META)))
    except (ValueError, RecursionError) as err:
        raise CacheError(f"{path.name}: bad {_META} ({type(err).__name__})") from None
    if not isinstance(meta, dict):
        raise CacheError(f"{path.name}: {_META} is a JSON {type(meta).__name__}, not an object")
    if meta.get("sha256") != array_digest(arrays):
        raise CacheError(f"{path.name}: the arrays do not match their stored SHA-256")
    for k, v in (expect or {}).items():
        if meta.get(k) != v:
            raise CacheError(f"{path.name}: stored {k} differs from the requested one")
    return arrays, meta


#: Largest cache file read (a head is kilobytes, a result megabytes): a bigger one is not ours and is not read.
MAX_CACHE_BYTES = 2**30


def read_regular(path: Path) -> bytes:
    """The bytes of the cache file at ``path``, which must be a regular file (or a symlink to one).

    A FIFO, a device or a folder at a cache path is a :class:`CacheError`, found without reading from it: the file
    is opened non-blocking (opening a FIFO with no writer would wait forever) and checked on the open descriptor,
    so nothing swapped in between the check and the read is trusted.

    Parameters
    ----------
    path : Path
        The cache file.

    Returns
    -------
    bytes
        Its contents.

    Raises
    ------
    FileNotFoundError
        If nothing is at ``path``.
    CacheError
        If what is there is not a regular file, is larger than :data:`MAX_CACHE_BYTES`, or cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> os.mkfifo(d / "x.npz")
    >>> read_regular(d / "x.npz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.model.cache.CacheError: x.npz: not a regular file (a FIFO); a cache entry is a file ...
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileNotFoundError(path) from None
    except OSError as err:
        raise CacheError(f"{path.name}: cannot be opened ({err.strerror or err})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a file")
            raise CacheError(f"{path.name}: not a regular file ({kind}); a cache entry is a file this library wrote")
        if info.st_size > MAX_CACHE_BYTES:
            raise CacheError(f"{path.name}: {info.st_size} bytes, past {MAX_CACHE_BYTES}; not a cache entry of ours")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    except OSError as err:
        raise CacheError(f"{path.name}: unreadable ({err.strerror or err})") from None
    finally:
        os.close(fd)


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFDIR: "a folder",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def discard(path: Path) -> None:
    """Remove an untrusted cache entry so it is rebuilt: a file (or FIFO, link) is unlinked, a folder moved aside.

    Parameters
    ----------
    path : Path
        The entry (nothing there is no error).

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "x.npz").write_bytes(b"not an npz")
    >>> (d / "y.npz").mkdir()
    >>> discard(d / "x.npz"); discard(d / "y.npz"); discard(d / "absent.npz")
    >>> sorted(p.name.split("-")[0] for p in d.iterdir())  # the folder is renamed, not deleted
    ['y.npz.not']
    """
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        _clear(path)
    else:
        path.unlink(missing_ok=True)


def _clear(path: Path) -> None:
    """Move aside a folder (or other non-file) that sits where a cache file goes, so the rebuilt entry can be written.

    It is renamed, not deleted (``<name>.not-a-cache-file-<random>``): what it holds is not ours to remove.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        path.rename(path.with_name(f"{path.name}.not-a-cache-file-{secrets.token_hex(4)}"))


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
    poskernels.model.cache.CacheError: r.json: the data do not match their stored SHA-256
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
