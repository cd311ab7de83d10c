"""A sweep's grid: a TOML file read with :mod:`tomllib`, checked key by key, expanded into points.

A grid file has three tables, all optional::

    [sweep]
    preset = "tournament"     # defaults of every setting (a key of poskernels.model.config.PRESETS)
    scheme_file = "my_pe.py"  # optional: schemes of your own (a path, or a list, relative to the grid file)

    [fixed]                   # one value per setting, shared by every point
    steps = 1500
    test_lengths = [32, 64, 128, 256]

    [grid]                    # a list per setting: the points are the Cartesian product of the lists
    scheme = ["nope", "sinusoidal", "learned", "rope", "alibi"]
    seed = [0, 1, 2]

``[[grid]]`` (an array of tables) sweeps the union of several products, each over ``[fixed]``.
A point is a plain dict giving a value to every name of :data:`~poskernels.sweep.settings.SETTINGS`.  An
extension map only re-reads a RoPE head, so a combination of another scheme with ``extension != "none"`` is dropped
(and counted in :attr:`Grid.skipped`).  A malformed grid raises :class:`PosKernelsError` naming
the file, the line, the table and the key.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from ..encodings import SCHEMES, omega
from ..errors import PosKernelsError, check_budget, did_you_mean, read_text
from ..extension import MAP_ALIASES, extend
from ..model.config import PRESETS, TrainConfig
from .settings import (
    _KIND_WORDS,
    _TRAIN,
    ALIASES,
    SETTINGS,
    _check_alone,
    _defaults,
    _follow_task,
    add_scheme_settings,
    head_config,
)

__all__ = [
    "MAX_POINTS",
    "Grid",
    "load_grid",
    "parse_grid",
]


#: Points one grid may span: each is a store row and a trained (or cached) head; a grid past it is refused
#: before a row is written.
MAX_POINTS = 100_000


_TABLES = ("sweep", "fixed", "grid")
_SWEEP_KEYS = ("preset", "scheme_file")


@dataclass(frozen=True)
class Grid:
    """An expanded grid.

    Attributes
    ----------
    points : list of dict
        One dict per point, a value for every name of :data:`~poskernels.sweep.settings.SETTINGS`, in expansion
        order (blocks in file order, then the product in the order the keys are written, last key fastest).
    text : str
        The grid file as read (the store keeps it with each run).
    skipped : int
        Combinations dropped because an extension map was asked of a head that is not RoPE.
    scheme_files : tuple of str
        The grid's scheme files (absolute paths), loaded here and by every worker before its job.
    """

    points: list
    text: str
    skipped: int = 0
    scheme_files: tuple = ()


class _Lines:
    """Line numbers of the keys and table headers of a simple TOML text (tomllib keeps none)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-]+)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

    def __init__(self, text: str):
        self.keys: dict[tuple[str, int, str], int] = {}
        self.tables: dict[tuple[str, int], int] = {}
        table, index, seen = "", 0, {}
        for lineno, line in enumerate(text.splitlines(), start=1):
            m = self._HEADER.match(line)
            if m:
                table = m.group(2)
                index = seen.get(table, -1) + 1 if m.group(1) == "[[" else 0
                seen[table] = index
                self.tables.setdefault((table, index), lineno)
                parts = table.split(".")  # [a.b] defines key b of table a
                for i in range(1, len(parts)):
                    self.keys.setdefault((".".join(parts[:i]), 0, parts[i]), lineno)
                continue
            m = self._KEY.match(line)
            if m:
                self.keys.setdefault((table, index, m.group(1).strip('"')), lineno)

    def key(self, table: str, key: str, index: int = 0):
        return self.keys.get((table, index, key))

    def table(self, table: str, index: int = 0):
        return self.tables.get((table, index))


class _Reader:
    """Checks one grid text, raising errors that name the file, line, table and key."""

    def __init__(self, text: str, name: str):
        self.text, self.name, self.lines = text, name, _Lines(text)

    def fail(self, message: str, table: str, key: str | None = None, index: int = 0):
        line = self.lines.key(table, key, index) if key is not None else self.lines.table(table, index)
        where = f"{self.name}, line {line if line is not None else '?'}"
        label = f"[{table}]" if key is None else (f"[{table}] {key}" if table else key)
        raise PosKernelsError(f"{where}: {label}: {message}")

    def value(self, table: str, key: str, value, index: int = 0):
        """Check one value of setting ``key`` (type, then the config's own validators)."""
        name = ALIASES.get(key, key)
        kind = SETTINGS[name].kind
        if kind is list:
            if not isinstance(value, list) or not value:
                self.fail(f"must be a non-empty list of integers >= 2; got {value!r}", table, key, index)
            for n in value:
                if isinstance(n, bool) or not isinstance(n, int) or n < 2:
                    self.fail(f"test lengths must be integers >= 2; got {n!r}", table, key, index)
            if len(set(value)) != len(value):
                self.fail(f"test lengths must be distinct; got {value!r}", table, key, index)
            return list(value)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            if abs(value) > 2**1023:
                self.fail(f"must be a finite number; got an integer of {len(str(value))} digits", table, key, index)
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, kind):
            self.fail(f"must be {_KIND_WORDS[kind]}; got {value!r}", table, key, index)
        if name == "extension" and isinstance(value, str):
            value = MAP_ALIASES.get(value, value)  # transformers' names: linear = pi
        try:
            _check_alone(name, value)
        except PosKernelsError as err:
            self.fail(str(err), table, key, index)
        return value


