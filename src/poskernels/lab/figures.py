"""Static figures (PNG, matplotlib) that ``poskernels reproduce`` writes beside ``numbers.json``.

Each figure is drawn from the same payload the interactive page reads (:func:`poskernels.lab.viz_payload`),
so a PNG and the page cannot disagree.  A figure whose data are absent from the payload is skipped with a
message saying which and why.  Drawing uses matplotlib's object API with the Agg canvas: no pyplot state,
no display needed.

Examples
--------
>>> import tempfile, pathlib
>>> from poskernels.lab import viz_payload
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> written, skipped = draw_figures(viz_payload({}), out)
>>> [p.name for p in written], sorted(skipped)  # doctest: +NORMALIZE_WHITESPACE
(['kernel_ruler.png'],
 ['filing_readers', 'long_context', 'rope_rescaled_scores', 'rotary_family', 'tournament_accuracy'])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..atomic import savefig_atomic, write_text_atomic
from ..experiments.curves import reader_of
from ..model.cache_entry import CacheError, read_regular
from .payload import viz_payload
from .trained import GROUPS, reader_group

__all__ = ["FIGURES", "draw_figures", "write_figures"]


def _colour(p: dict, key: str) -> str:
    """A scheme's or reader's colour, as the payload carries it (:func:`poskernels.experiments.readers.colours`)."""
    return p.get("colours", {}).get(key, "#333333")


def _reads(r: dict) -> tuple[str, str]:
    """The head a payload reader reads and its map: the reader's own fields, or the readers' table for an older
    payload (:func:`poskernels.experiments.curves.reader_of`); never the key's spelling."""
    if "head" in r and "map" in r:
        return r["head"], r["map"]
    try:
        return reader_of(r["key"])
    except KeyError:
        return r["key"], "none"


def _group(r: dict) -> str:
    """A payload reader's facet (:data:`poskernels.lab.trained.GROUPS`): its own field, or from its head and map."""
    return r["group"] if "group" in r else reader_group(*_reads(r))


def _facets(readers: list[dict], reference: str | None = None) -> list[tuple[str, list[dict]]]:
    """The readers split into :data:`GROUPS`, in order, empty groups left out; ``reference`` (a reader key, RoPE
    as trained) joins the re-read facet, so each map is seen beside the head it re-reads."""
    ref = [r for r in readers if r["key"] == reference]
    out = []
    for g, title in GROUPS.items():
        members = [r for r in readers if _group(r) == g]
        if members:
            out.append((title, (ref if g == "reread" else []) + members))
    return out


