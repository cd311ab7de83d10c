"""``poskernels plot STORE``: accuracy against test length per scheme, with a band over seeds.

Rows of the store that are done are grouped into curves: one per scheme (``rope+pi`` for a re-read
RoPE head), split further by every other setting that varies across the store (``rope (d=32)``).
Each curve is the mean over training seeds at each test length, inside a band from the lowest to
the highest seed.  A length where a head is undefined (a learned table past its rows) is left out.

A store of a large grid holds dozens of curves: ``--where KEY=VALUE`` (:func:`select`) keeps the points whose
setting ``KEY`` is ``VALUE`` (repeatable: all must hold), and ``--facet KEY`` draws one panel per value of ``KEY``
(:func:`facets`), so each panel holds the curves that differ in the other settings.  The legend sits outside the
panels, beside them, never over the data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..atomic import Output, check_output, save_figure
from ..errors import PosKernelsError
from .settings import SETTINGS
from .store import Store, store_files

__all__ = ["curves", "draw", "facets", "parse_where", "plot_store", "select"]

_NOT_A_CURVE = ("seed", "scheme", "extension", "test_lengths")
_STYLES, _MARKERS = ("-", "--", ":", "-."), ("o", "s", "^", "D")


def _label(config: dict, varying: list[str]) -> str:
    extension = config.get("extension", "none")
    name = str(config["scheme"]) + ("" if extension in ("none", None) else f"+{extension}")
    extra = ", ".join(f"{k}={v:g}" if isinstance(v := config.get(k), float) else f"{k}={v}" for k in varying)
    return f"{name} ({extra})" if extra else name


def parse_where(items: list[str] | None) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` as a dict, each KEY a sweep setting.

    Parameters
    ----------
    items : list of str or None
        The ``--where`` arguments (None: none).

    Returns
    -------
    dict of str to str
        ``{KEY: VALUE}``, the values as written.

    Raises
    ------
    PosKernelsError
        If an item is not ``KEY=VALUE``, KEY is not a setting, or one KEY is given two values.

    Examples
    --------
    >>> parse_where(["scheme=rope", "d=32"])
    {'scheme': 'rope', 'd': '32'}
    >>> parse_where(["width=32"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --where 'width=32': unknown setting 'width'; accepted: scheme, embedding, d, ...
    """
    out: dict[str, str] = {}
    for item in items or []:
        key, eq, value = str(item).partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise PosKernelsError(f"--where {item!r}: expected KEY=VALUE, e.g. --where scheme=rope")
        if key not in SETTINGS:
            raise PosKernelsError(f"--where {item!r}: unknown setting {key!r}; accepted: {_settings_list()}")
        if key in out and out[key] != value:
            raise PosKernelsError(f"--where {item!r}: {key} is already required to be {out[key]!r}")
        out[key] = value
    return out


def _settings_list() -> str:
    return ", ".join(SETTINGS)


