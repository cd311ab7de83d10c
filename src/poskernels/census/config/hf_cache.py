"""What was read from the installed transformers, kept on disk: a census reads it without importing transformers.

Reading a family's class defaults builds its config class (which imports torch) and its modeling module (for the
attention's logit scale): seconds per command.  What is read depends only on the installed transformers and on
this package's reader, so it is kept in one JSON file per pair,
``<cache>/hf_read/transformers-<version>-<digest>.json`` (``<cache>``: ``$POSKERNELS_CACHE``, else
``.cache/poskernels`` in the current directory, the trained heads' cache; ``<digest>``: of the reader's source,
:mod:`~poskernels.census.config.defaults`, :mod:`~poskernels.census.config.probes` and this module), and read back by
every later command.  The version is read from the package's metadata, without importing it.  The cache is a
saving, never a source of truth: a file that cannot be read or written is ignored (the value is computed again),
and a value is written through :func:`poskernels.atomic.write_json_atomic`.

>>> memo("doctest", "two", lambda: 1 + 1, root=None)
2
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

__all__ = ["cache_file", "memo", "transformers_version"]

#: Values read in this process, by cache file (a command reads the file once).
_LOADED: dict[str, dict] = {}


def transformers_version() -> str | None:
    """The installed transformers' version, from its metadata (None: not installed); imports nothing.

    Returns
    -------
    str or None
        The version.

    Examples
    --------
    >>> v = transformers_version()
    >>> v is None or isinstance(v, str)
    True
    """
    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def _digest() -> str:
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in ("defaults.py", "probes.py", "hf_cache.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:12]


def _root() -> Path:
    return Path(os.environ.get("POSKERNELS_CACHE") or ".cache/poskernels")


def cache_file(root: Path | None = None) -> Path | None:
    """The cache file for the installed transformers (None without transformers).

    Parameters
    ----------
    root : Path, optional
        The cache folder; ``$POSKERNELS_CACHE``, else ``.cache/poskernels``, by default.

    Returns
    -------
    Path or None
        ``<root>/hf_read/transformers-<version>-<digest>.json`` (which may not exist yet).

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> path = cache_file(root)
    >>> path is None or (path.parent == root / "hf_read" and path.name.startswith("transformers-"))
    True
    """
    version = transformers_version()
    if version is None:
        return None
    return (root or _root()) / "hf_read" / f"transformers-{version}-{_digest()}.json"


def _load(path: Path) -> dict:
    key = str(path)
    if key not in _LOADED:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            _LOADED[key] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):  # absent, unreadable or damaged: computed again
            _LOADED[key] = {}
    return _LOADED[key]


def memo(kind: str, key: str, compute, root: Path | None | bool = False):
    """``compute()`` read once per installed transformers: the stored value when there is one, else computed and kept.

    ``kind`` names the table (``defaults``, ``layer_types``, ``refused``), ``key`` the entry (a string); the value
    must be JSON.  ``root=None`` keeps nothing on disk (computed each time); ``root=False``: the default cache.

    Parameters
    ----------
    kind : str
        The table.
    key : str
        The entry.
    compute : callable
        ``compute() -> value``, JSON-ready.
    root : Path, None or False
        The cache folder, None for none, False for the default.

    Returns
    -------
    object
        The stored or computed value.

    Examples
    --------
    >>> import tempfile
    >>> root, calls = Path(tempfile.mkdtemp()), []
    >>> memo("doctest", "k", lambda: calls.append(1) or 3, root=root)
    3
    >>> memo("doctest", "k", lambda: calls.append(1) or 4, root=root), len(calls)  # read back, not computed
    (3, 1)
    """
    if root is None:
        return compute()
    path = cache_file(None if root is False else Path(root))
    if path is None:
        return compute()
    data = _load(path)
    table = data.setdefault(kind, {})
    if key in table:
        return table[key]
    value = compute()
    table[key] = value
    try:
        from ...atomic import write_json_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, data)
    except Exception:  # noqa: BLE001 - a cache that cannot be written only costs the next command the time
        pass
    return value
