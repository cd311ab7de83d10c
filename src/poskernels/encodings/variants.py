"""Two training-side variants that go on top of a scheme: the scaled softmax and randomized positions.

Neither is a new kernel over offsets; each is a class factory that makes a :class:`~poskernels.encodings.Scheme`
subclass of any scheme, so a scheme from outside the package gets them the same way as the built-in ones:

* :func:`ssmax` (Nakanishi 2025, "Scalable-Softmax Is Superior for Attention"): the content logits of a query
  that sees ``n`` keys are multiplied by ``s log n`` (the softmax of ``z`` becomes ``n^{s z_j} / sum_k n^{s z_k}``),
  ``s`` one learned scalar per head.  The paper learns ``s`` per layer and head with no bias term in its main
  form (its variant ``s log n + b`` is not used here); its Figure 1 shows ``s = 0.43``, and no initialisation is
  fixed there, so ``s`` starts at ``1 / log L`` (``L`` the training length): at its training length a scaled
  head starts as the plain one.  The scale multiplies ``<phi_t(q), phi_j(k)> / tau``; a bias ``b(t - j)`` is
  added after it, as the head's score writes ``lambda``.
* :func:`randomized` (Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of
  Transformers"): during training, each step's positions are an ordered random subset of ``[0, L_max)`` drawn
  from the step's Generator (:func:`random_positions`), one subset shared by the step's batch as the paper's
  code draws it (one ``jax.random.choice`` of ``sequence_length`` indices per forward call); read, the head sees
  ``0..n-1``.  A setting of the head (``random_positions = L_max``, 0: off) that the trainer reads
  (:func:`training_positions`), for an absolute code defined everywhere or a rotation.

Examples
--------
>>> from poskernels.encodings import SCHEMES
>>> SCHEMES["rope_ssmax"].scale_grows, SCHEMES["rope"].scale_grows
(True, False)
>>> random_positions(np.random.default_rng(0), 5, 2048).tolist()
[552.0, 630.0, 1045.0, 1302.0, 1738.0]
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ..errors import PosKernelsError, check_int
from .scheme import Scheme
from .setting import Setting

__all__ = ["RANDOM_POSITIONS", "random_positions", "randomized", "ssmax", "training_positions"]

#: ``L_max`` of the randomized schemes: 2^11, the paper's example (``noise_max_length`` 2048 for test lengths up
#: to 500), 8 times the tournament's longest test length (256).
RANDOM_POSITIONS = 2048


def _base(base, what: str) -> type[Scheme]:
    if not (isinstance(base, type) and issubclass(base, Scheme)) or base is Scheme or not base.name:
        raise PosKernelsError(f"{what} takes a registered Scheme subclass; got {base!r}")
    return base


def ssmax(base: type[Scheme], name: str | None = None, colour: str | None = None) -> type[Scheme]:
    """``base`` with its content logits scaled by ``s log n`` (Scalable-Softmax), ``s`` learned: a new Scheme class.

    Parameters
    ----------
    base : Scheme subclass
        Any scheme whose logit scale does not already read the key count.
    name : str, optional
        The new scheme's registry name (default ``<base>_ssmax``).
    colour : str, optional
        Its colour (default the base's).

    Returns
    -------
    type
        The new Scheme subclass (not registered: pass it to :func:`~poskernels.encodings.register_scheme`).

    Raises
    ------
    PosKernelsError
        If `base` already scales its logits with the key count.

    Examples
    --------
    >>> from poskernels.encodings import SCHEMES, register_scheme
    >>> Scaled = ssmax(type(SCHEMES["alibi"]), name="alibi_ssmax_doc")
    >>> s = Scaled()
    >>> p = s.init(type("C", (), {"n_train": 32})(), np.random.default_rng(0))
    >>> float(s.logit_scale_at({k: v[None] for k, v in p.items()}, None, type("R", (), {"logit_scale": 1.0})(), 32)[0])
    1.0
    >>> ssmax(Scaled)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: ssmax: scheme 'alibi_ssmax_doc' already scales its logits with n; ...
    """
    base = _base(base, "ssmax")
    if "n" in inspect.signature(base.logit_scale).parameters:
        raise PosKernelsError(f"ssmax: scheme {base.name!r} already scales its logits with n; scale a plain scheme")
    scaled_name = name or f"{base.name}_ssmax"
    scaled_colour = colour or base.colour

    class Scaled(base):
        name = scaled_name
        title = f"{base.title} + SSMax"
        paper, year, in_article, colour = "Nakanishi", 2025, False, scaled_colour
        article = f"{base.article} with Nakanishi 2025, Scalable-Softmax Is Superior for Attention"
        offset_kernel = None  # the base's kernel, times a learned s log n: drawn once, as the base's

        def init(self, cfg, rng):  # the base's parameters, from the same draws, and s = 1 / log L
            params = super().init(cfg, rng)
            params["ssmax_s"] = np.array([1.0 / math.log(max(cfg.n_train, 2))])  # (1,)
            return params

        def logit_scale(self, cfg, reading, *, params, n):  # lambda = reading's scale x s log n
            s = np.asarray(params["ssmax_s"])[..., 0]  # () or (M,)
            logn = np.log(np.asarray(n, dtype=float))  # () or (Nq,)
            return reading.logit_scale * (s[..., None] * logn if logn.ndim else s * logn)  # (M,), (M, Nq) or ()

        def logit_scale_backward(self, dlam, params, cfg, reading, n):  # dL/ds = dL/dlambda x reading's scale x log n
            g = np.asarray(dlam, dtype=float) * (reading.logit_scale * np.log(np.asarray(n, dtype=float)))
            return {"ssmax_s": g.reshape(g.shape[0], -1).sum(axis=1, keepdims=True)}  # (M, 1)

        def reference_scale(self, tp, cfg, n, dtype):  # the same scale in torch, for the reference head of a scheme
            return tp["ssmax_s"][:, :, None] * math.log(n)  # (M, 1, 1)

    Scaled.__name__ = Scaled.__qualname__ = f"{base.__name__}SSMax"
    Scaled.__module__ = base.__module__  # a scheme file's ssmax(MyScheme) is one of the file's schemes
    return Scaled


def randomized(base: type[Scheme], L_max: int = RANDOM_POSITIONS, name: str | None = None,
               colour: str | None = None) -> type[Scheme]:  # fmt: skip
    """``base`` trained at random ordered positions in ``[0, L_max)`` (randomized positions): a new Scheme class.

    The scheme is the base's (its code or its rotation, its parameters); only its setting ``random_positions``
    (default ``L_max``) differs, which the trainer reads (:func:`training_positions`).

    Parameters
    ----------
    base : Scheme subclass
        An absolute code defined at every position, or a rotation.
    L_max : int, optional
        The positions are drawn from ``[0, L_max)``; default 2048.
    name : str, optional
        The new scheme's registry name (default ``<base>_randpos``).
    colour : str, optional
        Its colour (default the base's).

    Returns
    -------
    type
        The new Scheme subclass (not registered).

    Raises
    ------
    PosKernelsError
        If `base` is neither an absolute code defined everywhere nor a rotation, or `L_max` is out of range.

    Examples
    --------
    >>> from poskernels.encodings import SCHEMES
    >>> cls = randomized(type(SCHEMES["sinusoidal"]), name="sin_rp_doc")
    >>> cls.settings["random_positions"].default, cls.where
    (2048, 'input')
    >>> randomized(type(SCHEMES["alibi"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: randomized positions need an absolute code defined everywhere or a rotation; ...
    """
    base = _base(base, "randomized")
    if base.where not in ("input", "rotation") or not base.defined_everywhere:
        raise PosKernelsError(
            "randomized positions need an absolute code defined everywhere or a rotation; "
            f"got scheme {base.name!r} (where={base.where!r}, defined_everywhere={base.defined_everywhere})"
        )
    L_max = check_int("L_max", L_max, 1, 2**20, "the range the training positions are drawn from")
    randomized_name = name or f"{base.name}_randpos"
    randomized_colour = colour or base.colour

    class Randomized(base):
        name = randomized_name
        title = f"{base.title}, randomized positions"
        paper, year, in_article, colour = "Ruoss et al.", 2023, False, randomized_colour
        article = (f"{base.article} trained as Ruoss et al. 2023, Randomized Positional Encodings Boost Length "
                   "Generalization of Transformers")  # fmt: skip
        offset_kernel = None  # the base's own kernel (not a new one): drawn once, as the base's
        settings = {**base.settings, "random_positions": _setting(L_max)}

    Randomized.__name__ = Randomized.__qualname__ = f"{base.__name__}Randomized"
    Randomized.__module__ = base.__module__
    return Randomized


def _setting(L_max: int) -> Setting:
    return Setting(L_max, 0, 2**20, "train at an ordered random subset of [0, L_max) per step (0: off)")


def random_positions(rng: np.random.Generator, n: int, L_max: int) -> np.ndarray:
    """``n`` distinct positions drawn from ``[0, L_max)`` without replacement, in increasing order, as floats.

    Parameters
    ----------
    rng : numpy.random.Generator
        The draws' only source.
    n : int
        How many positions (a training sequence's length).
    L_max : int
        The positions lie in ``[0, L_max)``.

    Returns
    -------
    ndarray, shape (n,)
        The positions, increasing.

    Raises
    ------
    PosKernelsError
        If `n` distinct positions do not fit in ``[0, L_max)``.

    Examples
    --------
    >>> p = random_positions(np.random.default_rng(1), 32, 2048)
    >>> bool((np.diff(p) > 0).all() and p.min() >= 0 and p.max() < 2048)
    True
    >>> random_positions(np.random.default_rng(1), 40, 32)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: random positions: n = 40 distinct positions do not fit in [0, L_max = 32)
    """
    if n > L_max:
        raise PosKernelsError(f"random positions: n = {n} distinct positions do not fit in [0, L_max = {L_max})")
    return np.sort(rng.choice(L_max, size=n, replace=False)).astype(float)  # (n,)


def training_positions(cfg: object, rng: np.random.Generator, n: int) -> np.ndarray | None:
    """One training step's positions for a head of ``cfg``: :func:`random_positions` when its setting
    ``random_positions`` is on, else None (``0..n-1``, drawing nothing from ``rng``).

    Parameters
    ----------
    cfg : object
        A head's configuration; its attribute ``random_positions`` (0 or absent: off) is ``L_max``.
    rng : numpy.random.Generator
        The draws' only source.
    n : int
        The sequence's length.

    Returns
    -------
    ndarray of shape (n,), or None
        The positions drawn, or None for the ordinary positions ``0..n-1``.

    Raises
    ------
    PosKernelsError
        If `n` distinct positions do not fit in ``[0, L_max)``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> training_positions(SimpleNamespace(random_positions=0), np.random.default_rng(0), 4) is None
    True
    >>> training_positions(SimpleNamespace(random_positions=100), np.random.default_rng(0), 4).tolist()
    [26.0, 50.0, 62.0, 82.0]
    """
    L_max = getattr(cfg, "random_positions", 0)
    return None if not L_max else random_positions(rng, n, L_max)
