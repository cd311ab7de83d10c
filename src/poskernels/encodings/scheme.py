"""What a scheme is: everything known about one way of adding position, in one class.

One record per scheme, one class: its metadata (title, the article's element, the paper and year that introduced
it, where it acts, relative or not, its fixed kernel over offsets, its colour in the figures), its settings (with
their defaults: the head's configuration and the sweep's grid read them off the class), its parameters and their
initialisation, and its behaviour in a head, each forward with its hand-written backward beside it.
:data:`poskernels.encodings.SCHEMES` holds one instance of each; the head, the readers, the experiments, the page
and the laboratory all loop over it, and :func:`poskernels.encodings.register_scheme` adds one from outside the
package.  A subclass is checked when it is defined, so a scheme whose metadata and behaviour disagree, or whose
forward has no backward, is refused before it can reach a registry.

The head's score (:mod:`poskernels.model.head`) is ``s(t, j) = <phi_t(q), phi_j(k)> * lambda / tau + b(t - j)``
with ``h = T[x] + p(m)``; a scheme fills in its parts, chosen by :attr:`Scheme.where`:

* ``"input"``: an absolute code ``p(m)`` added to the token embedding (Definition 1), hooks ``code`` and
  ``code_backward``: the sinusoidal code (Definition 2) or a learned table.
* ``"rotation"``: the query/key transform ``phi``, hook ``transform``: the per-plane frequencies ``theta``
  (Definition 4) a head turns queries and keys by; a reading (Definition 5's maps) may replace them, and complex
  frequencies ``theta - i gamma`` are a rotation with decay (plane ``p`` of a key ``r`` back weighs
  ``e^{-gamma_p r}``, xPos's form).  Its backward with respect to ``q`` and ``k`` is the inverse turn, written
  once in the head; a transform has no parameters of its own.
* ``"score"``: a term ``b(r)`` added to the logits that depends on the offset ``r = t - j`` (and, for Shaw, on
  the query), hooks ``bias`` and ``bias_backward``: ALiBi's ``-s r``, T5's learned ``beta_bucket(r)``, Shaw's
  ``q a_min(r,K) / tau`` (Definition 3).  A bias that also reads the query's position ``t`` (FIRE's
  normaliser) takes it as a keyword ``t`` of both hooks; the head calls every bias through :meth:`Scheme.bias_at`
  and :meth:`Scheme.bias_backward_at`, which pass ``t`` only to a hook that names it.

Every scheme may also set the logit scale ``lambda`` (hook ``logit_scale``, 1 by default, a reading's scale for
a rotary head).  A scale that grows with the number ``n`` of keys the query sees and has a learned parameter
(Nakanishi 2025's ``s log n``, :func:`poskernels.encodings.ssmax`) names the keywords ``params`` and ``n`` in
``logit_scale`` and writes its backward ``logit_scale_backward(dlam, params, cfg, reading, n)``; the head calls it
through :meth:`Scheme.logit_scale_at`, which passes them only to a hook that names them.  Every scheme says what
the engine may assume of it: ``far_past`` (the offset past which its score no
longer depends on the offset, so the streaming reader counts those keys by token) and ``linear_slope`` (the
slope ``s`` when its bias is exactly ``-s r``, so Theorem 3's certified cut applies).

Shapes: ``positions`` is ``(n,)``.  The query-only path trains a *stack* of ``M`` heads: every parameter has a
leading model axis, it passes the queries of its ``U`` distinct query tokens, ``q`` of shape ``(M, U, d)``, and
offsets ``r`` of shape ``(n,)``, and a bias returns ``(M, U, n)``, ``(M, n)`` or ``(n,)``; a code is ``(n, d)``
or ``(M, n, d)``.  The all-positions path reads one head (no model axis): it passes ``(B, n, d)`` and ``(n, n)``,
and a bias returns ``(B, n, n)`` or ``(n, n)``.  Every hook indexes from the right, so one implementation serves
both.  ``cfg`` is the head's :class:`poskernels.model.config.HeadConfig` (read by attribute only: this layer
does not import the model); a scheme's own settings are attributes of it (``cfg.alibi_slope``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..errors import PosKernelsError
from .setting import Setting, _check_settings

__all__ = ["HOOKS", "WHERE", "Scheme", "default_positions"]

#: Where a scheme acts, and the hooks (forward, backward) it must write there (a transform's backward is the head's).
WHERE: dict[str, tuple[str, str] | None] = {
    "none": None,
    "input": ("code", "code_backward"),
    "rotation": ("transform", ""),
    "score": ("bias", "bias_backward"),
}
#: Every hook a scheme may write, forward then backward.
HOOKS = ("init", "code", "code_backward", "transform", "logit_scale", "logit_scale_backward", "bias", "bias_backward",
         "far_past", "linear_slope", "tail_bound")  # fmt: skip

_COLOUR = re.compile(r"#[0-9a-f]{6}")


class Scheme:
    """One way of adding position: its metadata (class attributes) and its hooks in a head (methods).

    The base class is empty (no position, no parameters); a scheme is a subclass that sets the metadata and
    writes the hooks of the place it acts, each forward with its backward.

    Attributes
    ----------
    name : str
        Registry key.
    title : str
        How the tables, the payload and the figures name it (the article's row label).
    where : str
        ``"none"``, ``"input"`` (added to the embedding), ``"rotation"`` (applied to q and k) or ``"score"``
        (added to the logits): a key of :data:`WHERE`.
    relative : bool
        Whether the score depends on positions only through the offset.
    defined_everywhere : bool
        Whether the code is defined at every position (a learned table is not).
    article : str
        The article element that defines it ("none" when the article does not).
    paper : str
        Who introduced it, as the article cites them ("" for none).
    year : int or None
        The year of that paper.
    in_article : bool
        Whether the article's length tournament trains it (False: beyond the article).
    colour : str
        Its colour in every figure and on the page (``#rrggbb``; the payload carries it).
    settings : dict of str to Setting
        Its settings, by name (attributes of the head's configuration; a sweep's grid may span them).
    offset_kernel : callable or None
        ``r -> value`` for a fixed scheme's kernel over causal offsets ``r >= 0`` (None when learned).
    bias_reads_query : bool
        Whether the bias reads the query vector ``q`` (Shaw's ``q a_min(r, K) / tau``).  False promises a bias of the
        offsets, the query's position and the parameters alone, so a reader may keep one head's bias over
        ``(t, j)`` and read every query off it (:func:`poskernels.model.engine.scores.scores`); True, the default,
        promises nothing.

    Examples
    --------
    A bias with no backward is refused when the class is defined:

    >>> class Constant(Scheme):  # doctest: +ELLIPSIS
    ...     name, title, where, article = "constant", "a constant bias", "score", "none"
    ...     def bias(self, params, cfg, q, r):
    ...         return np.ones_like(r)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: scheme 'constant' writes bias but not its backward bias_backward; ...
    """

    name: str = ""
    title: str = ""
    where: str = "none"
    relative: bool = True
    defined_everywhere: bool = True
    article: str = ""
    paper: str = ""
    year: int | None = None
    in_article: bool = False
    colour: str = "#333333"
    settings: dict[str, Setting] = {}
    offset_kernel: Callable[[np.ndarray], np.ndarray] | None = None
    bias_reads_query: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _check(cls)

    def __setattr__(self, key, value):
        raise AttributeError(f"a scheme is read-only; got an assignment to {key!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, title={self.title!r}, where={self.where!r})"

    @property
    def rotary(self) -> bool:
        """Whether queries and keys are turned by their positions (a transform): ``where == "rotation"``."""
        return self.where == "rotation"

    def init(self, cfg, rng: np.random.Generator) -> dict:
        """Extra parameters of the scheme, drawn from ``rng`` (none here)."""
        return {}

    # -- h = T[x] + p(m): the added code, and its backward
    def code(self, params: dict, cfg, positions: np.ndarray):
        """Additive code ``p(m)``, shape ``(n, d)``, or None when the scheme adds nothing."""
        return None

    def code_backward(self, dcode: np.ndarray, params: dict, cfg, positions: np.ndarray) -> dict:
        """Gradients of the scheme's parameters (stacked) from ``dL/dp``, shape ``(M, n, d)``."""
        return {}

    # -- phi: the query/key transform, and lambda, the logit scale
    def transform(self, cfg, reading):
        """Per-plane frequencies ``theta (d/2,)`` queries and keys turn by (complex: with decay), or None.

        ``reading`` (:class:`poskernels.model.reading.Reading`) may carry frequencies of its own (a map of
        Definition 5); a scheme that turns reads them, one that does not is read only as trained.
        """
        return None

    def logit_scale(self, cfg, reading) -> float:
        """The logit scale ``lambda`` multiplying ``<phi_t(q), phi_j(k)> / tau`` (a reading's, 1 as trained).

        A scale of the key count and of parameters takes the keywords ``params`` and ``n`` (``n`` a number of keys,
        an integer or an array of them) and returns a float, or one per model ``(M,)`` for a stack, broadcast
        against ``n``.
        """
        return reading.logit_scale

    def logit_scale_backward(self, dlam, params: dict, cfg, reading, n) -> dict:
        """Gradients of the scheme's parameters from ``dL/dlambda`` (``(M,)``, or ``(M, Nq)`` against ``n``)."""
        return {}

    @property
    def scale_grows(self) -> bool:
        """Whether the logit scale reads the number of keys (and parameters): no shortcut may take it as constant."""
        return _reads(type(self).logit_scale, "n")

    def logit_scale_at(self, params: dict, cfg, reading, n):
        """:meth:`logit_scale` of a query that sees ``n`` keys; ``params`` and ``n`` reach only a hook that names them.

        >>> Scheme().logit_scale_at({}, None, type("R", (), {"logit_scale": 2.0})(), 10)
        2.0
        """
        if self.scale_grows:
            return self.logit_scale(cfg, reading, params=params, n=n)
        return self.logit_scale(cfg, reading)

    # -- b(r): the bias over offsets, and its backward
    def bias(self, params: dict, cfg, q: np.ndarray, r: np.ndarray):
        """Additive logit term for offsets ``r`` (None when there is none)."""
        return None

    def bias_backward(self, dz: np.ndarray, params: dict, cfg, q: np.ndarray, r: np.ndarray):
        """``(dL/dq or None, grads)`` from ``dL/dbias`` of the query-only path, ``dz`` shape ``(M, U, n)``."""
        return None, {}

    def bias_at(self, params: dict, cfg, q: np.ndarray, r: np.ndarray, t):
        """:meth:`bias` at offsets ``r`` of queries at positions ``t`` (a scalar, or broadcast against ``r``).

        ``t`` reaches the hook only when it names a keyword ``t``; a bias of the offset alone never sees it.
        """
        if _reads_t(type(self).bias):
            return self.bias(params, cfg, q, r, t=t)
        return self.bias(params, cfg, q, r)

    def bias_backward_at(self, dz: np.ndarray, params: dict, cfg, q: np.ndarray, r: np.ndarray, t):
        """:meth:`bias_backward` with the query's position ``t``, passed as :meth:`bias_at` passes it."""
        if _reads_t(type(self).bias_backward):
            return self.bias_backward(dz, params, cfg, q, r, t=t)
        return self.bias_backward(dz, params, cfg, q, r)

    # -- what the engine may assume: the far past, and a bias that is exactly linear
    def far_past(self, cfg) -> int | None:
        """The offset ``R0`` from which the score no longer depends on the offset (None: it always does).

        The streaming reader then counts the keys at offsets ``r >= R0`` by token (exact).  Only a scheme with no
        code and no transform may give one.
        """
        return None

    def linear_slope(self, cfg) -> float | None:
        """The slope ``s`` when the bias is exactly ``-s r`` (no code, no transform), else None.

        With ``s > 0`` Theorem 3's certified cut applies (:func:`poskernels.model.engine.cut.certified_cut`), and a
        one-pass reader is a recursive filter of decay ``e^{-s}``.
        """
        return None

    def tail_bound(self, params: dict, cfg):
        """``(W, D) -> bound`` on the weight a head puts on offsets ``r >= D`` at any length, given its content width
        ``W`` (``inf`` where the tail sum diverges), for a learned bias that decreases from ``b(0) = 0``; or None.

        A finite bound gives the head a certified cut (:func:`poskernels.model.engine.cut.certified_cut`: Kerple's).
        """
        return None

    def tail_parameters(self, params: dict) -> dict[str, float]:
        """The learned numbers its :meth:`tail_bound` reads, by name (Kerple's ``r1``, ``r2``), for the tables."""
        return {}


@lru_cache(maxsize=256)
def _reads(hook, keyword: str) -> bool:
    """Whether a hook takes the keyword ``keyword``."""
    return keyword in inspect.signature(hook).parameters


def _reads_t(hook) -> bool:
    """Whether a bias hook takes the query's position as a keyword ``t``."""
    return _reads(hook, "t")


def _writes(cls, hook: str) -> bool:
    return getattr(cls, hook) is not getattr(Scheme, hook)


def _check(cls) -> None:
    """Refuse a scheme whose metadata is missing or whose hooks disagree with where it acts."""
    name = cls.__dict__.get("name", "")
    if not isinstance(name, str) or not name.isidentifier():
        raise PosKernelsError(f"a scheme's name must be an identifier; got {name!r} for class {cls.__name__}")
    for field in ("title", "article"):
        if not isinstance(getattr(cls, field), str) or not getattr(cls, field):
            raise PosKernelsError(f"scheme {name!r} needs a {field} (a non-empty string); got {getattr(cls, field)!r}")
    if not isinstance(cls.paper, str):
        raise PosKernelsError(f"scheme {name!r}: paper must be a string; got {cls.paper!r}")
    if cls.year is not None and (not isinstance(cls.year, int) or isinstance(cls.year, bool) or cls.year < 1900):
        raise PosKernelsError(f"scheme {name!r}: year must be a year (an integer from 1900) or None; got {cls.year!r}")
    if not isinstance(cls.colour, str) or not _COLOUR.fullmatch(cls.colour):
        raise PosKernelsError(f"scheme {name!r}: colour must be '#rrggbb' (lower-case hex); got {cls.colour!r}")
    if cls.where not in WHERE:
        raise PosKernelsError(f"scheme {name!r}: where must be one of {', '.join(WHERE)}; got {cls.where!r}")
    for field in ("relative", "defined_everywhere", "in_article", "bias_reads_query"):
        if not isinstance(getattr(cls, field), bool):
            raise PosKernelsError(f"scheme {name!r}: {field} must be True or False; got {getattr(cls, field)!r}")
    _check_settings(cls, name)
    kernel = inspect.getattr_static(cls, "offset_kernel")
    if kernel is not None and not isinstance(kernel, staticmethod):  # a kernel takes offsets, not the scheme
        raise PosKernelsError(
            f"scheme {name!r}: offset_kernel must be a staticmethod r -> value or None; got {kernel!r}"
        )
    own = WHERE[cls.where]
    for forward, backward in (hooks for hooks in WHERE.values() if hooks is not None):
        if (forward, backward) != own and (_writes(cls, forward) or (backward and _writes(cls, backward))):
            raise PosKernelsError(
                f"scheme {name!r} acts at {cls.where!r} but writes {forward}"
                f"{'/' + backward if backward else ''}, the hook{'s' if backward else ''} of "
                f"{[w for w, h in WHERE.items() if h == (forward, backward)][0]!r}"
            )
    if own is not None:
        forward, backward = own
        if not _writes(cls, forward):
            raise PosKernelsError(f"scheme {name!r} acts at {cls.where!r} but writes no {forward}")
        if backward and not _writes(cls, backward):
            raise PosKernelsError(
                f"scheme {name!r} writes {forward} but not its backward {backward}; every forward comes with its "
                "hand-written gradient (a fixed term with no parameters returns no gradient, explicitly)"
            )
    if own == ("bias", "bias_backward") and _reads_t(cls.bias) != _reads_t(cls.bias_backward):
        raise PosKernelsError(f"scheme {name!r}: bias and bias_backward must both take the keyword t, or neither")
    _check_scale(cls, name)
    if _writes(cls, "init") and cls.where in ("none", "rotation") and not _reads(cls.logit_scale, "n"):
        raise PosKernelsError(
            f"scheme {name!r} has parameters (init) but no hook that uses them (where={cls.where!r}; a transform "
            "has no parameters of its own)"
        )
    for hook in ("far_past", "linear_slope", "tail_bound"):
        if _writes(cls, hook) and cls.where in ("input", "rotation"):
            raise PosKernelsError(
                f"scheme {name!r} writes {hook}, which only a scheme with no code and no transform may (it acts at "
                f"{cls.where!r})"
            )


def _check_scale(cls, name: str) -> None:
    """A logit scale of the key count takes ``params`` and ``n`` both, and writes its backward; a constant one, none."""
    hook = cls.logit_scale
    if _reads(hook, "n") != _reads(hook, "params"):
        raise PosKernelsError(f"scheme {name!r}: logit_scale must take both keywords params and n, or neither")
    if _reads(hook, "n") and not _writes(cls, "logit_scale_backward"):
        raise PosKernelsError(
            f"scheme {name!r} writes a logit_scale of params and n but not its backward logit_scale_backward; every "
            "forward comes with its hand-written gradient"
        )
    if _writes(cls, "logit_scale_backward") and not _reads(hook, "n"):
        raise PosKernelsError(f"scheme {name!r} writes logit_scale_backward but its logit_scale takes no params and n")


@lru_cache(maxsize=64)
def default_positions(n: int) -> np.ndarray:
    """Positions ``0..n-1`` as floats (one read-only array per ``n``, so a scheme can recognise it)."""
    pos = np.arange(n, dtype=float)  # (n,)
    pos.setflags(write=False)
    return pos
