"""What a sweep's point is: every setting it gives a value to, their defaults, and the head a point trains.

A point is a plain dict giving a value to every name of :data:`SETTINGS`: the head's (``scheme``, ``d``, ...), the
settings of every registered scheme, the trainer's (``task``, ``steps``, ``lr``, ...), the training ``seed`` and how
the trained head is read (``test_lengths``, ``test_task``, ``extension``, ...).  A value is checked alone by the
configuration's own validator; :mod:`poskernels.sweep.grid` reads a grid file into points and checks each
combination.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..encodings import scheme_settings
from ..errors import MAX_ELEMENTS, PosKernelsError, check_int, did_you_mean
from ..experiments.held_out import TEST_COUNT, TEST_SEED
from ..experiments.tournament import TEST_LENGTHS
from ..extension import MAPS
from ..model.config import PRESETS, HeadConfig, TrainConfig
from ..tasks.registry import layout_of, tournament_tasks

__all__ = [
    "ALIASES",
    "DEFAULT_EVAL",
    "MAX_SEED",
    "SETTINGS",
    "TEST_TASKS",
    "Setting",
    "add_scheme_settings",
    "head_config",
]


@dataclass(frozen=True)
class Setting:
    """One knob of a grid point.

    Attributes
    ----------
    name : str
        Key in the grid file and in a point.
    kind : type
        ``int``, ``float``, ``str`` or ``list`` (a list of positive ints: the test lengths).
    part : str
        Where it goes: ``"head"`` (:class:`HeadConfig`), ``"train"`` (:class:`TrainConfig`),
        ``"scheme"`` (a setting of a scheme, :attr:`HeadConfig.settings`), ``"seed"`` (the training seed) or
        ``"eval"`` (how the trained head is read).
    """

    name: str
    kind: type
    part: str


_HEAD = {"scheme": str, "embedding": str, "d": int, "n_train": int, "base": float}  # then the schemes' settings
_HEAD_AFTER = {"embed_scale": float, "map_scale": float}
_TRAIN = {"task": str, "steps": int, "batch": int, "lr": float, "beta1": float, "beta2": float, "eps": float}
_EVAL = {"test_lengths": list, "test_size": int, "test_seed": int, "extension": str, "test_task": str}


#: What a point is read on: a registered task's held-out sets (``cue``, ``recall``: the tournament's test sets of the
#: point's own ``task``, its default; ``test_lengths`` are lengths), ``long`` (the cue task read by the streaming
#: reader, lengths up to 10^6 and beyond) and ``needle`` (one marked token; the ``test_lengths`` are its offsets
#: ``r`` from the query); see :mod:`poskernels.experiments.long_context`.  ``long`` and ``needle`` read cue heads.
TEST_TASKS = (*tournament_tasks(), "long", "needle")


#: transformers' names for settings that are the same thing here (a RoPE head's base is its ``rope_theta``).
ALIASES: dict[str, str] = {"rope_theta": "base"}


#: Every setting a grid may span, by name.
#: A scheme's own settings (:attr:`poskernels.encodings.Scheme.settings`) are part ``"scheme"``, read off the
#: registry: a scheme registered later (a grid's ``scheme_file``) adds its own with :func:`add_scheme_settings`.
SETTINGS: dict[str, Setting] = {
    **{k: Setting(k, t, "head") for k, t in _HEAD.items()},
    **{k: Setting(k, s.kind, "scheme") for k, s in scheme_settings().items()},
    **{k: Setting(k, t, "head") for k, t in _HEAD_AFTER.items()},
    **{k: Setting(k, t, "train") for k, t in _TRAIN.items()},
    "seed": Setting("seed", int, "seed"),
    **{k: Setting(k, t, "eval") for k, t in _EVAL.items()},
}


#: Defaults of the reading settings: the tournament's test lengths, test-set size (2,000 fresh
#: sequences per length) and test stream, and RoPE read as trained.
DEFAULT_EVAL = {
    "test_lengths": list(TEST_LENGTHS),
    "test_size": TEST_COUNT,
    "test_seed": TEST_SEED,
    "extension": "none",
    "test_task": "cue",
}


#: Largest seed (of training or of the test stream): the store keeps seeds as SQLite's signed 64-bit integers.
MAX_SEED = 2**63 - 1


_KIND_WORDS = {int: "an integer", float: "a number", str: "a string"}


def add_scheme_settings() -> None:
    """Add the settings of schemes registered since import to :data:`SETTINGS` (after every other setting).

    Returns
    -------
    None
        :data:`SETTINGS` gains each new scheme setting (part ``"scheme"``); those already there are kept.

    Examples
    --------
    >>> before = list(SETTINGS)
    >>> add_scheme_settings()
    >>> list(SETTINGS)[: len(before)] == before
    True
    """
    for key, setting in scheme_settings().items():
        SETTINGS.setdefault(key, Setting(key, setting.kind, "scheme"))


def _check_alone(key: str, value) -> None:
    """Run the configuration's own validator on one setting, the others at their defaults."""
    part = SETTINGS[key].part
    if key == "task":
        tasks = tournament_tasks()
        if value not in tasks:
            raise PosKernelsError(f"unknown task {value!r}{did_you_mean(value, tasks)}; accepted: {', '.join(tasks)}")
    elif part == "head":
        HeadConfig(**{key: value})
    elif part == "scheme":
        scheme_settings()[key].check(key, value)
    elif part == "train":
        TrainConfig(**{key: value})
    elif key in ("seed", "test_seed"):
        check_int(key, value, 0, MAX_SEED, "a seed is a SQLite integer in the store")
    elif key == "test_size":
        check_int(key, value, 1, MAX_ELEMENTS, "test sequences of one length")
    elif key == "extension" and value not in MAPS:
        raise PosKernelsError(
            f"unknown extension map {value!r}{did_you_mean(value, MAPS)}; accepted: {', '.join(sorted(MAPS))}"
        )
    elif key == "test_task" and value not in TEST_TASKS:
        raise PosKernelsError(
            f"unknown test task {value!r}{did_you_mean(value, TEST_TASKS)}; accepted: {', '.join(TEST_TASKS)}"
        )


