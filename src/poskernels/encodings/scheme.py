"""What a scheme is: the article's description of one way of adding position, and how it enters a head.

One record per scheme, one class: its metadata (title, where it acts, relative or not, the article's element,
its fixed kernel over offsets) and its behaviour in a head, each forward with its hand-written backward beside
it.  :data:`poskernels.encodings.SCHEMES` holds one instance of each; the head, the readers, the experiments,
the page and the laboratory all loop over it.  A subclass is checked when it is defined, so a scheme whose
metadata and behaviour disagree, or whose forward has no backward, is refused before it can reach a registry.

A scheme touches the head in at most three places, chosen by :attr:`Scheme.where`:

* ``"input"``: an absolute code ``p(m)`` added to the token embedding (Definition 1), hooks ``code`` and
  ``code_backward``: the sinusoidal code (Definition 2) or a learned table.
* ``"rotation"``: queries and keys rotated by their positions (Definition 4); the rotation itself is done by
  the head (:mod:`poskernels.model.head`), which can read it with any per-plane frequencies and logit scale
  (Definition 5's maps), so the scheme writes no hook.
* ``"score"``: a term added to the logits that depends on the offset ``r = t - j`` (and, for Shaw, on the
  query), hooks ``bias`` and ``bias_backward``: ALiBi's ``-s r``, T5's learned ``beta_bucket(r)``, Shaw's
  ``q a_min(r,K) / tau`` (Definition 3).  A bias that also reads the query's position ``t`` (FIRE's
  normaliser) takes it as a keyword ``t`` of both hooks; the head calls every bias through :meth:`Scheme.bias_at`
  and :meth:`Scheme.bias_backward_at`, which pass ``t`` only to a hook that names it.

Shapes: ``positions`` is ``(n,)``.  The query-only path trains a *stack* of ``M`` heads: every parameter has a
leading model axis, it passes the queries of its ``U`` distinct query tokens, ``q`` of shape ``(M, U, d)``, and
offsets ``r`` of shape ``(n,)``, and a bias returns ``(M, U, n)``, ``(M, n)`` or ``(n,)``; a code is ``(n, d)``
or ``(M, n, d)``.  The all-positions path reads one head (no model axis): it passes ``(B, n, d)`` and ``(n, n)``,
and a bias returns ``(B, n, n)`` or ``(n, n)``.  Every hook indexes from the right, so one implementation serves
both.  ``cfg`` is the head's :class:`poskernels.model.config.HeadConfig` (read by attribute only: this layer
does not import the model).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..errors import PosKernelsError

__all__ = ["HOOKS", "WHERE", "Scheme", "default_positions"]

#: Where a scheme acts, and the hooks (forward, backward) it must write there.
WHERE: dict[str, tuple[str, str] | None] = {
    "none": None,
    "input": ("code", "code_backward"),
    "rotation": None,
    "score": ("bias", "bias_backward"),
}
#: Every hook a scheme may write, forward then backward.
HOOKS = ("init", "code", "code_backward", "bias", "bias_backward")


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
        The article element that defines it.
    in_article : bool
        Whether the article's length tournament trains it (False: beyond the article).
    offset_kernel : callable or None
        ``r -> value`` for a fixed scheme's kernel over causal offsets ``r >= 0`` (None when learned).

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
    in_article: bool = False
    offset_kernel: Callable[[np.ndarray], np.ndarray] | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _check(cls)

    def __setattr__(self, key, value):
        raise AttributeError(f"a scheme is read-only; got an assignment to {key!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, title={self.title!r}, where={self.where!r})"

    @property
    def rotary(self) -> bool:
        """Whether queries and keys are rotated by their positions (RoPE): ``where == "rotation"``."""
        return self.where == "rotation"

    def init(self, cfg, rng: np.random.Generator) -> dict:
        """Extra parameters of the scheme, drawn from ``rng`` (none here)."""
        return {}

    def code(self, params: dict, cfg, positions: np.ndarray):
        """Additive code ``p(m)``, shape ``(n, d)``, or None when the scheme adds nothing."""
        return None

    def code_backward(self, dcode: np.ndarray, params: dict, cfg, positions: np.ndarray) -> dict:
        """Gradients of the scheme's parameters (stacked) from ``dL/dp``, shape ``(M, n, d)``."""
        return {}

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


@lru_cache(maxsize=256)
def _reads_t(hook) -> bool:
    """Whether a bias hook takes the query's position as a keyword ``t``."""
    return "t" in inspect.signature(hook).parameters


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
    if cls.where not in WHERE:
        raise PosKernelsError(f"scheme {name!r}: where must be one of {', '.join(WHERE)}; got {cls.where!r}")
    for field in ("relative", "defined_everywhere", "in_article"):
        if not isinstance(getattr(cls, field), bool):
            raise PosKernelsError(f"scheme {name!r}: {field} must be True or False; got {getattr(cls, field)!r}")
    kernel = inspect.getattr_static(cls, "offset_kernel")
    if kernel is not None and not isinstance(kernel, staticmethod):  # a kernel takes offsets, not the scheme
        raise PosKernelsError(
            f"scheme {name!r}: offset_kernel must be a staticmethod r -> value or None; got {kernel!r}"
        )
    own = WHERE[cls.where]
    for forward, backward in (hooks for hooks in WHERE.values() if hooks is not None):
        if (forward, backward) != own and (_writes(cls, forward) or _writes(cls, backward)):
            raise PosKernelsError(
                f"scheme {name!r} acts at {cls.where!r} but writes {forward}/{backward}, the hooks of "
                f"{[w for w, h in WHERE.items() if h == (forward, backward)][0]!r}"
            )
    if own is not None:
        forward, backward = own
        if not _writes(cls, forward):
            raise PosKernelsError(f"scheme {name!r} acts at {cls.where!r} but writes no {forward}")
        if not _writes(cls, backward):
            raise PosKernelsError(
                f"scheme {name!r} writes {forward} but not its backward {backward}; every forward comes with its "
                "hand-written gradient (a fixed term with no parameters returns no gradient, explicitly)"
            )
    if own == ("bias", "bias_backward") and _reads_t(cls.bias) != _reads_t(cls.bias_backward):
        raise PosKernelsError(f"scheme {name!r}: bias and bias_backward must both take the keyword t, or neither")
    if _writes(cls, "init") and own is None:
        raise PosKernelsError(f"scheme {name!r} has parameters (init) but no hook that uses them (where={cls.where!r})")


@lru_cache(maxsize=64)
def default_positions(n: int) -> np.ndarray:
    """Positions ``0..n-1`` as floats (one read-only array per ``n``, so a scheme can recognise it)."""
    pos = np.arange(n, dtype=float)  # (n,)
    pos.setflags(write=False)
    return pos
