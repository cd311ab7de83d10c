"""The laboratory's payload: one JSON-ready dict holding everything Figure A and Figure B draw.

Figure A (clocks and kernels) and Figure B (past the training window) are drawn by small JavaScript modules
that turn numbers into pixels and compute nothing else; every number, axis limit and caption they use is in
the dict :func:`viz_payload` returns.  One source of truth: each number comes from a package function
(:mod:`poskernels.encodings`, :mod:`poskernels.extension`, :mod:`poskernels.theory`, the head API) or from
``numbers.json`` as the page sections compute it.  Nothing is typed in here but the figure's own layout
choices (which dimensions the ruler shows, how far the sliders reach, the log grid of offsets).

Floats are rounded to the precision the page shows (:data:`PRECISION`).  The package ships a reference payload
(``lab/static/payload.json``, :data:`PAYLOAD_PATH`), made by a full ``poskernels reproduce`` with seeds 0-9 and
copied in by ``make reference-payload``, so the laboratory works before any training; ``reproduce`` writes its own
``OUT/payload.json`` and never the package's copy.  Its deterministic parts (:data:`DETERMINISTIC_PARTS`) equal a
fresh ``viz_payload(first_seed=0)`` exactly on any machine; its trained parts agree within their seeds' standard error.

Parts whose source has not been computed (a trained section left out, no cache of trained heads) are still in
the payload, as ``{"absent": "<why>"}``; the page says so in place of the view.

Examples
--------
>>> p = viz_payload({})  # no numbers.json at all: the untrained views still draw
>>> p["clocks"]["readout"][7]  # <p(3), p(10)> / (d/2) at d = 16, the article's Figure A readout
0.737
>>> sorted(k for k, v in p.items() if isinstance(v, dict) and "absent" in v)
['drift', 'filing', 'long', 'readouts', 'scores']
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import encodings, page
from ..atomic import write_json_atomic
from ..errors import PosKernelsError
from ..experiments.readers import RESCALINGS, colours
from ..extension import MAPS
from ..model.cache import cached_by_source
from ..page.clocks import KERNEL_DIMS as RULER_DIMS  # the article's kernel table's dimensions
from ..theory import census, kernel, ruler
from . import captions, long_view, trained
from .common import PRECISION, Absent, Sources, axis, need, rnd, sig

__all__ = [
    "Absent",
    "Sources",
    "DETERMINISTIC_PARTS",
    "PAYLOAD_KEYS",
    "PAYLOAD_PATH",
    "PARTS",
    "PRECISION",
    "Part",
    "viz_payload",
    "write_payload",
]

#: The reference payload shipped inside the package beside the page that reads it (never rewritten by reproduce).
PAYLOAD_PATH = Path(__file__).parent / "static" / "payload.json"
#: Parts computed by arithmetic alone: equal on every machine, bit for bit after rounding.
DETERMINISTIC_PARTS = ("clocks", "ruler", "census")

#: Top-level keys of ``numbers.json`` the payload reads (the sections it needs computed).
PAYLOAD_KEYS = ("thm1", "thm5", "tournament", "rescaled", "rebound", "filings", "long")

# The figures' layout choices (not results): the head's width and base, how far the sliders reach, where
# they start (the article's Figure A shows m = 3, n = 10), the ruler's dimensions and offsets.
D, B = 16, encodings.DEFAULT_BASE
L_TRAIN = 32
SLIDER_MAX = 255  # one less than the tournament's longest test length
SLIDER_START = (3, 10)
RULER_MAX_OFFSET = 4096
RULER_POINTS = 241
KAPPAS = (2, 4, 8)  # kappa = n / L for the test lengths 64, 128, 256
ARTICLE_MAPS = RESCALINGS  # Definition 5's maps, in the article's order (MAPS may hold more)
ARTICLE_SCHEMES = tuple(k for k, s in encodings.SCHEMES.items() if s.in_article)  # the article's tournament rows


# --------------------------------------------------------------------------- Figure A


def _clocks(src: Sources) -> dict:
    # Definition 2: plane j turns at omega_j; Theorem 1 (i): <p(m), p(n)> / (d/2) = (2/d) kappa_d(n - m)
    delta = np.arange(SLIDER_MAX + 1)  # (SLIDER_MAX + 1,)  offsets |n - m| the sliders can make
    p = encodings.sinusoidal_code(np.concatenate([[0], delta]), D, B)  # (SLIDER_MAX + 2, d)
    readout = p[1:] @ p[0] / (D / 2)  # (SLIDER_MAX + 1,)
    part = {
        "d": D,
        "b": B,
        "omega": [sig(w) for w in encodings.omega(D, B)],
        "omega_labels": [f"{w:.3g}" for w in encodings.omega(D, B)],
        "positions": {"min": 0, "max": SLIDER_MAX, "m": SLIDER_START[0], "n": SLIDER_START[1]},
        "readout": rnd(readout, "kernel"),
        "decimals": PRECISION["kernel"],
        "readout_label": "⟨p(m), p(n)⟩ / (d/2)",
    }
    part["caption"] = captions.clocks(part)
    return part


def _ruler(src: Sources) -> dict:
    # Theorem 1 (ii): (2/d) kappa_d -> I_b, and I_b is the ruler 1 - (gamma + ln|Delta|)/ln b
    grid = np.unique(np.round(np.geomspace(1, RULER_MAX_OFFSET, RULER_POINTS)).astype(int))  # (P,)
    curves = {str(d): rnd(kernel.normalized_kernel(grid, d, B), "kernel") for d in RULER_DIMS}
    # I_b's Ci is scipy.special's (0.15 s to import): cached with the results, keyed by ruler.py's source
    what = {"what": "I_b", "offsets": grid.tolist(), "b": B}
    limit_at = cached_by_source(src.cache_dir, "cosine-integral", ruler, what, lambda: kernel.I_b(grid, B).tolist())
    limit = rnd(limit_at, "kernel")
    rule = rnd(kernel.ruler(grid, B), "kernel")
    part = {
        "offsets": grid.tolist(),
        "dims": [str(d) for d in RULER_DIMS],
        "kernel": curves,
        "limit": limit,
        "ruler": rule,
        "octave_cost": rnd(kernel.octave_cost(B), "kernel"),
        "x": axis([1, RULER_MAX_OFFSET], 1, "offset Δ (log scale)", ticks=4 ** np.arange(7), log=True),
        "y": axis(list(curves.values()) + [limit, rule], 0.25, "similarity (2/d) κ_d(Δ)"),
    }
    thm1 = src.numbers.get("thm1")
    if thm1 is not None:  # the article's kernel table, as the page section computed it: dots on the curves
        at = sorted(thm1["limit"], key=int)
        part["table"] = {
            "offsets": [int(x) for x in at],
            "kernel": {d: rnd([thm1["kernel"][d][x] for x in at], "kernel") for d in part["dims"]},
            "limit": rnd([thm1["limit"][x] for x in at], "kernel"),
        }
    part["caption"] = captions.ruler(part)
    return part


def _drift(src: Sources) -> dict:
    part = trained.drift(src)
    part["readers"] = trained.reader_entries(part["readers"])
    part["scores"] = rnd(part["scores"], "score")
    part["window"] = L_TRAIN
    part["x"] = axis(part["positions"], 32, "query position t (key at t − r)")
    part["y"] = axis(list(part["scores"].values()), 10.0, f"score of a marked key at r = {part['offset']}")
    part["caption"] = captions.drift(part)
    return part


# --------------------------------------------------------------------------- Figure B


def _readers(numbers: dict) -> list[dict]:
    """The readers of Figure B, in the article's order: the tournament's schemes, then RoPE re-read by each map."""
    acc = need(numbers, "tournament", "accuracy")
    rescaled = numbers.get("rescaled", {}).get("accuracy", {})
    keys = [k for k in encodings.SCHEMES if k in acc] + [f"rope_{m}" for m in ARTICLE_MAPS if f"rope_{m}" in rescaled]
    return trained.reader_entries(keys)


def _scores(src: Sources) -> dict:
    readers = _readers(src.numbers)
    part = trained.scores_against_offset(src, [r["key"] for r in readers])
    part["readers"] = [r for r in readers if r["key"] in part["scores"]]
    # readers beyond the article (T5, Shaw) start hidden; a toggle shows them
    article = set(ARTICLE_SCHEMES) | {f"rope_{m}" for m in ARTICLE_MAPS}
    part["hidden"] = [r["key"] for r in part["readers"] if r["key"] not in article]
    part["scores"] = rnd(part["scores"], "score")
    part["window"] = L_TRAIN
    part["x"] = axis(part["offsets"], 32, "offset r = t − j of a marked key")
    part["groups"] = [{"key": k, "title": t} for k, t in trained.GROUPS.items()]
    # the axis is sized to the curves shown at first (a hidden reader's curve, shown by its toggle, is clipped)
    shown = [v for k, v in part["scores"].items() if k not in part["hidden"]] or list(part["scores"].values())
    part["y"] = axis(shown, 20.0, "learned score (pre-softmax)")
    part["caption"] = captions.scores(part)
    return part


def _readouts(src: Sources) -> dict:
    acc = need(src.numbers, "tournament", "accuracy")
    rebound = need(src.numbers, "rebound")
    seed = sorted(rebound, key=int)[0]
    r = rebound[seed]
    part = {
        "lengths": sorted(acc["rope"], key=int),
        "accuracy": {k: rnd(v, "accuracy") for k, v in acc.items()},
        "stderr": {k: rnd(v, "accuracy") for k, v in src.numbers["tournament"].get("stderr", {}).items()},
        "seeds": list(src.numbers["tournament"].get("seeds", [])),
        "rescaled": rnd(src.numbers.get("rescaled", {}).get("accuracy", {}), "accuracy"),
        "rescaled_stderr": rnd(src.numbers.get("rescaled", {}).get("stderr", {}), "accuracy"),
        "readers": _readers(src.numbers),
        "rebound_seed": seed,
        "score_r1": rnd(r["score_r1"], "score"),
        "score_edge": rnd(r["score_r31"], "score"),
        "edge": L_TRAIN - 1,
        "first_trough": [int(r["first_trough"][0]), rnd(r["first_trough"][1], "score")],
        "deepest": [int(r["deepest"][0]), rnd(r["deepest"][1], "score")],
        "peak": [int(r["peak"][0]), rnd(r["peak"][1], "score")],
        "decimals": {"score": PRECISION["score"], "accuracy": PRECISION["accuracy"]},
    }
    part["caption"] = captions.readouts(part)
    return part


def _census(src: Sources) -> dict:
    rows = census.wavelength_census(L_TRAIN, D, B)  # Theorem 5 (i): one row per plane
    maps = [name for name in ARTICLE_MAPS if name in MAPS]
    part = {
        "d": D,
        "L": L_TRAIN,
        "planes": [r.plane for r in rows],
        "wavelengths": rnd([r.wavelength for r in rows], "wavelength"),
        "full_turn": [r.full_turn for r in rows],
        "kappas": [str(k) for k in KAPPAS],
        "lengths": {str(k): k * L_TRAIN for k in KAPPAS},
        "kappa_start": "4",
        "maps": [{"key": name, "label": captions.MAP_TITLES[name]} for name in maps],
        # Definition 5 per plane: the factor each map puts on theta_j, at each kappa
        "factors": {
            str(k): {n: rnd(census.rescaling_factors(n, D, B, kappa=k, L=L_TRAIN), "factor") for n in maps}
            for k in KAPPAS
        },
        "logit_scale": {
            str(k): {n: rnd(MAPS[n](encodings.omega(D, B), k, L_TRAIN).logit_scale, "factor") for n in maps}
            for k in KAPPAS
        },
        "decimals": {"factor": PRECISION["factor"], "wavelength": PRECISION["wavelength"]},
        "y": axis([0.0, 1.0], 0.25, "factor on θ_j (1 = unchanged)"),
    }
    part["caption"] = captions.census(part)
    return part


def _filing(src: Sources) -> dict:
    part = trained.filing_case(need(src.numbers, "filings", "case"))
    part["readers"] = trained.reader_entries(part["readers"])
    part["caption"] = captions.filing(part)
    return part


@dataclass(frozen=True)
class Part:
    """One view's data: its key in the payload, the figure it belongs to, and its builder."""

    key: str
    figure: str
    build: Callable[[Sources], dict]


