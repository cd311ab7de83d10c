"""The claims table: one row per trained claim, in ``claims/rows/<suite>.toml``, read into :class:`Claim` records.

A row is a TOML table of ``[[claim]]``::

    [[claim]]
    id = "tournament.rope_falls_32_to_64"         # <suite>.<name>: the suite is the file's
    sentence = "RoPE degrades steadily, from 0.947 to 0.466."
    where = "Past the training window, the paragraph after the first table"
    kind = "gap"                                  # a key of poskernels.claims.kinds.KINDS
    params = { k = 2.0 }                          # its threshold: numbers, or names of [constants]
    inputs = { a = "tournament/per_seed/rope/32", b = "tournament/per_seed/rope/64" }

and may say ``null`` (what would make it false, where not the kind's), ``optional = true`` (it reads values
``poskernels reproduce`` does not write) and ``finding`` (why it is reported, not asserted).  The inputs are
expressions (:mod:`poskernels.claims.inputs`); the sections a claim needs are those its inputs read.  A file's
``[constants]`` names the thresholds its rows share (``HOLD = 0.05``); a row of another suite reads them as
``beyond.HOLD``.

Reading the table refuses, each with one error naming the file and the row: a key a row does not have, a kind,
parameter or input its kind does not read, an input that does not parse or reads outside the trained sections, an
unknown constant, and an id given twice.

Examples
--------
>>> rows = [{"id": "beyond.x", "sentence": "s", "where": "w", "kind": "upper", "params": {"c": "HOLD"},
...          "inputs": {"x": "'long/length/per_seed/fire/100000'"}}]
>>> claim = build("beyond", rows, {"HOLD": 0.05}, "rows/beyond.toml")[0]
>>> claim.threshold, claim.needs
('mean + 3 SE <= 0.05', ('long',))
>>> build("beyond", rows * 2, {"HOLD": 0.05}, "rows/beyond.toml")
Traceback (most recent call last):
...
poskernels.errors.PosKernelsError: rows/beyond.toml: claim 'beyond.x' is given twice
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from ..errors import PosKernelsError
from .inputs import Expression, evaluate, parse
from .kinds import ACCEPTS, KINDS
from .record import SUITES, Claim

__all__ = ["ROWS", "build", "constants", "load", "suite"]

#: The folder of the table's files, one per suite.
ROWS = Path(__file__).with_name("rows")
#: The keys a row may have; the first five it must.
ROW_KEYS = ("id", "sentence", "where", "kind", "inputs", "params", "null", "optional", "finding")
REQUIRED = ROW_KEYS[:5]


@cache
def _files() -> dict[str, dict]:
    """Every suite's file, parsed: ``{suite: {"constants": {...}, "claim": [rows]}}``."""
    out = {}
    for name in SUITES:
        path = ROWS / f"{name}.toml"
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise PosKernelsError(f"{path}: not TOML ({err})") from None
        extra = sorted(set(data) - {"constants", "claim"})
        if extra:
            raise PosKernelsError(f"{path}: unknown table(s) {extra}; accepted: constants, claim")
        out[name] = data
    return out


def constants(suite_name: str) -> dict:
    """The names a suite's rows may use: its own ``[constants]`` and every suite's as ``suite.NAME``.

    Parameters
    ----------
    suite_name : str
        One of :data:`SUITES`.

    Returns
    -------
    dict
        ``{name: value}``, lists as tuples.

    Examples
    --------
    >>> names = constants("tournament")
    >>> "beyond.HOLD" in names, "HOLD" in constants("beyond")
    (True, True)
    """
    files = _files()
    names = {f"{s}.{k}": v for s, data in files.items() for k, v in data.get("constants", {}).items()}
    names.update(files[suite_name].get("constants", {}))
    return {k: tuple(v) if isinstance(v, list) else v for k, v in names.items()}


@cache
def suite(suite_name: str) -> tuple[Claim, ...]:
    """The claims of one suite, in the order of its file."""
    if suite_name not in SUITES:
        raise PosKernelsError(f"unknown suite {suite_name!r}; accepted: {', '.join(SUITES)}")
    rows = _files()[suite_name].get("claim", [])
    return tuple(build(suite_name, rows, constants(suite_name), str(ROWS / f"{suite_name}.toml")))