def _defaults(preset: str) -> dict:
    config = PRESETS[preset]
    point = {k: getattr(config.head, k) for k, s in SETTINGS.items() if s.part == "head"}
    point.update({k: s.default for k, s in scheme_settings().items()})
    point.update({k: getattr(config, k) for k in _TRAIN})
    return {**point, "seed": 0, **{k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULT_EVAL.items()}}


def _follow_task(point: dict, given) -> dict:
    """The point's reading follows its task where the grid does not say: its held-out sets (``test_task``), its
    lengths, and an embedding that reads its ids (a recall head trains with ``"table"``)."""
    spec = tournament_tasks()[point["task"]]
    if "test_task" not in given:
        point["test_task"] = spec.name
    if "test_lengths" not in given:
        point["test_lengths"] = list(spec.lengths)
    if "embedding" not in given and point["embedding"] not in spec.layout.embeddings:
        point["embedding"] = spec.layout.embeddings[0]
    return point


def head_config(point: dict) -> HeadConfig:
    """The head of a point: its ``"head"`` settings, its ``"scheme"`` settings as the head's ``settings``, and the
    vocabulary and classes of its task's layout (:func:`poskernels.tasks.registry.layout_of`).

    Parameters
    ----------
    point : dict
        A point of a :class:`Grid`.

    Returns
    -------
    HeadConfig

    Examples
    --------
    >>> from poskernels.sweep.grid import parse_grid
    >>> head = head_config(parse_grid("").points[0])
    >>> head.d, head.vocab
    (16, 17)
    """
    layout = layout_of(point.get("task", "cue"))
    return HeadConfig(
        vocab=layout.vocab,
        n_classes=layout.n_classes,
        **{k: point[k] for k, s in SETTINGS.items() if s.part == "head"},
        settings={k: point[k] for k, s in SETTINGS.items() if s.part == "scheme" and k in point},
    )