def _matches(value, text: str) -> bool:
    """Whether a setting's stored value is the one written on the command line."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() == text.lower()
    if isinstance(value, int | float):
        try:
            return float(value) == float(text)
        except ValueError:
            return False
    if isinstance(value, list):
        return [str(v) for v in value] == [t.strip() for t in text.strip("[]").split(",") if t.strip()]
    return str(value) == text


def select(rows: list[dict], where: dict[str, str]) -> list[dict]:
    """The rows whose configuration has every ``where[KEY]`` as its ``KEY`` setting.

    Parameters
    ----------
    rows : list of dict
        Rows of :meth:`Store.rows`.
    where : dict of str to str
        :func:`parse_where`'s output; a number matches its value, a list its comma-separated items.

    Returns
    -------
    list of dict
        The matching rows, in order.

    Examples
    --------
    >>> rows = [{"config": {"scheme": s, "d": d}} for s in ("rope", "alibi") for d in (16, 32)]
    >>> [(r["config"]["scheme"], r["config"]["d"]) for r in select(rows, {"scheme": "rope", "d": "32"})]
    [('rope', 32)]
    """
    return [r for r in rows if all(_matches(r["config"].get(k), v) for k, v in where.items())]


def facets(rows: list[dict], key: str) -> dict[str, list[dict]]:
    """The rows split by the value of setting ``key`` (labels ``key=value``, in the values' order).

    Parameters
    ----------
    rows : list of dict
        Rows of :meth:`Store.rows`.
    key : str
        A sweep setting.

    Returns
    -------
    dict of str to list of dict
        ``{"key=value": rows}``, numbers in increasing order, then the other values.

    Raises
    ------
    PosKernelsError
        If ``key`` is not a setting.

    Examples
    --------
    >>> rows = [{"config": {"scheme": "rope", "d": d}} for d in (32, 16, 32)]
    >>> {k: len(v) for k, v in facets(rows, "d").items()}
    {'d=16': 1, 'd=32': 2}
    >>> facets(rows, "width")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --facet 'width': unknown setting; accepted: scheme, embedding, d, ...
    """
    if key not in SETTINGS:
        raise PosKernelsError(f"--facet {key!r}: unknown setting; accepted: {_settings_list()}")
    distinct = {repr(r["config"].get(key)): r["config"].get(key) for r in rows}  # settings are JSON values

    def order(v):
        return (0, v, "") if isinstance(v, int | float) and not isinstance(v, bool) else (1, 0, repr(v))

    by: dict[str, list[dict]] = {}
    for text, value in sorted(distinct.items(), key=lambda kv: order(kv[1])):
        by[f"{key}={_shown(value)}"] = [r for r in rows if repr(r["config"].get(key)) == text]
    return by


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def curves(rows: list[dict], exclude: tuple[str, ...] = ()) -> dict[str, dict[int, tuple[float, float, float, int]]]:
    """Per curve and test length: (mean, lowest, highest, number of seeds) of the accuracy.

    Parameters
    ----------
    rows : list of dict
        Rows of :meth:`Store.rows` (only ``done`` ones are read).
    exclude : tuple of str
        Settings that do not split curves even when they vary (a facet's key: each panel holds one value).

    Returns
    -------
    dict
        ``{curve label: {test length: (mean, lowest, highest, seeds)}}``; a curve's label joins the settings that
        vary between curves.

    Examples
    --------
    >>> rows = [{"status": "done", "config": {"scheme": "rope", "extension": "none", "seed": s, "d": 16},
    ...          "metrics": {"accuracy": {"32": a, "64": b}}} for s, a, b in [(0, 1.0, 0.9), (1, 0.8, None)]]
    >>> curves(rows)
    {'rope': {32: (0.9, 0.8, 1.0, 2), 64: (0.9, 0.9, 0.9, 1)}}
    """
    done = [r for r in rows if r["status"] == "done" and r["metrics"]]
    varying = [
        k
        for k in SETTINGS
        if k not in _NOT_A_CURVE and k not in exclude and len({repr(r["config"].get(k)) for r in done}) > 1
    ]
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


def draw(
    data: dict, path, title: str = "Accuracy against test length", panels: dict[str, dict] | None = None
) -> Path | str:
    """Draw :func:`curves` output to ``path`` (a path, ``"-"`` or a checked :class:`~poskernels.atomic.Output`).

    The format is the suffix's (PNG without one, and on standard output); matplotlib's Agg canvas, no pyplot state.
    ``panels`` (``{facet label: curves}``) draws one panel per facet, side by side with a shared y axis, instead of
    ``data`` alone; a curve keeps its colour and line style across panels.  The legend is outside the panels.

    Parameters
    ----------
    data : dict
        :func:`curves` output.
    path : str, path-like or Output
        Where to write (``"-"``: standard output).
    title : str
        The figure's title.
    panels : dict of str to dict, optional
        One :func:`curves` output per facet (:func:`facets`), drawn instead of ``data``.

    Returns
    -------
    Path or str
        The path written (``"-"`` for standard output).

    Raises
    ------
    PosKernelsError
        If there is no curve to draw, or ``path`` is refused as an output.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> draw({"rope": {32: (0.9, 0.8, 1.0, 2)}}, pathlib.Path(tempfile.mkdtemp()) / "s.png").name
    's.png'
    >>> draw({}, pathlib.Path(tempfile.mkdtemp()) / "s.png")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the store has no finished point to plot
    """
    out = path if isinstance(path, Output) else check_output(path, "--out", figure=True)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = {"": data} if panels is None else panels
    panels = {k: v for k, v in panels.items() if v}
    if not panels:
        raise PosKernelsError("the store has no finished point to plot")
    labels = list(dict.fromkeys(label for c in panels.values() for label in c))
    fig = Figure(figsize=(3.2 * len(panels) + 3.2, 4.3), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    # one colour per scheme (and map), one line style per value of the other varying settings
    names = list(dict.fromkeys(label.split(" (")[0] for label in labels))
    extras = list(dict.fromkeys(label.partition(" (")[2] for label in labels))
    palette = [f"C{i}" for i in range(10)] + ["#444444", "#999933", "#882255", "#44aa99"]
    handles = {}
    for ax, (facet, panel) in zip(axes, panels.items()):
        lengths = sorted({n for c in panel.values() for n in c})
        for label, c in panel.items():
            name, _, extra = label.partition(" (")
            style = extras.index(extra)
            color = palette[names.index(name) % len(palette)]
            n = np.array(sorted(c))  # (lengths,)
            mean, lo, hi = (np.array([c[k][i] for k in n]) for i in range(3))  # each (lengths,)
            (handles[label],) = ax.plot(
                n, mean, color=color, ls=_STYLES[style % 4], marker=_MARKERS[style % 4], ms=3.5, lw=1.5, label=label
            )
            ax.fill_between(n, lo, hi, color=color, alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(n) for n in lengths])
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("test length n")
        ax.set_title(facet, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("accuracy")
    fig.suptitle(f"{title} (line: mean over seeds; band: lowest to highest seed)", fontsize=9)
    fig.legend(
        [handles[k] for k in labels], labels, loc="outside right upper", fontsize=6.5, ncols=1 + (len(labels) > 24)
    )
    save_figure(fig, out)  # the format from the suffix, as fig.savefig(path) chose it
    return out.given if out.is_stdout else Path(out.given)


def plot_store(
    store: Store, path, where: dict[str, str] | None = None, facet: str | None = None
) -> tuple[Path | str, dict]:
    """Curves of ``store`` (the points matching ``where``; one panel per value of ``facet``) drawn to ``path``.

    ``path`` as for :func:`draw`; one of the store's own files is refused.

    Parameters
    ----------
    store : Store
        The sweep's results.
    path : str, pathlib.Path or Output
        Where to draw (``"-"``: standard output); the suffix names the format (PNG without one).
    where : dict of str to str, optional
        Keep only the points whose settings have these values (:func:`parse_where`); default all.
    facet : str, optional
        A setting whose values each get a panel; default None (one panel).

    Returns
    -------
    tuple
        The path written (``"-"`` for standard output) and the curves drawn, labelled ``"facet | curve"`` when
        faceted.

    Raises
    ------
    PosKernelsError
        If `path` is one of the store's files or cannot be written, or no point is left to draw.

    Examples
    --------
    >>> import tempfile
    >>> from poskernels.sweep.grid import parse_grid
    >>> root = Path(tempfile.mkdtemp())
    >>> with Store(root / "s.sqlite") as s:
    ...     _ = s.add_points([("k", parse_grid("").points[0])], "v")
    ...     s.finish({"k": {"metrics": {"accuracy": {"32": 0.5}, "final_loss": 1.0}}}, run_id=1)
    ...     out, drawn = plot_store(s, root / "p.png")
    >>> out == root / "p.png", drawn
    (True, {'nope': {32: (0.5, 0.5, 0.5, 1)}})
    """
    out = path if isinstance(path, Output) else check_output(path, "--out", inputs=store_files(store.path), figure=True)
    rows = store.rows("done")
    if where:
        rows = select(rows, where)
        if not rows:
            shown = " ".join(f"{k}={v}" for k, v in where.items())
            raise PosKernelsError(f"no finished point of the store has {shown}")
    if facet is None:
        data = curves(rows)
        return draw(data, out), data
    panels = {label: curves(part, exclude=(facet,)) for label, part in facets(rows, facet).items()}
    flat = {f"{f} | {c}": v for f, panel in panels.items() for c, v in panel.items()}
    return draw(flat, out, panels=panels), flat
