"""A positional scheme from a user's file: load it, register it, and know it by the digest of its source.

A scheme file is a Python file that defines one or more subclasses of :class:`poskernels.encodings.Scheme` (see
``examples/gaussian_bias.py`` and ``docs/guide/your_own_scheme.md``).  :func:`load_scheme_file` imports it under
a module name of its own and registers each class with :func:`poskernels.encodings.register_scheme`; from then on
every part of the library reads the scheme by its name.  A file that cannot be read, raises while it is imported,
defines no scheme, or defines one that is refused gives one :class:`~poskernels.errors.PosKernelsError` naming the
file, the class and the problem; nothing is registered from a file that fails.

The cache of trained heads and a sweep's store key an outside scheme's results by the digest of its source and of
its outputs (:func:`~poskernels.model.scheme_identity.scheme_digest`), so an edited file never reads a result of its
older version.  A file that raises, or exits (``sys.exit``), while it is imported is refused as a file that failed to
load, and a setting named like a field of the head, the trainer or a sweep (:data:`RESERVED`) is refused.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

from ..encodings import SCHEMES, Scheme, register_scheme
from ..errors import PosKernelsError
from .config import HeadConfig, TrainConfig

__all__ = [
    "RESERVED",
    "blamed",
    "file_of",
    "load_scheme_file",
    "load_scheme_files",
]

_LOADED: dict[str, list[str]] = {}  # resolved path -> the names of the schemes its last load registered


def load_scheme_file(path) -> list[str]:
    """Import the scheme file ``path`` and register every :class:`Scheme` subclass it defines; their names.

    Loading the same file again registers nothing new (a process-pool or Dask worker may load it once per job).

    Parameters
    ----------
    path : str or PathLike
        A Python file defining one or more :class:`~poskernels.encodings.Scheme` subclasses.

    Returns
    -------
    list of str
        The names of the schemes it registered.

    Raises
    ------
    PosKernelsError
        If the file cannot be read or imported, defines no scheme, or a scheme in it is refused (one line naming
        the file, the class and why).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "broken.py"
    >>> _ = f.write_text("from poskernels.encodings import Scheme\\nclass Half(Scheme):\\n    name = 'half'\\n")
    >>> load_scheme_file(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme file .../broken.py: class Half: scheme 'half' needs a title ...
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise PosKernelsError(f"a scheme file is a path (text or os.PathLike) to a Python file; got "
                              f"{type(path).__name__} {str(path)[:80]!r}")  # fmt: skip
    p = Path(path)
    if str(p) in ("", ".") or "\x00" in str(p):
        raise PosKernelsError(f"a scheme file is a path to a Python file; got {str(path)!r}")
    where = f"scheme file {p}"
    try:
        resolved = str(p.resolve(strict=True))
        if not p.is_file():
            raise PosKernelsError(f"{where}: not a regular file")
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PosKernelsError(f"{where}: cannot be read ({type(err).__name__}: {err})") from None
    module_name = "poskernels_scheme_file_" + hashlib.sha256(resolved.encode()).hexdigest()[:16]
    loaded = sys.modules.get(module_name)
    if getattr(loaded, "__source__", None) == source and all(n in SCHEMES for n in _LOADED.get(resolved, [None])):
        return list(_LOADED[resolved])
    module = _import(where, module_name, resolved, source)
    replaced = {n: SCHEMES.pop(n) for n in _LOADED.get(resolved, []) if n in SCHEMES}  # the file's older version
    classes = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Scheme) and obj is not Scheme and obj.__module__ == module_name
    ]
    if not classes:
        raise PosKernelsError(f"{where}: defines no subclass of poskernels.encodings.Scheme")
    names = []
    before = dict(SCHEMES)
    try:
        for cls in classes:
            try:
                _check_setting_names(cls)
                names.append(register_scheme(cls).name)
            except PosKernelsError as err:
                raise PosKernelsError(f"{where}: class {cls.__name__}: {err}") from None
    except PosKernelsError:
        SCHEMES.clear()  # nothing registered from a file that fails (its older version, if any, kept)
        SCHEMES.update(before)
        SCHEMES.update(replaced)
        raise
    _LOADED[resolved] = names
    return names


def _import(where: str, module_name: str, resolved: str, source: str):
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise PosKernelsError(f"{where}: not a Python file Python can import")
    module = importlib.util.module_from_spec(spec)
    module.__source__ = source
    sys.modules[module_name] = module  # inspect.getsource finds the classes through it
    try:
        code = compile(source, resolved, "exec")
        exec(code, module.__dict__)  # noqa: S102 - the user's own scheme file, asked for by name
    except PosKernelsError as err:  # a class refused when it is defined (Scheme.__init_subclass__)
        del sys.modules[module_name]
        raise PosKernelsError(f"{where}: {_class_of(err, source)}{err}") from None
    except SyntaxError as err:
        del sys.modules[module_name]
        raise PosKernelsError(f"{where}, line {err.lineno}: not valid Python ({err.msg})") from None
    except (Exception, SystemExit) as err:  # noqa: BLE001 - whatever the file raises (an exit too), one line
        del sys.modules[module_name]
        line = _line_of(err, resolved)
        if isinstance(err, SystemExit):
            raise PosKernelsError(
                f"{where}{line}: failed to load: it called sys.exit({err.code!r}) (raised "
                "SystemExit) while it was imported; a scheme file only defines classes"
            ) from None
        raise PosKernelsError(f"{where}{line}: raised {type(err).__name__} while loading: {err}") from None
    return module


