"""A head's arrays on disk: ``.npz`` without pickle, with its metadata and the SHA-256 of every array.

A file holds the arrays, its loss curve and one string entry, ``__meta__``: JSON with the configuration, the seed,
:data:`~poskernels.model.cache.CODE_VERSION` and the arrays' digest.  Reading checks all of it, so a truncated,
corrupt or stale file is a :class:`~poskernels.model.cache_entry.CacheError` and never trusted (the caller
retrains).  Writes go through :mod:`poskernels.atomic` (a temporary file and :func:`os.replace`), so no reader sees
half a file.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from ..atomic import replacing
from .cache_entry import CacheError, _clear, read_regular

__all__ = [
    "array_digest",
    "load_arrays",
    "save_arrays",
]

_META = "__meta__"


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
    poskernels.model.cache_entry.CacheError: x.npz: stored seed differs from the requested one
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
