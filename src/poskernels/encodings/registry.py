"""The registry of the ways of adding position: one entry per scheme, metadata and behaviour in a head.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the head, the readers, the
experiments, the page and the laboratory loop over one registry.  An entry is a subclass of
:class:`~poskernels.encodings.scheme.Scheme`: all that is known of the scheme, and its hooks in a head, each forward
followed by its hand-written backward.  :func:`register_scheme` adds one from outside the package.

>>> [name for name, s in SCHEMES.items() if s.in_article]
['nope', 'sinusoidal', 'learned', 'rope', 'alibi']
>>> SCHEMES["t5"].where, SCHEMES["t5"].title, SCHEMES["rope"].rotary
('score', 'T5 buckets', True)
"""

from __future__ import annotations

import inspect

from ..errors import PosKernelsError, check_name
from .article_schemes import T5, Alibi, Learned, NoPosition, Rope, Shaw, Sinusoidal
from .fire import Fire, FireC1
from .kerple import KerpleLog, KerplePower
from .rotary_variants import PartialRotary, PRope, XPos, XPosRescaled
from .scheme import Scheme
from .setting import Setting
from .variants import randomized, ssmax

__all__ = ["BUILT_IN", "SCHEMES", "get_scheme", "register_scheme", "scheme_settings"]


#: The one registry of position schemes, by name, in the article's order (its tournament's rows, then beyond, then
#: any registered from outside the package by :func:`register_scheme`).
SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        *(NoPosition(), Sinusoidal(), Learned(), Rope(), Alibi()),  # the article's
        *(T5(), Shaw(), KerpleLog(), KerplePower(), Fire()),  # beyond it
        *(XPos(), PRope(), PartialRotary()),  # the rotary variants (encodings/rotary_variants.py)
        *(ssmax(NoPosition, colour="#aaaaaa")(), ssmax(Rope, colour="#88ccee")()),  # the scaled softmax
        *(randomized(Sinusoidal, colour="#d55e00")(), randomized(Rope, colour="#aa4499")()),  # randomized positions
        *(XPosRescaled(), FireC1()),  # named variants of a paper's constant (docs/guide/beyond.md)
    )
}
#: The names of the schemes the library ships (a scheme registered from outside needs another).
BUILT_IN = frozenset(SCHEMES)


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name in :data:`SCHEMES`.

    Parameters
    ----------
    name : str
        A registered scheme's name.

    Returns
    -------
    Scheme
        The registered instance.

    Raises
    ------
    PosKernelsError
        If no scheme has that name (the message lists the names accepted, and the closest one).

    Examples
    --------
    >>> get_scheme("alibi").relative
    True
    >>> get_scheme("bogus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'bogus'; accepted: alibi, fire, fire_c1, ..., xpos, xpos_rescaled
    """
    return SCHEMES[check_name("scheme", name, SCHEMES)]


def scheme_settings() -> dict[str, Setting]:
    """Every registered scheme's settings by name, in registry order (each name once: schemes may share one).

    Returns
    -------
    dict of str to Setting
        The settings a head's configuration may carry, by name.

    Examples
    --------
    >>> list(scheme_settings())  # doctest: +NORMALIZE_WHITESPACE
    ['alibi_slope', 't5_buckets', 't5_max_distance', 'shaw_clip', 'xpos_scale_base', 'xpos_gamma', 'prope_p',
     'partial_rotary_factor', 'random_positions']
    """
    out: dict[str, Setting] = {}
    for scheme in SCHEMES.values():
        for key, setting in scheme.settings.items():
            out.setdefault(key, setting)
    return out


def register_scheme(scheme: type[Scheme] | Scheme) -> Scheme:
    """Add a scheme to :data:`SCHEMES`: a :class:`Scheme` subclass (or an instance of one) from any file.

    From then on the head trains it, the tournament, the long-context reading, a sweep and the laboratory's
    curves read it by its name.  Registering the same class again is a no-op (a worker that loads the same file
    twice); a built-in name, another class under a registered name, or a setting that another scheme declares
    with another default is refused.

    Parameters
    ----------
    scheme : Scheme subclass or Scheme
        The scheme to register.

    Returns
    -------
    Scheme
        The registered instance.

    Raises
    ------
    PosKernelsError
        If `scheme` is not a Scheme subclass or instance, takes a built-in name or another class's name, or declares
        a setting another scheme declares with another default.

    Examples
    --------
    >>> class Gauss(Scheme):
    ...     name, title, article, where = "gauss_doc", "Gaussian bias", "none", "score"
    ...     def bias(self, params, cfg, q, r):
    ...         return -0.5 * (r / 8.0) ** 2
    ...     def bias_backward(self, dz, params, cfg, q, r):
    ...         return None, {}
    >>> register_scheme(Gauss).name in SCHEMES
    True
    >>> del SCHEMES["gauss_doc"]  # (a doctest leaves the registry as it found it)
    >>> register_scheme(Rope)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme 'rope' is built in; a scheme from outside needs a name of its own
    """
    cls = scheme if isinstance(scheme, type) else type(scheme)
    if not (isinstance(cls, type) and issubclass(cls, Scheme)) or cls is Scheme:
        raise PosKernelsError(f"register_scheme takes a Scheme subclass or an instance of one; got {scheme!r}")
    name = cls.name
    if name in BUILT_IN:
        raise PosKernelsError(f"scheme {name!r} is built in; a scheme from outside needs a name of its own")
    old = SCHEMES.get(name)
    if old is not None:
        if _same_class(type(old), cls):
            return old
        raise PosKernelsError(
            f"scheme {name!r} is already registered from {type(old).__module__}.{type(old).__qualname__}; "
            f"got another class {cls.__module__}.{cls.__qualname__}"
        )
    known = scheme_settings()
    for key, setting in cls.settings.items():
        if key in known and known[key] != setting:
            raise PosKernelsError(
                f"scheme {name!r}: setting {key!r} is declared by another scheme as {known[key]}; a shared setting "
                f"needs the same default and range, got {setting}"
            )
    if key_clash := [k for k in cls.settings if k in _HEAD_FIELDS]:
        raise PosKernelsError(f"scheme {name!r}: setting {key_clash[0]!r} is a field of every head; name it otherwise")
    instance = scheme if isinstance(scheme, Scheme) else cls()
    SCHEMES[name] = instance
    return instance


#: The fields every head has (:class:`poskernels.model.config.HeadConfig`): no scheme setting may take one's name.
_HEAD_FIELDS = frozenset({"scheme", "d", "vocab", "embedding", "n_classes", "n_train", "base", "embed_scale",
                          "map_scale", "settings"})  # fmt: skip


def _same_class(a: type, b: type) -> bool:
    """The same class, or the same file's class loaded again (same module name, qualified name and source)."""
    if a is b:
        return True
    if (a.__module__, a.__qualname__) != (b.__module__, b.__qualname__):
        return False
    try:
        return inspect.getsource(a) == inspect.getsource(b)
    except (OSError, TypeError):
        return False