#: The views, in the order the page shows them.
PARTS: tuple[Part, ...] = (
    Part("clocks", "A", _clocks),
    Part("ruler", "A", _ruler),
    Part("drift", "A", _drift),
    Part("scores", "B", _scores),
    Part("readouts", "B", _readouts),
    Part("census", "B", _census),
    Part("filing", "B", _filing),
    Part("long", "B", long_view.build),
)


def _sources(source, cache_dir, first_seed) -> Sources:
    if source is None:  # the full page, with the default cache (what `reproduce` writes)
        if first_seed is None:
            raise PosKernelsError("viz_payload(None) computes the trained sections: pass first_seed=S, the first "
                                  "seed of their block (poskernels.seeds.first_seed() reads $POSKERNELS_FIRST_SEED)")
        ctx = page.Context(log=lambda m: None, first_seed=first_seed)
        if cache_dir:
            ctx.cache_dir = Path(cache_dir)
        page.assemble(ctx, keys=PAYLOAD_KEYS)
        return Sources(ctx.numbers, Path(ctx.cache_dir))
    if isinstance(source, page.Context):
        return Sources(source.numbers, Path(cache_dir or source.cache_dir))
    if isinstance(source, dict):
        return Sources(source, Path(cache_dir) if cache_dir else None)
    raise PosKernelsError(f"viz_payload takes a page Context, a numbers dict or None; got {type(source).__name__}")