def load() -> tuple[Claim, ...]:
    """Every claim of the table, suite by suite; an id given in two suites is refused.

    Returns
    -------
    tuple of Claim

    Raises
    ------
    PosKernelsError
        If a suite's file is not TOML, a row is refused (:func:`build`), or an id is given twice.

    Examples
    --------
    >>> claims = load()
    >>> len({c.id for c in claims}) == len(claims), claims[0].suite
    (True, 'tournament')
    """
    claims = [c for name in SUITES for c in suite(name)]
    _unique(claims, "the claims table")
    return tuple(claims)


def _unique(claims: list[Claim], where: str) -> None:
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise PosKernelsError(f"{where}: claim {c.id!r} is given twice")
        seen.add(c.id)


def build(suite_name: str, rows: list[dict], names: dict, where: str) -> list[Claim]:
    """The rows of one suite as claims, each checked (see the module's text); ``where`` names the file in errors.

    Parameters
    ----------
    suite_name : str
        The suite; every id starts with it.
    rows : list of dict
        The ``[[claim]]`` tables of its file.
    names : dict
        The constants the rows may use (:func:`constants`).
    where : str
        The file, named in errors.

    Returns
    -------
    list of Claim

    Raises
    ------
    PosKernelsError
        If a row has an unknown or missing key, an id outside the suite or given twice, an unknown kind, or
        parameters or inputs the kind refuses.

    Examples
    --------
    >>> row = {"id": "tournament.demo", "sentence": "RoPE reads 32.", "where": "here", "kind": "lower",
    ...        "params": {"c": 0.5}, "inputs": {"x": '"tournament/per_seed/rope/32"'}}
    >>> build("tournament", [row], {}, "demo.toml")[0].threshold
    'mean - 3 SE >= 0.5'
    >>> build("tournament", [row, row], {}, "demo.toml")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: demo.toml: claim 'tournament.demo' is given twice
    """
    claims = [_claim(suite_name, row, names, where) for row in rows]
    _unique(claims, where)
    return claims


def _claim(suite_name: str, row: dict, names: dict, where: str) -> Claim:
    cid = row.get("id", "?")
    at = f"{where}: claim {cid!r}"
    unknown = sorted(set(row) - set(ROW_KEYS))
    if unknown:
        raise PosKernelsError(f"{at}: unknown key(s) {unknown}; accepted: {', '.join(ROW_KEYS)}")
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise PosKernelsError(f"{at}: lacks {missing}")
    if not str(cid).startswith(f"{suite_name}."):
        raise PosKernelsError(f"{at}: an id of this file starts {suite_name + '.'!r}")
    kind = row["kind"]
    if kind not in KINDS:
        raise PosKernelsError(f"{at}: unknown kind {kind!r}; accepted: {', '.join(KINDS)}")
    params = _params(row.get("params", {}), kind, names, at)
    inputs = _inputs(row["inputs"], kind, names, at)
    needs = tuple(dict.fromkeys(s for e in inputs.values() for s in e.sections))
    return Claim(
        cid,
        suite_name,
        row["sentence"],
        row["where"],
        kind,
        params,
        _reader(inputs),
        needs,
        null=row.get("null", ""),
        optional=bool(row.get("optional", False)),
        finding=row.get("finding", ""),
        inputs={k: e.text for k, e in inputs.items()},
    )


def _params(raw: dict, kind: str, names: dict, at: str) -> dict:
    accepted = ACCEPTS[kind][1]
    bad = sorted(set(raw) - set(accepted))
    if bad:
        raise PosKernelsError(f"{at}: kind {kind!r} reads no parameter {bad}; accepted: {', '.join(accepted)}")
    out = {}
    for key, value in raw.items():
        if isinstance(value, str):
            if value not in names:
                raise PosKernelsError(f"{at}: parameter {key} = {value!r} names no constant; known: {sorted(names)}")
            value = names[value]
        out[key] = value
    return out


def _inputs(raw: dict, kind: str, names: dict, at: str) -> dict[str, Expression]:
    required, scalars = ACCEPTS[kind][0], ACCEPTS[kind][2]
    bad = sorted(set(raw) - set(required) - set(scalars))
    if bad or any(k not in raw for k in required):
        also = ", ".join(scalars) or "no other"
        raise PosKernelsError(
            f"{at}: kind {kind!r} reads the inputs {', '.join(required)} (and may read {also}); got {', '.join(raw)}"
        )
    try:
        return {key: parse(text, names) for key, text in raw.items()}
    except PosKernelsError as err:
        raise PosKernelsError(f"{at}: {err}") from None


def _reader(inputs: dict[str, Expression]):
    """``numbers -> {name: value}``, the claim's ``get``."""
    return lambda numbers: {key: evaluate(e, numbers) for key, e in inputs.items()}
