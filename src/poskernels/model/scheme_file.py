"""A positional scheme from a user's file: load it, register it, and know it by the digest of its source.

A scheme file is a Python file that defines one or more subclasses of :class:`poskernels.encodings.Scheme` (see
``examples/gaussian_bias.py`` and ``docs/guide/your_own_scheme.md``).  :func:`load_scheme_file` imports it under
a module name of its own and registers each class with :func:`poskernels.encodings.register_scheme`; from then on
every part of the library reads the scheme by its name.  A file that cannot be read, raises while it is imported,
defines no scheme, or defines one that is refused gives one :class:`~poskernels.errors.PosKernelsError` naming the
file, the class and the problem; nothing is registered from a file that fails.

The cache of trained heads and a sweep's store key an outside scheme's results by :func:`scheme_digest`: the
SHA-256 of its whole file, of the files it imports from outside the package, and of its outputs at fixed inputs,
so an edited file (a module constant a hook reads, a helper beside it) never reads a result of its older version.
A file that raises, or exits (``sys.exit``), while it is imported is refused as a file that failed to load, and a
setting named like a field of the head, the trainer or a sweep (:data:`RESERVED`) is refused.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

from ..encodings import SCHEMES, Scheme, register_scheme
from ..encodings.registry import BUILT_IN
from ..errors import PosKernelsError
from .config import HeadConfig, TrainConfig

__all__ = [
    "RESERVED",
    "blamed",
    "file_of",
    "load_scheme_file",
    "load_scheme_files",
    "scheme_digest",
    "scheme_signature",
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


def scheme_digest(name: str) -> str | None:
    """SHA-256 of everything an outside scheme computes with (None for a built-in scheme, whose code is the library's).

    Three parts, so that no edit serves a head trained before it: the whole source of the file that defines the
    class (a module constant a hook reads, a helper function, not only the class body), the source of every module
    it imports from outside the package, the standard library and the installed packages (a helper file beside it),
    followed transitively, and :func:`scheme_signature`, the scheme's outputs computed at fixed inputs (what it reads
    from a data file or the environment while it runs).

    Parameters
    ----------
    name : str
        A scheme's name.

    Returns
    -------
    str or None
        The hexadecimal digest, or None for a built-in scheme (or a name not registered).

    Examples
    --------
    >>> scheme_digest("rope") is None
    True
    """
    if name in BUILT_IN or name not in SCHEMES:
        return None
    cls = type(SCHEMES[name])
    h = hashlib.sha256()
    for text in (_class_text(cls), *_module_texts(cls), scheme_signature(name)):
        h.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    return h.hexdigest()


def _class_text(cls) -> str:
    try:
        return inspect.getsource(cls)
    except (OSError, TypeError):  # a class defined where its source cannot be read (a factory's, encodings.ssmax):
        text = f"{cls.__module__}.{cls.__qualname__}"  # its qualified name, and the source of every base it has
        for base in cls.__mro__[1:]:
            try:
                text += inspect.getsource(base)
            except (OSError, TypeError):
                continue
        return text


def _outside(module) -> bool:
    """Whether ``module`` is a user's file: neither this package, nor the standard library, nor an installed one."""
    import sysconfig

    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or getattr(module, "__name__", "").startswith("poskernels."):
        return isinstance(getattr(module, "__source__", None), str)  # a scheme file loaded here
    resolved = os.path.realpath(path)
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # the package itself
    return not any(resolved.startswith(os.path.realpath(r) + os.sep) for r in roots)


def _module_texts(cls) -> list[str]:
    """The source of the module defining ``cls`` and of every outside module it reaches through its names."""
    seen: dict[str, str] = {}
    todo = [m for c in cls.__mro__ if (m := sys.modules.get(c.__module__)) is not None and _outside(m)]
    while todo and len(seen) < 256:
        module = todo.pop()
        if module.__name__ in seen:
            continue
        text = getattr(module, "__source__", None)
        if not isinstance(text, str):
            try:
                text = inspect.getsource(module)
            except (OSError, TypeError):
                text = module.__name__
        seen[module.__name__] = text
        for value in list(vars(module).values()):
            try:
                owner = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
            except Exception:  # noqa: BLE001 - an object that refuses to be asked: not a module of the user's
                continue
            other = sys.modules.get(owner) if isinstance(owner, str) else None
            if other is not None and other.__name__ not in seen and _outside(other):
                todo.append(other)
    return [f"{k}\n{v}" for k, v in sorted(seen.items())]


def scheme_signature(name: str) -> str:
    """The scheme's outputs at fixed inputs, as text: its parameters, bias, code, frequencies, logit scale and
    promises, on a small head at its default settings (a hook that raises is signed by what it raised).

    Parameters
    ----------
    name : str
        A registered scheme's name.

    Returns
    -------
    str
        One line per output, ``name=value``: an array as its dtype, shape and the SHA-256 of its bytes.

    Examples
    --------
    >>> [line.split(":")[0] for line in scheme_signature("alibi").splitlines()]
    ['bias=float64(1024,)', 'code=None', 'transform=None', 'scale=float64(3,)', 'far_past=None',
     'linear_slope=0.5', 'tail_bound=None']
    >>> scheme_signature("alibi") == scheme_signature("alibi"), scheme_signature("alibi") == scheme_signature("t5")
    (True, False)
    """
    import numpy as np

    from .head import init_params
    from .reading import PLAIN

    scheme = SCHEMES[name]
    parts = []

    def sign(label, compute):
        try:
            value = compute()
            if value is None or isinstance(value, (int, float, str)):
                parts.append(f"{label}={value!r}")
            elif isinstance(value, dict):
                for k in sorted(value):
                    sign(f"{label}.{k}", lambda k=k: value[k])
            else:
                a = np.ascontiguousarray(np.asarray(value))
                parts.append(f"{label}={a.dtype}{a.shape}:{hashlib.sha256(a.tobytes()).hexdigest()}")
        except (Exception, SystemExit) as err:  # noqa: BLE001 - what a hook raises (or exits) is part of what it computes
            parts.append(f"{label} raised {type(err).__name__}: {err}")

    try:
        cfg = HeadConfig(scheme=name, d=8, vocab=9, n_classes=4, n_train=16)
        params = init_params(cfg, np.random.default_rng(0))
    except (Exception, SystemExit) as err:  # noqa: BLE001 - a scheme that cannot make a head is signed by why
        return f"no head: {type(err).__name__}: {err}"
    own = {k: params[k][None] for k in scheme.init(cfg, np.random.default_rng(0))}
    n = 1024 if scheme.defined_everywhere else cfg.n_train
    pos = np.arange(float(n))
    q = np.random.default_rng(1).normal(size=(1, 2, cfg.d))
    sign("init", lambda: own)
    sign("bias", lambda: scheme.bias_at(own, cfg, q, pos[-1] - pos, pos[-1]))
    sign("code", lambda: scheme.code(own, cfg, pos))
    sign("transform", lambda: scheme.transform(cfg, PLAIN))
    sign("scale", lambda: [scheme.logit_scale_at(own, cfg, PLAIN, k) for k in (1, 10, 1000)])
    sign("far_past", lambda: scheme.far_past(cfg))
    sign("linear_slope", lambda: scheme.linear_slope(cfg))
    sign("tail_bound", lambda: None if (b := scheme.tail_bound(params, cfg)) is None else [b(0.0, 10), b(1.0, 100)])
    return "\n".join(parts)
