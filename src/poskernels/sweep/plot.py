"""``poskernels plot STORE``: accuracy against test length per scheme, with a band over seeds.

Rows of the store that are done are grouped into curves: one per scheme (``rope+pi`` for a re-read
RoPE head), split further by every other setting that varies across the store (``rope (d=32)``).
Each curve is the mean over training seeds at each test length, inside a band from the lowest to
the highest seed.  A length where a head is undefined (a learned table past its rows) is left out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..atomic import Output, check_output, save_figure
from ..errors import PosKernelsError
from .grid import SETTINGS
from .store import Store, store_files

__all__ = ["curves", "draw", "plot_store"]

_NOT_A_CURVE = ("seed", "scheme", "extension", "test_lengths")
_STYLES, _MARKERS = ("-", "--", ":", "-."), ("o", "s", "^", "D")


def _label(config: dict, varying: list[str]) -> str:
    extension = config.get("extension", "none")
    name = str(config["scheme"]) + ("" if extension in ("none", None) else f"+{extension}")
    extra = ", ".join(f"{k}={v:g}" if isinstance(v := config.get(k), float) else f"{k}={v}" for k in varying)
    return f"{name} ({extra})" if extra else name


def curves(rows: list[dict]) -> dict[str, dict[int, tuple[float, float, float, int]]]:
    """Per curve and test length: (mean, lowest, highest, number of seeds) of the accuracy.

    Parameters
    ----------
    rows : list of dict
        Rows of :meth:`Store.rows` (only ``done`` ones are read).

    Examples
    --------
    >>> rows = [{"status": "done", "config": {"scheme": "rope", "extension": "none", "seed": s, "d": 16},
    ...          "metrics": {"accuracy": {"32": a, "64": b}}} for s, a, b in [(0, 1.0, 0.9), (1, 0.8, None)]]
    >>> curves(rows)
    {'rope': {32: (0.9, 0.8, 1.0, 2), 64: (0.9, 0.9, 0.9, 1)}}
    """
    done = [r for r in rows if r["status"] == "done" and r["metrics"]]
    varying = [k for k in SETTINGS if k not in _NOT_A_CURVE and len({repr(r["config"].get(k)) for r in done}) > 1]
    grouped: dict[str, dict[int, list[float]]] = {}
    for r in done:
        per_length = grouped.setdefault(_label(r["config"], varying), {})
        for n, acc in r["metrics"]["accuracy"].items():
            if acc is not None:
                per_length.setdefault(int(n), []).append(acc)
    out = {}
    for label in sorted(grouped):
        out[label] = {}
        for n in sorted(grouped[label]):
            a = np.asarray(grouped[label][n])  # (seeds,)
            out[label][n] = (float(a.mean()), float(a.min()), float(a.max()), int(a.size))
    return out


def draw(data: dict, path, title: str = "Accuracy against test length") -> Path | str:
    """Draw :func:`curves` output to ``path`` (a path, ``"-"`` or a checked :class:`~poskernels.atomic.Output`).

    The format is the suffix's (PNG without one, and on standard output); matplotlib's Agg canvas, no pyplot state.
    Returns the path written (``"-"`` for standard output).
    """
    out = path if isinstance(path, Output) else check_output(path, "--out", figure=True)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not data:
        raise PosKernelsError("the store has no finished point to plot")
    fig = Figure(figsize=(7.5, 4.5), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    lengths = sorted({n for c in data.values() for n in c})
    # one colour per scheme (and map), one line style per value of the other varying settings
    names = list(dict.fromkeys(label.split(" (")[0] for label in data))
    extras = list(dict.fromkeys(label.partition(" (")[2] for label in data))
    palette = [f"C{i}" for i in range(10)] + ["#444444", "#999933", "#882255", "#44aa99"]
    for label, c in data.items():
        name, _, extra = label.partition(" (")
        style = extras.index(extra)
        color = palette[names.index(name) % len(palette)]
        n = np.array(sorted(c))  # (lengths,)
        mean, lo, hi = (np.array([c[k][i] for k in n]) for i in range(3))  # each (lengths,)
        ax.plot(n, mean, color=color, ls=_STYLES[style % 4], marker=_MARKERS[style % 4], ms=3.5, lw=1.5, label=label)
        ax.fill_between(n, lo, hi, color=color, alpha=0.15, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("test length n")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{title} (line: mean over seeds; band: lowest to highest seed)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6.5, loc="best", ncols=1 + (len(data) > 6) + (len(data) > 16))
    save_figure(fig, out)  # the format from the suffix, as fig.savefig(path) chose it
    return out.given if out.is_stdout else Path(out.given)


def plot_store(store: Store, path) -> tuple[Path | str, dict]:
    """Curves of ``store`` drawn to ``path`` (one of the store's own files is refused); returns the path, the curves."""
    out = path if isinstance(path, Output) else check_output(path, "--out", inputs=store_files(store.path), figure=True)
    data = curves(store.rows("done"))
    return draw(data, out), data