#: Names no scheme setting may take: every attribute of the head's configuration, every field of the trainer's,
#: the seed and the sweep's own keys, and the configuration keys the census reads under the head's names.  A
#: setting is an attribute of :class:`~poskernels.model.config.HeadConfig` and a column of a sweep, so one of these
#: would shadow, or be shadowed by, the field of that name without a word.
RESERVED = frozenset(
    {f.name for f in fields(HeadConfig)}
    | {k for k in dir(HeadConfig) if not k.startswith("_")}
    | {f.name for f in fields(TrainConfig)}
    | {"seed", "seeds", "first_seed", "preset", "scheme_file", "task", "test_lengths", "test_size", "test_seed",
       "test_task", "extension", "reading", "params", "cfg", "n", "t", "q", "r", "rope_theta", "rope_scaling",
       "rope_type", "head_dim", "max_position_embeddings", "sliding_window", "hidden_size", "num_attention_heads"}
)  # fmt: skip


def _check_setting_names(cls) -> None:
    """Refuse a setting named like a field of the head, the trainer or a sweep (:data:`RESERVED`)."""
    for key in getattr(cls, "settings", {}) or {}:
        if key in RESERVED:
            raise PosKernelsError(
                f"setting {key!r} is named like a field of the head, the trainer or a sweep ({key!r} is theirs: it "
                "would shadow it or be shadowed by it); give it a name of the scheme's own, such as "
                f"'{cls.name}_{key}'"
            )


def _class_of(err: PosKernelsError, source: str) -> str:
    """``"class Name: "`` for the class an error of :func:`poskernels.encodings.scheme._check` is about."""
    import re

    m = re.search(r"for class (\w+)", str(err)) or re.search(r"scheme '(\w+)'", str(err))
    if m is None:
        return ""
    for c in re.finditer(r"^class (\w+)\b.*?(?=^class |\Z)", source, re.S | re.M):
        if m.group(1) == c.group(1) or re.search(rf"name\b[^\n]*=[^\n]*['\"]{m.group(1)}['\"]", c.group(0)):
            return f"class {c.group(1)}: "
    return ""


def _line_of(err: BaseException, resolved: str) -> str:
    tb = err.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == resolved:
            line = tb.tb_lineno
        tb = tb.tb_next
    return "" if line is None else f", line {line}"


def file_of(name: str) -> str | None:
    """The scheme file ``name`` was loaded from (None for a scheme not loaded from a file).

    Parameters
    ----------
    name : str
        A scheme's name.

    Returns
    -------
    str or None
        The file's resolved path.

    Examples
    --------
    >>> file_of("rope") is None
    True
    """
    for path, names in _LOADED.items():
        if name in names:
            return path
    return None


@contextmanager
def blamed(name: str, doing: str = "training"):
    """Run the block; what a scheme loaded from a file raises in it (an exit too) becomes one
    :class:`PosKernelsError` naming the scheme, its file and what it raised.

    Parameters
    ----------
    name : str
        The scheme whose hooks run in the block.
    doing : str
        What the block does, for the message (``"training"``).

    Yields
    ------
    None

    Raises
    ------
    PosKernelsError
        What a scheme loaded from a file raised in the block, as one line naming the scheme and its file.

    Examples
    --------
    >>> with blamed("rope"):  # a built-in scheme's error is the library's own already
    ...     pass
    >>> with blamed("rope"):  # and passes through as it is
    ...     raise ValueError("a bug of the library's own")
    Traceback (most recent call last):
    ...
    ValueError: a bug of the library's own
    """
    try:
        yield
    except PosKernelsError:
        raise
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the user's hook failed: say whose
        path = file_of(name)
        if path is None:
            raise
        line = _line_of(err, path)
        raise PosKernelsError(
            f"scheme {name!r} (scheme file {path}{line}) raised {type(err).__name__} while {doing}: {err}"
        ) from err


def load_scheme_files(paths) -> list[str]:
    """:func:`load_scheme_file` of each path, in order; every scheme name registered.

    Parameters
    ----------
    paths : iterable of str or PathLike
        Scheme files.

    Returns
    -------
    list of str
        The names registered, file after file.

    Raises
    ------
    PosKernelsError
        As :func:`load_scheme_file`, for the first file refused.

    Examples
    --------
    >>> load_scheme_files([])
    []
    >>> load_scheme_files(["no-such-scheme-file.py"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme file no-such-scheme-file.py: cannot be read (FileNotFoundError: ...)
    """
    return [name for path in paths for name in load_scheme_file(path)]