def parse_grid(text: str, name: str = "<grid>") -> Grid:
    """Parse, check and expand a grid given as TOML text.

    Parameters
    ----------
    text : str
        The grid file's content (see the module docstring).
    name : str
        Name used in error messages (the file's path).

    Returns
    -------
    Grid

    Examples
    --------
    >>> g = parse_grid('[fixed]\\nsteps = 30\\n[grid]\\nscheme = ["rope", "alibi"]\\nextension = ["none", "pi"]\\n')
    >>> [(p["scheme"], p["extension"], p["steps"]) for p in g.points], g.skipped
    ([('rope', 'none', 30), ('rope', 'pi', 30), ('alibi', 'none', 30)], 1)
    >>> parse_grid('[grid]\\nd = [16, 15]\\n', "g.toml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: g.toml, line 2: [grid] d: ...15...
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"line (\d+)", str(err))
        shown = ""
        if m and 1 <= int(m.group(1)) <= len(text.splitlines()):
            shown = f": {text.splitlines()[int(m.group(1)) - 1].strip()!r}"
        raise PosKernelsError(f"{name}, line {m.group(1) if m else '?'}: not valid TOML ({err}){shown}") from None
    except (ValueError, RecursionError) as err:  # a 5,000-digit integer; arrays nested past Python's stack
        raise PosKernelsError(f"{name}: cannot be read as a grid ({type(err).__name__}: {str(err)[:120]})") from None
    r = _Reader(text, name)
    for table, value in data.items():
        if table not in _TABLES:
            r.fail(f"unknown table or key; accepted tables: {', '.join(_TABLES)}", *_where(r, table))
        if table != "grid" and not isinstance(value, dict):
            r.fail("must be a table", "", table)

    sweep = data.get("sweep", {})
    for key in sweep:
        if key not in _SWEEP_KEYS:
            r.fail(f"unknown key; accepted: {', '.join(_SWEEP_KEYS)}", "sweep", key)
    scheme_files = _scheme_files(r, sweep.get("scheme_file", []), name)
    preset = sweep.get("preset", "tournament")
    if not isinstance(preset, str) or preset not in PRESETS:
        r.fail(f"unknown preset {preset!r}; accepted: {', '.join(sorted(PRESETS))}", "sweep", "preset")
    base = _defaults(preset)

    fixed = {}
    for key, value in data.get("fixed", {}).items():
        name = ALIASES.get(key, key)
        if name not in SETTINGS:
            r.fail(f"unknown setting{did_you_mean(key, [*SETTINGS, *ALIASES])}; accepted: {', '.join(SETTINGS)}",
                   "fixed", key)  # fmt: skip
        if name in fixed:
            r.fail(f"sets {name!r} a second time (as {key!r})", "fixed", key)
        fixed[name] = r.value("fixed", key, value)

    blocks = data.get("grid", {})
    blocks = [blocks] if isinstance(blocks, dict) else blocks
    if not all(isinstance(b, dict) for b in blocks):
        r.fail("must be a table [grid] or an array of tables [[grid]]", "", "grid")
    axes_of_blocks = []
    for i, block in enumerate(blocks):
        axes = {}
        for key, values in block.items():
            name = ALIASES.get(key, key)
            if name not in SETTINGS:
                r.fail(f"unknown setting{did_you_mean(key, [*SETTINGS, *ALIASES])}; accepted: {', '.join(SETTINGS)}",
                       "grid", key, i)  # fmt: skip
            if name in axes:
                r.fail(f"sets {name!r} a second time (as {key!r})", "grid", key, i)
            if name in fixed:
                r.fail(
                    f"is also set in [fixed] (line {r.lines.key('fixed', key)}); give it in one place", "grid", key, i
                )
            if not isinstance(values, list) or not values:
                r.fail(f"must be a non-empty list of values to sweep; got {values!r}", "grid", key, i)
            checked = [r.value("grid", key, v, i) for v in values]
            if len({repr(v) for v in checked}) != len(checked):
                r.fail(f"lists a value twice: {values!r}", "grid", key, i)
            axes[name] = checked
        axes_of_blocks.append(axes)

    spans = [_span(axes) for axes in axes_of_blocks or [{}]]
    if sum(spans) > MAX_POINTS:  # refused before a single point is built
        r.fail(
            f"the grid spans {sum(spans)} points (products of {' + '.join(map(str, spans))}); the limit is "
            f"{MAX_POINTS}, each point being a store row and a trained head: split the grid",
            "grid",
        )
    points, keys, skipped = [], set(), 0
    for i, axes in enumerate(axes_of_blocks or [{}]):
        for combo in itertools.product(*axes.values()):
            point = _follow_task({**base, **fixed, **dict(zip(axes, combo))}, {*fixed, *axes})
            if point["extension"] != "none" and not SCHEMES[point["scheme"]].rotary:
                skipped += 1  # an extension map re-reads a RoPE head only
                continue
            _check_point(r, point, axes, i)
            ident = repr(sorted(point.items()))
            if ident not in keys:
                keys.add(ident)
                points.append(point)
    return Grid(points, text, skipped, scheme_files)


def _scheme_files(r: _Reader, value, name: str) -> tuple:
    """Load the grid's scheme files (relative to the grid file's folder) and add their schemes' settings."""
    from ..model.scheme_check import checked_scheme_file

    files = [value] if isinstance(value, str) else value
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        r.fail(f"must be a path or a list of paths to Python files of schemes; got {value!r}", "sweep", "scheme_file")
    base = Path(name).parent if name != "<grid>" else Path.cwd()
    out = []
    for f in files:
        path = (base / f).resolve() if not Path(f).is_absolute() else Path(f)
        try:
            checked_scheme_file(path)  # the gate of check-scheme and the tournament: a failing scheme trains nothing
        except PosKernelsError as err:
            r.fail(str(err), "sweep", "scheme_file")
        out.append(str(path))
    add_scheme_settings()
    return tuple(out)


