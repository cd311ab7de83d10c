"""Reading a file's text: its bytes within a limit (a folder, a FIFO, a device refused or read safely), decoded as
UTF-8, and JSON parsed; every failure a :class:`~poskernels.errors.PosKernelsError` naming the file.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from . import PosKernelsError

__all__ = ["decode_text", "parse_json", "read_bytes", "read_text"]


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text of ``data`` (a leading BOM dropped), else raise naming ``name`` and where the bad byte is.

    Configs and grids are UTF-8 (JSON's and TOML's encoding); a UTF-16 or Latin-1 file is refused, not guessed.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    name : str
        The file, for the message.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        If ``data`` is not UTF-8, or holds a NUL byte.

    Examples
    --------
    >>> decode_text("b = 1".encode(), "g.toml")
    'b = 1'
    >>> decode_text("é".encode("latin-1"), "g.toml")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: 'g.toml' is not UTF-8 text (byte 0xe9 at offset 0); save it as UTF-8
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise PosKernelsError(
            f"{name!r} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}){hint}; save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise PosKernelsError(f"{name!r} is not text: it holds a NUL byte at offset {text.index(chr(0))}")
    return text


def parse_json(text: str, where: str) -> Any:
    """The JSON value of ``text``; anything else is a :class:`PosKernelsError` that says where (``where``) and why.

    Refused as well as malformed JSON: an integer of more digits than Python converts (5,000-digit literals) and
    nesting deeper than Python's stack.

    Parameters
    ----------
    text : str
        The JSON text.
    where : str
        Its source, for the message.

    Returns
    -------
    object

    Raises
    ------
    PosKernelsError
        If ``text`` cannot be read as JSON.

    Examples
    --------
    >>> parse_json('{"a": [1, 2]}', "f.json")
    {'a': [1, 2]}
    >>> parse_json('{"a": ', "f.json")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: f.json: not valid JSON (Expecting value at line 1, column 7)
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise PosKernelsError(f"{where}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    except (ValueError, RecursionError) as err:  # a 5,000-digit integer; nesting deeper than Python's stack
        raise PosKernelsError(f"{where}: cannot be read ({type(err).__name__}: {str(err)[:120]})") from None


def read_text(path: str | os.PathLike[str], what: str, limit: int = 64 * 2**20) -> str:
    """The UTF-8 text of the file at ``path`` (``what`` names it in errors), at most ``limit`` bytes.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str
        What it is (``"config"``), for the message.
    limit : int
        The most bytes read.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        On every failure: missing, a folder, unreadable, too large, not UTF-8.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "c.json").write_text("{}")
    >>> read_text(folder / "c.json", "config")
    '{}'
    >>> read_text(folder, "config")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the config '...' is a folder, not a file
    """
    return decode_text(read_bytes(path, what, limit), str(path))


def _read_up_to(fh, most: int, block: int = 2**20) -> bytes:
    """At most ``most`` bytes of ``fh``, read a block at a time: ``fh.read(most)`` would allocate ``most`` bytes
    up front (a gigabyte for a limit of one), whatever the file holds.  At most ``most / block + 1`` reads."""
    chunks, total = [], 0
    while total < most:
        chunk = fh.read(min(block, most - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_bytes(path: str | os.PathLike[str], what: str, limit: int = 64 * 2**20) -> bytes:
    """The bytes of the file at ``path`` (``what`` names it in errors), at most ``limit``; a FIFO never blocks.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str
        What it is (``"config"``), for the message.
    limit : int
        The most bytes read.

    Returns
    -------
    bytes

    Raises
    ------
    PosKernelsError
        On every failure: missing, a folder, unreadable, too large.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.json"
    >>> _ = path.write_text("{}")
    >>> read_bytes(path, "config")
    b'{}'
    >>> read_bytes(path, "config", limit=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the config '.../c.json' is 2 bytes; the limit is 1 bytes
    """
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO no process writes to would wait forever; opened so, it reads as empty (a pipe
        # with a writer, such as the shell's <(...), is read to its end as usual).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise PosKernelsError(f"the {what} {shown!r} is a folder, not a file") from None
    except OSError as err:
        raise PosKernelsError(f"cannot read the {what} {shown!r}: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise PosKernelsError(f"the {what} {shown!r} is a folder, not a file")
        if st.st_size > limit:
            raise PosKernelsError(f"the {what} {shown!r} is {st.st_size} bytes; the limit is {limit} bytes")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = _read_up_to(fh, limit + 1)
    except OSError as err:
        raise PosKernelsError(f"cannot read the {what} {shown!r}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # a pipe or a device has no size to stat: counted as read
        raise PosKernelsError(f"the {what} {shown!r} is more than {limit} bytes; the limit is {limit} bytes")
    return data
