"""Configuration of the single head and of its training run: frozen dataclasses with presets.

A variant is a different value of a field (``scheme="rope"``), never a boolean flag.  The whole
:class:`TrainConfig` (with its :class:`HeadConfig`), the seed and a code version make the key
under which trained weights are cached (:mod:`poskernels.model.cache`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace

from ..encodings import DEFAULT_BASE, SCHEMES, scheme_settings  # the one scheme registry, and its settings
from ..errors import (
    PosKernelsError,
    check_base,
    check_budget,
    check_even_dimension,
    check_int,
    check_name,
    check_positive_real,
    check_real,
)
from ..tasks.registry import TASKS, get_spec
from .embedding import EMBEDDINGS

__all__ = ["PRESETS", "HeadConfig", "TrainConfig", "preset"]

#: Widest head: its d x d maps (and their Adam moments) are float64 NumPy arrays, 128 MiB each at 4,096.
MAX_HEAD_D = 4096
#: Largest table, length or batch (vocabulary, classes, n_train, buckets, clip, batch).
MAX_SIZE = 2**20
#: Most Adam steps of one run.
MAX_STEPS = 10**7
#: Numbers of one step's largest activation, ``batch x n_train x max(n_train, d)`` (the scores, or the values):
#: 2**26, 512 MiB of float64, of which a step holds several.  The article's run (128 x 32 x 32) is 131,072.
STEP_BUDGET = 2**26

_TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")


@dataclass(frozen=True)
class HeadConfig:
    """One causal attention head and its initialization.

    Attributes
    ----------
    scheme : str
        Position scheme, a key of :data:`poskernels.encodings.SCHEMES`.
    d : int
        Width of the head (queries, keys, values, embeddings); the temperature is ``tau = sqrt(d)``.
    vocab : int
        Number of token ids: 17 for the cue task (8 symbols, marked or not, and the query), the ``2 S + 1`` that the
        factored embedding reads; a task's own (:attr:`poskernels.tasks.spec.Layout.vocab`, checked by
        :class:`TrainConfig` against its task).
    embedding : str
        How a token id becomes a vector, a key of :data:`poskernels.model.embedding.EMBEDDINGS`:
        ``"factored"`` (the article's ``h = E[symbol] + m [marked]``) or ``"table"`` (a free row per id).
    n_classes : int
        Size of the readout (the 8 symbols of the cue task; a task's :attr:`~poskernels.tasks.spec.Layout.n_classes`).
    n_train : int
        Training length ``L``; the learned table has exactly ``L`` rows.
    base : float
        Frequency base ``b`` of the sinusoidal code and of RoPE (Definition 2).
    embed_scale : float
        Embeddings (and the learned table, and Shaw's vectors) start from ``N(0, embed_scale**2)``.
    map_scale : float
        Each ``d x d`` map (and the readout) starts from ``N(0, map_scale**2 / d)``.
    settings : mapping of str to number
        The scheme's own settings (:attr:`poskernels.encodings.Scheme.settings`: ALiBi's ``alibi_slope``, T5's
        ``t5_buckets`` and ``t5_max_distance``, Shaw's ``shaw_clip``), each read as an attribute
        (``cfg.alibi_slope``); one left out takes the scheme's default.  A setting of another registered scheme
        is dropped (so one dict of settings serves every scheme); a name no scheme declares is refused.  Stored as
        a sorted tuple of ``(name, value)`` pairs, every setting of the scheme present.

    Examples
    --------
    >>> HeadConfig(scheme="alibi").alibi_slope, HeadConfig(scheme="t5", settings={"t5_buckets": 8}).settings
    (0.5, (('t5_buckets', 8), ('t5_max_distance', 128)))
    >>> HeadConfig(scheme="rope", settings={"alibi_slope": 0.25}).settings
    ()
    >>> HeadConfig(scheme="alibi", settings={"alibi_slop": 0.25})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown setting 'alibi_slop' (did you mean 'alibi_slope'?); accepted: ...
    """

    scheme: str = "nope"
    d: int = 16
    vocab: int = 17
    embedding: str = "factored"
    n_classes: int = 8
    n_train: int = 32
    base: float = DEFAULT_BASE
    embed_scale: float = 0.25
    map_scale: float = 0.25
    settings: tuple = ()

    def __post_init__(self):
        scheme = SCHEMES[check_name("scheme", self.scheme, SCHEMES)]
        check_name("embedding", self.embedding, EMBEDDINGS)
        check_even_dimension(check_int("d", self.d, 2, MAX_HEAD_D, "each d x d map is a float64 NumPy array"))
        for name in ("vocab", "n_classes", "n_train"):
            check_int(name, getattr(self, name), 1, MAX_SIZE, "a table of that many rows")
        if self.embedding == "factored" and (self.vocab % 2 != 1 or self.vocab < 3):
            raise PosKernelsError(
                "vocab of the factored embedding must be 2 S + 1 (S symbols, marked or not, and the query): odd and "
                f">= 3; got {self.vocab!r} (a task of another layout trains with embedding='table')"
            )
        check_base(self.base)
        for name in ("embed_scale", "map_scale"):
            check_positive_real(name, getattr(self, name))
        object.__setattr__(self, "settings", _own_settings(scheme, self.settings))

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and dataclasses ask for dunders: none here
            raise AttributeError(name)
        for key, value in self.__dict__.get("settings", ()):
            if key == name:
                return value
        if name in scheme_settings():
            raise AttributeError(f"{name!r} is not a setting of scheme {self.scheme!r}; its settings: "
                                 f"{', '.join(k for k, _ in self.settings) or 'none'}")  # fmt: skip
        raise AttributeError(f"HeadConfig has no attribute {name!r}")

    @property
    def tau(self) -> float:
        """Temperature ``sqrt(d)`` (the article's ``tau = sqrt(d_k)``)."""
        return math.sqrt(self.d)


def _own_settings(scheme, given) -> tuple:
    """The scheme's settings, ``given`` (a mapping or pairs) over its defaults, checked, as sorted pairs."""
    if isinstance(given, Mapping):
        pairs = list(given.items())
    else:
        try:
            pairs = [tuple(p) for p in given]
        except TypeError:
            raise PosKernelsError(f"settings must be a mapping of name -> value; got {given!r}") from None
        if any(len(p) != 2 for p in pairs):
            raise PosKernelsError(f"settings must be a mapping of name -> value; got {given!r}")
    known = scheme_settings()
    values = {k: s.default for k, s in scheme.settings.items()}
    for key, value in pairs:
        check_name("setting", key, known)
        if key in scheme.settings:
            values[key] = scheme.settings[key].check(key, value)
    return tuple(sorted(values.items()))


@dataclass(frozen=True)
class TrainConfig:
    """A training run: the head, the stream it learns from, and Adam.

    Attributes
    ----------
    head : HeadConfig
        The head.
    task : str
        Name of the training stream, a key of :data:`poskernels.tasks.registry.TASKS` (``"cue"``, ``"recall"``),
        or the name a caller gives its own sampler.  It is part of the cache key, so a custom stream
        must carry a name that changes whenever the stream does.  A registered task's layout must match the
        head: its ``vocab``, its ``n_classes``, an ``embedding`` that reads its ids (:meth:`with_task` sets them).
    steps : int
        Adam steps.
    batch : int
        Fresh sequences per step.
    lr : float
        Adam's step size: 0.02, chosen by the sweep of ``examples/lr_sweep.toml`` (0.003 to 0.05, ten
        seeds a point) under the criterion declared there before it ran.
    beta1, beta2, eps : float
        Adam's other constants (Kingma and Ba 2015; the standard ones).
    """

    head: HeadConfig = field(default_factory=HeadConfig)
    task: str = "cue"
    steps: int = 1500
    batch: int = 128
    lr: float = 2e-2
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self):
        if not isinstance(self.head, HeadConfig):
            raise PosKernelsError(f"head must be a HeadConfig; got {type(self.head).__name__}")
        if not isinstance(self.task, str) or not _TASK_NAME.fullmatch(self.task) or ".." in self.task:
            # the name is part of a cache file's name: no separators, no "..", nothing outside the cache folder
            raise PosKernelsError(
                f"task must be a name of letters, digits, '_', '-' and '.' (at most 64, no '..'); got {self.task!r}"
            )
        check_int("steps", self.steps, 1, MAX_STEPS, "the loss curve keeps one number per step")
        check_int("batch", self.batch, 1, MAX_SIZE, "fresh sequences per step")
        check_positive_real("lr", self.lr)
        check_positive_real("eps", self.eps)
        for name in ("beta1", "beta2"):
            value = getattr(self, name)
            if check_real(name, value, 0, 1) >= 1.0:  # a bool (False) is refused, not read as 0
                raise PosKernelsError(f"{name} must lie in [0, 1); got {value!r}")
        h = self.head
        spec = TASKS.get(self.task)
        if spec is not None and spec.layout is not None:
            _check_layout(h, spec)
        check_budget(
            f"one step's activations (batch {self.batch} x n_train {h.n_train} x d {h.d})",
            self.batch * h.n_train * max(h.n_train, h.d),
            STEP_BUDGET,
        )

    def with_scheme(self, scheme: str) -> TrainConfig:
        """The same run with another position scheme.

        >>> preset("tournament").with_scheme("rope").head.scheme
        'rope'
        """
        return replace(self, head=replace(self.head, scheme=scheme, settings=()))

    def with_task(self, task: str) -> TrainConfig:
        """The same run on another registered task: the head takes the task's vocabulary and classes, and keeps its
        embedding where that reads the task's ids (else the task's first,
        :attr:`~poskernels.tasks.spec.Layout.embeddings`).

        >>> c = preset("tournament", "rope").with_task("recall")
        >>> c.task, c.head.vocab, c.head.n_classes, c.head.embedding
        ('recall', 33, 16, 'table')
        >>> preset("tournament").with_task("cue") == preset("tournament")
        True
        """
        layout = get_spec(task).layout
        if layout is None:
            raise PosKernelsError(f"task {task!r} is a training stream only: it has no layout to give a head")
        embedding = self.head.embedding if self.head.embedding in layout.embeddings else layout.embeddings[0]
        head = replace(self.head, vocab=layout.vocab, n_classes=layout.n_classes, embedding=embedding)
        return replace(self, head=head, task=task)

    def to_dict(self) -> dict:
        """Plain JSON-normal dict of every field (the cache key hashes it; the scheme's settings as a dict).

        >>> preset("tournament", "alibi").to_dict()["head"]["settings"]
        {'alibi_slope': 0.5}
        """
        out = asdict(self)
        out["head"]["settings"] = dict(self.head.settings)
        return out


def _check_layout(h: HeadConfig, spec) -> None:
    """A head trained on a registered task spells its tokens: vocabulary, classes and an embedding that reads them."""
    layout = spec.layout
    for name in ("vocab", "n_classes"):
        if getattr(h, name) != getattr(layout, name):
            raise PosKernelsError(
                f"head {name} {getattr(h, name)!r} does not match task {spec.name!r}, whose layout has "
                f"{name} = {getattr(layout, name)} (TrainConfig.with_task({spec.name!r}) sets it)"
            )
    if h.embedding not in layout.embeddings:
        raise PosKernelsError(f"embedding {h.embedding!r} does not read task {spec.name!r}'s token ids; accepted: "
                              f"{', '.join(layout.embeddings)}")  # fmt: skip


#: Named presets.  ``tournament`` is the article's run (1,500 steps at length 32); ``quick`` is a
#: short run for examples and smoke tests (at lr 0.01: 200 steps are too few for the larger step).
PRESETS: dict[str, TrainConfig] = {
    "tournament": TrainConfig(),
    "quick": TrainConfig(steps=200, batch=64, lr=1e-2),
}


def preset(name: str, scheme: str | None = None) -> TrainConfig:
    """A named preset (:data:`PRESETS`), optionally with another scheme.

    Parameters
    ----------
    name : str
        A key of :data:`PRESETS` (``"quick"``, ``"tournament"``).
    scheme : str, optional
        A registered scheme to train instead of the preset's; default None (the preset's own).

    Returns
    -------
    TrainConfig
        The head's configuration and the training settings.

    Raises
    ------
    PosKernelsError
        If `name` is not a preset or `scheme` not a registered scheme.

    Examples
    --------
    >>> c = preset("tournament", "alibi")
    >>> (c.head.scheme, c.head.n_train, c.steps, c.batch, c.lr)
    ('alibi', 32, 1500, 128, 0.02)
    >>> preset("fast")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown preset 'fast'; accepted: quick, tournament
    >>> preset("tournament", ["rope"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme ['rope']; accepted: alibi, fire, ...
    """
    config = PRESETS[check_name("preset", name, PRESETS)]
    return config if scheme is None else config.with_scheme(scheme)