def _shown_range(scores: dict, keys: list[str], margin: float = 0.05) -> tuple[float, float]:
    """The y range of the curves drawn (``keys`` of ``scores``), with a margin: never sized to a series not shown.

    >>> _shown_range({"a": [0.0, 10.0], "b": [-360.0, None]}, ["a"])
    (-0.5, 10.5)
    """
    vals = [v for k in keys for v in scores[k] if v is not None and np.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (-1.0, 1.0)
    pad = margin * (hi - lo) if hi > lo else 1.0
    return lo - pad, hi + pad


def _band(ax, xs, ys, se, colour) -> None:
    """The mean's standard-error band, ``mean +- SE`` over seeds, where both are known."""
    lo = [np.nan if y is None or e is None else y - e for y, e in zip(ys, se)]
    hi = [np.nan if y is None or e is None else y + e for y, e in zip(ys, se)]
    ax.fill_between(xs, lo, hi, color=colour, alpha=0.18, lw=0)


def _dash(r: dict) -> str:
    """A head re-read through a map is dashed; a head read as trained is solid."""
    return "-" if _reads(r)[1] == "none" else "--"


_DIM_COLORS = ["#e69f00", "#009e73", "#0072b2"]


def _figure(width=7.0, height=3.8):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _kernel_ruler(p: dict):
    part = p["ruler"]
    fig = _figure()
    ax = fig.add_subplot()
    # the limit first, wide and pale, so the largest d (which lies on it) stays visible on top
    ax.plot(part["offsets"], part["limit"], color="black", lw=4, alpha=0.3, label="limit $I_b(\\Delta)$")
    for i, d in enumerate(part["dims"]):
        ax.plot(part["offsets"], part["kernel"][d], color=_DIM_COLORS[i % 3], lw=1.2, label=f"d = {d}")
    ax.plot(
        part["offsets"], part["ruler"], color="#7f7f7f", lw=1.5, ls="--", label="ruler $1-(\\gamma+\\ln\\Delta)/\\ln b$"
    )
    ax.set_xscale("log")
    ax.set_xlim(part["x"]["min"], part["x"]["max"])
    ax.set_ylim(part["y"]["min"], part["y"]["max"])
    ax.set_xticks(part["x"]["ticks"], [f"{t:g}" for t in part["x"]["ticks"]])
    ax.set_xlabel(part["x"]["label"])
    ax.set_ylabel(part["y"]["label"])
    ax.set_title("Theorem 1: the kernel at three dimensions against its cosine-integral limit", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    return fig, ("ruler",)


def _tournament_accuracy(p: dict):
    part = p["readouts"]
    lengths = part["lengths"]
    facets = _facets(part["readers"], reference="rope")
    cols = 2 if len(facets) > 1 else 1
    rows = -(-len(facets) // cols)
    fig = _figure(11.0, 3.1 * rows + 0.6)
    for i, (title, readers) in enumerate(facets):
        ax = fig.add_subplot(rows, cols, i + 1)
        for r in readers:
            key = r["key"]
            acc = part["accuracy"].get(key) or part["rescaled"].get(key, {})
            se = part.get("stderr", {}).get(key) or part.get("rescaled_stderr", {}).get(key, {})
            ns = [n for n in lengths if acc.get(n) is not None]
            xs, ys = [int(n) for n in ns], [acc[n] for n in ns]
            _band(ax, xs, ys, [se.get(n) for n in ns], _colour(p, key))
            ax.plot(xs, ys, marker="o", ms=3.5, ls=_dash(r), color=_colour(p, key), label=r["label"])
        ax.set_xscale("log", base=2)
        ax.set_xticks([int(n) for n in lengths], lengths)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("test length n (trained at 32)")
        ax.set_ylabel("accuracy")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("The length tournament: accuracy against test length (mean of seeds, band: ± one standard error)",
                 fontsize=10)  # fmt: skip
    return fig, ("readouts",)


def _rope_rescaled_scores(p: dict):
    part = p["scores"]
    keys = [r for r in part["readers"] if _reads(r)[0] == "rope"]  # RoPE's own head, as trained and re-read
    if not keys:
        raise LookupError("the payload's scores have no RoPE reader")
    fig = _figure()
    ax = fig.add_subplot()
    ax.axvspan(0, part["window"] - 1, color="#f0f0e8", label="training offsets")
    for r in keys:
        ys = [float("nan") if v is None else v for v in part["scores"][r["key"]]]
        ax.plot(part["offsets"], ys, color=_colour(p, r["key"]), lw=2 if r["key"] == "rope" else 1.3, ls=_dash(r),
                label=r["label"])  # fmt: skip
    ax.axhline(0, color="#bbb", lw=0.8)
    ax.set_xlim(part["x"]["min"], part["x"]["max"])
    ax.set_ylim(*_shown_range(part["scores"], [r["key"] for r in keys]))  # the curves drawn, not a hidden series
    ax.set_xticks(part["x"]["ticks"])
    ax.set_xlabel(part["x"]["label"])
    ax.set_ylabel(part["y"]["label"])
    ax.set_title("RoPE's learned score against offset, read as trained and with each rescaling", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig, ("scores",)


def _filing_readers(p: dict):
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    part = p["filing"]
    rows = [("truth", part["truth"])]
    for r in part["readers"]:
        for s in part["seeds"]:
            rows.append((f"{r['label']}, seed {s}", part["answers"][r["key"]][s]))
    grid = np.array([[np.nan if a is None else a for a in row] for _, row in rows], dtype=float)  # (rows, n)
    palette = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#7a5195", "#999933"]
    k = len(part["labels"])  # every symbol a head can answer
    fig = _figure(9.0, 0.22 * len(rows) + 1.6)
    ax = fig.add_subplot()
    ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=ListedColormap(palette[:k]), vmin=-0.5, vmax=k - 0.5)
    ax.set_yticks(range(len(rows)), [name for name, _ in rows], fontsize=6.5)
    ax.set_xlabel("token position in the filing")
    ax.set_title("Which company was named last? Every reader's answer at every position", fontsize=10)
    shown = sorted({int(v) for v in grid[np.isfinite(grid)]})  # only the symbols that occur
    handles = [Patch(color=palette[i], label=part["labels"][i]) for i in shown]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig, ("filing",)


def _long_context(p: dict):
    from matplotlib.ticker import NullLocator

    part = p["long"]
    facets = _facets(part["readers"], reference="rope")
    fig = _figure(11.0, 2.9 * len(facets) + 0.7)
    panels = (("lengths", "length", "x_length", "cue task: accuracy against length"),
              ("offsets", "distance", "x_distance", "needle: accuracy against its offset"))  # fmt: skip
    rows = fig.subfigures(len(facets), 1, squeeze=False)[:, 0]  # one row a group, titled by it
    for sub, (group, readers) in zip(rows, facets):
        sub.suptitle(group, fontsize=9.5)
        for i, (xs_key, curves_key, x_key, title) in enumerate(panels):
            ax = sub.add_subplot(1, 2, i + 1)
            xs = part[xs_key]
            for r in readers:
                ys = [float("nan") if v is None else v for v in part[curves_key][r["key"]]]
                se = part.get(f"{curves_key}_stderr", {}).get(r["key"], [None] * len(xs))
                _band(ax, xs, [None if np.isnan(y) else y for y in ys], se, _colour(p, r["key"]))
                ax.plot(xs, ys, marker=".", ls=_dash(r), lw=1.3, color=_colour(p, r["key"]), label=r["label"])
            ax.axhline(part["chance"], color="#999", lw=0.8, ls=":")
            if curves_key == "distance" and any(_reads(r)[0] == "alibi" for r in readers):
                for h in part["horizons"]:  # Theorem 3 (iii): each ALiBi head's horizon W / s
                    ax.axvline(h["horizon"], color=_colour(p, "alibi"), lw=0.6, alpha=0.5)
            x = part[x_key]
            ax.set_xscale("log")
            ax.set_xlim(x["min"], x["max"])
            ax.set_xticks(x["ticks"], [f"{t:g}" for t in x["ticks"]])
            ax.xaxis.set_minor_locator(NullLocator())  # labelled decades only: minor ticks cost a second
            ax.set_ylim(part["y"]["min"], part["y"]["max"] + 0.02)
            ax.set_xlabel(x["label"], fontsize=8)
            ax.set_ylabel(part["y"]["label"])
            ax.set_title(title, fontsize=8.5)
            ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle("Far past the window: heads trained at 32 read to 100,000 tokens (band: ± one standard error; "
                 "green lines: ALiBi horizons)", fontsize=10)  # fmt: skip
    return fig, ("long",)


#: The rotary family's figure: RoPE and the schemes that change its frequencies.
ROTARY_FAMILY = ("rope", "xpos", "p_rope", "partial_rotary")


def _rotary_family(p: dict):
    scores, long = p["scores"], p.get("long", {})
    keys = [r for r in scores["readers"] if r["key"] in ROTARY_FAMILY]
    if not keys:
        raise LookupError("the payload's scores have no rotary reader")
    fig = _figure(11.0, 4.0)
    ax = fig.add_subplot(1, 2, 1)
    ax.axvspan(0, scores["window"] - 1, color="#f0f0e8", label="training offsets")
    for r in keys:
        ys = [float("nan") if v is None else v for v in scores["scores"][r["key"]]]
        ax.plot(scores["offsets"], ys, color=_colour(p, r["key"]), lw=1.4, label=r["label"])
    ax.axhline(0, color="#bbb", lw=0.8)
    ax.set_xlim(scores["x"]["min"], scores["x"]["max"])
    ax.set_ylim(*_shown_range(scores["scores"], [r["key"] for r in keys]))
    ax.set_xticks(scores["x"]["ticks"])
    ax.set_xlabel(scores["x"]["label"])
    ax.set_ylabel(scores["y"]["label"])
    ax.set_title("learned score of a marked key against its offset (seed shown in the lab)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5)
    if "lengths" in long:  # the cue task to 10^5 tokens, when the long section is there
        ax = fig.add_subplot(1, 2, 2)
        for r in (r for r in long["readers"] if r["key"] in ROTARY_FAMILY):
            ys = [float("nan") if v is None else v for v in long["length"][r["key"]]]
            ax.plot(long["lengths"], ys, marker=".", lw=1.3, color=_colour(p, r["key"]), label=r["label"])
        ax.axhline(long["chance"], color="#999", lw=0.8, ls=":")
        x = long["x_length"]
        ax.set_xscale("log")
        ax.set_xlim(x["min"], x["max"])
        ax.set_xticks(x["ticks"], [f"{t:g}" for t in x["ticks"]])
        ax.set_ylim(long["y"]["min"], long["y"]["max"] + 0.02)
        ax.set_xlabel(x["label"])
        ax.set_ylabel(long["y"]["label"])
        ax.set_title("cue task: accuracy against length (mean of seeds)", fontsize=10)
        ax.grid(alpha=0.3)
    fig.suptitle("The rotary family: RoPE, xPos, p-RoPE and partial rotary, trained at 32", fontsize=10)
    return fig, ("scores", "long")


#: Figure name -> drawer(payload) -> (matplotlib Figure, payload parts it needs).
FIGURES: dict[str, Callable] = {
    "kernel_ruler": _kernel_ruler,
    "tournament_accuracy": _tournament_accuracy,
    "rope_rescaled_scores": _rope_rescaled_scores,
    "filing_readers": _filing_readers,
    "long_context": _long_context,
    "rotary_family": _rotary_family,
}

_NEEDS = {"kernel_ruler": "ruler", "tournament_accuracy": "readouts", "rope_rescaled_scores": "scores",
          "filing_readers": "filing", "long_context": "long", "rotary_family": "scores"}  # fmt: skip
#: Parts a figure also draws when they are there (its digest covers them too).
_ALSO = {"rotary_family": ("long",)}


#: Beside the PNGs: each figure's digest of (its payload part, this module's code), so a PNG whose inputs
#: have not changed is kept, not drawn again (matplotlib is then not even imported).
STAMP = "figures.sha256.json"


def _digest(name: str, part) -> str:
    code = Path(__file__).read_bytes()
    text = json.dumps({"figure": name, "part": part}, sort_keys=True, default=repr).encode()
    return hashlib.sha256(code + b"\0" + text).hexdigest()


def draw_figures(payload: dict, out_dir) -> tuple[list[Path], dict[str, str]]:
    """Draw every figure of :data:`FIGURES` whose data are present into ``out_dir``.

    A figure whose PNG is there with the digest of the same data and code (in :data:`STAMP`) is kept as it is.

    Parameters
    ----------
    payload : dict
        The laboratory's payload (:func:`poskernels.lab.viz_payload`'s).
    out_dir : str or path-like
        The folder of the PNGs (created if absent).

    Returns
    -------
    written : list of Path
        The PNGs written (or kept: the same inputs).
    skipped : dict
        Figure name -> why it was skipped (its payload part is absent).

    Examples
    --------
    >>> import tempfile
    >>> written, skipped = draw_figures({}, tempfile.mkdtemp())  # no part present: nothing drawn
    >>> written, sorted(skipped) == sorted(FIGURES), skipped["kernel_ruler"]
    ([], True, "payload part 'ruler' is absent: no such part")
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:  # a cache of what was drawn: read only from a regular file (a FIFO there would block the run)
        stamps = json.loads(read_regular(out_dir / STAMP))
    except (OSError, ValueError, RecursionError, CacheError):
        stamps = {}
    stamps = stamps if isinstance(stamps, dict) else {}
    written, skipped, new = [], {}, {}
    for name, drawer in FIGURES.items():
        need = payload.get(_NEEDS[name], {"absent": "no such part"})
        if "absent" in need:
            skipped[name] = f"payload part '{_NEEDS[name]}' is absent: {need['absent']}"
            if name in stamps:  # its PNG, if there, is still the one drawn from that digest
                new[name] = stamps[name]
            continue
        also = [payload.get(k) for k in _ALSO.get(name, ())]
        path, new[name] = out_dir / f"{name}.png", _digest(name, [need, *also] if also else need)
        if stamps.get(name) == new[name] and path.exists():
            written.append(path)
            continue
        fig, _ = drawer(payload)
        written.append(savefig_atomic(fig, path, format="png", metadata={"Software": None}))
    if new != stamps:
        write_text_atomic(out_dir / STAMP, json.dumps(new, sort_keys=True, indent=1))
    return written, skipped


def write_figures(ctx, out_dir, payload: dict | None = None) -> list[Path]:
    """``reproduce``'s writer hook: ``OUT/figures/*.png``, with a line for each figure skipped and why.

    Parameters
    ----------
    ctx : poskernels.page.registry.Context
        The run's context (its numbers and cache).
    out_dir : str or path-like
        The run's output folder.
    payload : dict, optional
        ``viz_payload(ctx)`` when the caller has built it (``reproduce`` builds it once for its payload and its
        figures); default None: built here.

    Returns
    -------
    list of Path
        The PNGs written (or kept).

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.page.registry import Context
    >>> folder = Path(tempfile.mkdtemp())
    >>> written = write_figures(Context(cache_dir=folder / "cache", first_seed=0), folder)  # doctest: +ELLIPSIS
    [figures] skipped tournament_accuracy.png: payload part 'readouts' is absent: ...
    >>> [p.name for p in written]  # the one figure that needs no trained head
    ['kernel_ruler.png']
    """
    written, skipped = draw_figures(viz_payload(ctx) if payload is None else payload, Path(out_dir) / "figures")
    for name, why in skipped.items():
        print(f"[figures] skipped {name}.png: {why}")
    if written:  # a progress line (stderr; none with --quiet), not part of the report
        ctx.log(f"[figures] wrote {', '.join(str(p) for p in written)}")
    return written
