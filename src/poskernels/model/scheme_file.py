"""A positional scheme from a user's file: load it, register it, and know it by the digest of its source.

A scheme file is a Python file that defines one or more subclasses of :class:`poskernels.encodings.Scheme` (see
``examples/gaussian_bias.py`` and ``docs/guide/your_own_scheme.md``).  :func:`load_scheme_file` imports it under
a module name of its own and registers each class with :func:`poskernels.encodings.register_scheme`; from then on
every part of the library reads the scheme by its name.  A file that cannot be read, raises while it is imported,
defines no scheme, or defines one that is refused gives one :class:`~poskernels.errors.PosKernelsError` naming the
file, the class and the problem; nothing is registered from a file that fails.

The cache of trained heads keys an outside scheme's heads by the SHA-256 of its class's source
(:func:`scheme_digest`), so an edited file never reads a head trained by its older version.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path

from ..encodings import SCHEMES, Scheme, register_scheme
from ..encodings.registry import BUILT_IN
from ..errors import PosKernelsError

__all__ = ["load_scheme_file", "load_scheme_files", "scheme_digest"]

_LOADED: dict[str, list[str]] = {}  # resolved path -> the names of the schemes its last load registered


def load_scheme_file(path) -> list[str]:
    """Import the scheme file ``path`` and register every :class:`Scheme` subclass it defines; their names.

    Loading the same file again registers nothing new (a process-pool or Dask worker may load it once per job).

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
    p = Path(path)
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
                names.append(register_scheme(cls).name)
            except PosKernelsError as err:
                raise PosKernelsError(f"{where}: class {cls.__name__}: {err}") from None
    except PosKernelsError:
        SCHEMES.clear()  # nothing registered from a file that fails
        SCHEMES.update(before)
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
    except Exception as err:  # noqa: BLE001 - whatever the file raises, one line naming it
        del sys.modules[module_name]
        line = _line_of(err, resolved)
        raise PosKernelsError(f"{where}{line}: raised {type(err).__name__} while loading: {err}") from None
    return module


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


def load_scheme_files(paths) -> list[str]:
    """:func:`load_scheme_file` of each path, in order; every scheme name registered."""
    return [name for path in paths for name in load_scheme_file(path)]


def scheme_digest(name: str) -> str | None:
    """SHA-256 of an outside scheme's class source (None for a built-in scheme, whose code is the library's).

    >>> scheme_digest("rope") is None
    True
    """
    if name in BUILT_IN or name not in SCHEMES:
        return None
    cls = type(SCHEMES[name])
    try:
        text = inspect.getsource(cls)
    except (OSError, TypeError):  # a class defined where its source cannot be read (a factory's, encodings.ssmax):
        text = f"{cls.__module__}.{cls.__qualname__}"  # its qualified name, and the source of every base it has
        for base in cls.__mro__[1:]:
            try:
                text += inspect.getsource(base)
            except (OSError, TypeError):
                continue
    return hashlib.sha256(text.encode()).hexdigest()