def _span(axes: dict) -> int:
    span = 1
    for values in axes.values():
        span *= len(values)
    return span


def _check_point(r: _Reader, point: dict, axes: dict, index: int) -> None:
    """Cross-setting checks of one combination; the error names one of the settings involved."""
    streamed = point["test_task"] in ("long", "needle") and point["task"] == "cue"  # the streaming reader: cue heads
    if point["test_task"] != point["task"] and not streamed:
        key = "test_task" if "test_task" in axes else ("task" if "task" in axes else None)
        r.fail(f"a head trained on task {point['task']!r} is read on that task's test sets (test_task = "
               f"{point['task']!r}; 'long' and 'needle' read cue heads); got test_task = {point['test_task']!r}",
               "grid" if key else "fixed", key or "test_task", index if key else 0)  # fmt: skip
    longest = max(point["test_lengths"])  # a needle at offset r is read in max(n_train, r + 1) tokens
    longest = max(point["n_train"], longest + 1) if point["test_task"] == "needle" else longest
    try:  # the test set of the longest length: (test_size, n) tokens, before a worker allocates it
        check_budget(f"the test set (test_size {point['test_size']} x length {longest})",
                     point["test_size"] * longest)  # fmt: skip
    except PosKernelsError as err:
        key = next((k for k in ("test_size", "test_lengths") if k in axes), None)
        r.fail(str(err), "grid" if key else "fixed", key or "test_size", index if key else 0)
    try:
        head = head_config(point)
        replace(TrainConfig(), head=head, **{k: point[k] for k in _TRAIN})
    except PosKernelsError as err:
        key = next((k for k in axes if SETTINGS[k].part in ("head", "scheme", "train")), None)
        r.fail(f"in the point {_brief(point)}: {err}", "grid" if key else "fixed", key, index if key else 0)
    if point["extension"] != "none":
        try:
            extend(point["extension"], omega(point["d"], point["base"]), 2.0, point["n_train"])
        except (PosKernelsError, TypeError) as err:
            table = "grid" if "extension" in axes else "fixed"
            r.fail(f"map {point['extension']!r} cannot re-read this head: {err}", table, "extension", index)


def _where(r: _Reader, name: str) -> tuple:
    """(table, key) under which a top-level ``name`` is located: a table header or a top-level key."""
    return (name, None) if r.lines.table(name) is not None else ("", name)


def _brief(point: dict) -> str:
    return ", ".join(f"{k}={point[k]!r}" for k in ("scheme", "d", "n_train", "seed"))


def load_grid(path) -> Grid:
    r"""Read and expand the grid file at ``path`` (UTF-8; see :func:`parse_grid`).

    Parameters
    ----------
    path : str or pathlib.Path
        A TOML grid file: ``[fixed]`` settings and ``[grid]`` lists to cross.

    Returns
    -------
    Grid
        Every point of the grid.

    Raises
    ------
    PosKernelsError
        If the file cannot be read, is not TOML, or names an unknown setting or a value out of range.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "grid.toml"
    >>> _ = p.write_text('[grid]\nscheme = ["rope", "alibi"]\nseed = [0, 1]\n')
    >>> [(q["scheme"], q["seed"]) for q in load_grid(p).points]
    [('rope', 0), ('rope', 1), ('alibi', 0), ('alibi', 1)]
    """
    return parse_grid(read_text(path, "grid file"), str(path))
