"""What an outside scheme computes with, as one digest: the key its trained heads and sweep rows are stored under.

The cache of trained heads and a sweep's store key an outside scheme's results by :func:`scheme_digest`: the
SHA-256 of its whole file, of the files it imports from outside the package, and of its outputs at fixed inputs
(:func:`scheme_signature`), so an edited file (a module constant a hook reads, a helper beside it) never reads a
result of its older version.  A built-in scheme has none: its code is the library's, keyed by
:data:`~poskernels.model.cache.CODE_VERSION`.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys

from ..encodings import SCHEMES
from ..encodings.registry import BUILT_IN
from .config import HeadConfig

__all__ = ["scheme_digest", "scheme_signature"]


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