def viz_payload(source=None, cache_dir=None, first_seed: int | None = None) -> dict:
    """Everything Figure A and Figure B draw, as one JSON-ready dict.

    Parameters
    ----------
    source : page.Context, dict or None
        A :class:`poskernels.page.Context` whose sections are computed (what ``reproduce`` passes), a
        ``numbers.json`` dict, or None to compute the sections the payload reads (:data:`PAYLOAD_KEYS`) with
        the default cache (trained heads are trained once, then read from the cache).
    cache_dir : path, optional
        Cache of trained heads, for the views drawn from a head's weights (the drift and score curves).
    first_seed : int, optional
        With ``source=None`` (and only then: required), the first seed of the trained sections' block.

    Returns
    -------
    dict
        ``{"version", "figures", "sections", <part>: {...} or {"absent": why}}``; floats rounded to
        :data:`PRECISION`.

    Examples
    --------
    >>> p = viz_payload({})
    >>> p["figures"]["A"], p["census"]["full_turn"]
    (['clocks', 'ruler', 'drift'], [True, True, False, False, False, False, False, False])
    """
    src = _sources(source, cache_dir, first_seed)
    payload = {
        "version": 1,
        "precision": dict(PRECISION),
        "figures": {fig: [p.key for p in PARTS if p.figure == fig] for fig in ("A", "B")},
        "titles": dict(captions.FIGURE_TITLES),
        "colours": colours(),  # each scheme's, reader's and map's colour: the page and the figures keep none
        "sections": sorted(k for k in src.numbers if k in PAYLOAD_KEYS),
    }
    for part in PARTS:
        try:
            payload[part.key] = part.build(src)
        except Absent as why:
            payload[part.key] = {"absent": str(why)}
    return json.loads(json.dumps(payload, allow_nan=False))  # JSON-normal: lists, str keys, no NaN


def write_payload(ctx, out_dir, payload: dict | None = None) -> list[Path]:
    """``reproduce``'s writer hook: ``OUT/payload.json`` (the package's reference copy is never rewritten).

    ``poskernels lab`` serves this file when it exists (``--payload``, default ``results/payload.json``).

    Parameters
    ----------
    ctx : page.Context, dict or None
        What :func:`viz_payload` reads as ``source``: ``reproduce``'s context, a ``numbers.json`` dict, or None.
    out_dir : path
        The output folder; ``payload.json`` is written in it through :mod:`poskernels.atomic`.
    payload : dict, optional
        ``viz_payload(ctx)`` when the caller has built it (``reproduce`` builds it once for its payload and its
        figures); default None: built here.

    Returns
    -------
    list of Path
        The one file written, ``out_dir/payload.json``.

    Examples
    --------
    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     (path,) = write_payload({}, out)
    ...     path.name, json.loads(path.read_text(encoding="utf-8"))["figures"]["A"]
    ('payload.json', ['clocks', 'ruler', 'drift'])
    """
    path = Path(out_dir) / "payload.json"
    write_json_atomic(path, viz_payload(ctx) if payload is None else payload)
    return [path]
