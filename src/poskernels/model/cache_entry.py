"""One entry of the cache on disk, and when it is not trusted.

A :class:`CacheError` is an entry that exists but cannot be trusted (truncated, corrupt, stale, foreign): the caller
logs it and rebuilds.  Entries are read only if they are regular files (:func:`read_regular`): a FIFO or a device
where an entry should be is refused, not waited on, and moved out of the way (:func:`discard`) like any other
untrusted entry; a folder where a file goes is renamed aside, never deleted.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "CacheError",
    "MAX_CACHE_BYTES",
    "discard",
    "read_regular",
]


class CacheError(Exception):
    """A cache file that exists but cannot be trusted (internal; callers log it and rebuild)."""


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
    poskernels.model.cache_entry.CacheError: x.npz: not a regular file (a FIFO); a cache entry is a file ...
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
