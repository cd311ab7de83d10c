"""The lab's "Real models" view: the shipped probe results (``poskernels/census/data/probe/*.json``, written by
``make probe``) read one head at a time, its kernel over offsets and plane energies beside the census's predictions.

The lab server answers ``GET /probe/models`` (:func:`models`) and ``GET /probe/view?name=NAME&layer=L&head=H``
(:func:`view_of_query`); bad input is one line (status 400).  The view only reads: it never runs a model.

The page (``static/js/probe.js``) computes nothing: every axis (limits, ticks, label), every line of text and every
figure's wording comes from here, as the census view's chart does.  A result file may carry keys this view does not
know (they are ignored) and may lack the optional ones (``loss``, ``absolute``, ``census``, ``past_window``: their
part is left out); a file without the keys every result has is not listed.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from urllib.parse import parse_qs

from ..errors import PosKernelsError
from .common import axis

__all__ = ["REQUIRED", "figures", "models", "num", "past_window", "read_results", "view", "view_of_query"]

#: What every listed result carries (a file without one of these is not a probe result this view reads).
REQUIRED = ("config", "provenance", "layers", "offsets")


@lru_cache(maxsize=1)
def _results() -> dict[str, dict]:
    return read_results(resources.files("poskernels.census") / "data" / "probe")


def read_results(folder) -> dict[str, dict]:
    """The probe results in ``folder`` (``NAME.json`` each), by name; a file without :data:`REQUIRED` is left out.

    Parameters
    ----------
    folder : pathlib.Path or importlib.resources.abc.Traversable
        Where the ``*.json`` results are (a missing folder holds none).

    Returns
    -------
    dict of str to dict
        Each whole result, by its file's name without ``.json``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (pathlib.Path(d) / "x.json").write_text('{"config": {}}')  # not a whole result
    ...     read_results(pathlib.Path(d))
    {}
    """
    if not folder.is_dir():
        return {}
    found = {f.name[:-5]: json.loads(f.read_text()) for f in sorted(folder.iterdir(), key=lambda f: f.name)
             if f.name.endswith(".json")}  # fmt: skip
    return {n: r for n, r in found.items() if isinstance(r, dict) and all(k in r for k in REQUIRED)}


def _finite(values) -> list:
    return [None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v for v in values]


def models() -> list[dict]:
    """The shipped results: name, class, layers, heads, tokens, positions.

    Returns
    -------
    list of dict
        One per shipped result, in its file's order.

    Examples
    --------
    >>> names = [m["name"] for m in models()]
    >>> {"minilm-l6", "smollm2-135m"} <= set(names), names == sorted(names, key=lambda n: n + ".json")
    (True, True)
    """
    return [{"name": n, "class": r.get("class", ""), "layers": r["config"]["layers"], "heads": r["config"]["heads"],
             "tokens": r["provenance"].get("tokens"), "positions": r["config"].get("positions", "")}
            for n, r in _results().items()]  # fmt: skip


def num(x) -> str:
    """A figure as the page shows it: an integer whole, a float to 4 significant digits (JavaScript's
    ``toPrecision(4)``, as the census view writes its numbers), a missing one as a dash.

    Parameters
    ----------
    x : object
        The figure (None, a bool, NaN or infinity: a dash).

    Returns
    -------
    str

    Examples
    --------
    >>> num(3616), num(0.48518518), num(2.8083741721814597e-29), num(None), num(float("nan"))
    ('3616', '0.4852', '2.808e-29', '—', '—')
    """
    if x is None or isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return "—"
    if isinstance(x, int):
        return str(x)
    return f"{x:#.4g}".replace("e-0", "e-").replace("e+0", "e+")


def _step(values) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) that cuts the values' range into about five."""
    v = [x for x in values if x is not None]
    span = (max(v) - min(v)) if v else 1.0
    raw = (span or abs(v[0]) or 1.0) / 5
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _offset_axis(offsets) -> dict:
    top = max(offsets)
    ticks = [0] + [10**k for k in range(int(math.log10(max(top, 1))) + 1)]
    return {"min": 0, "max": top, "log1p": True, "log": False, "ticks": ticks, "label": "offset r (axis: log(1 + r))"}


def figures(r: dict) -> list[dict]:
    """The model's own figures (every head together), each ``{"key", "label", "text"}``, those present only.

    Parameters
    ----------
    r : dict
        A probe result (its ``loss``, ``summary`` and ``config``).

    Returns
    -------
    list of dict

    Examples
    --------
    >>> [f["label"] for f in figures({"loss": 2.5, "summary": {"heads": 4, "sink_share": 0.25}})]
    ['loss on the probe text (nats/token)', 'heads read', 'attention sinks (share of heads)']
    """
    s = r.get("summary", {}) if isinstance(r.get("summary"), dict) else {}
    rows = [("loss", r.get("loss"), "loss on the probe text (nats/token)"),
            ("heads", s.get("heads"), "heads read"),
            ("sink_share", s.get("sink_share"), "attention sinks (share of heads)"),
            ("previous_token_share", s.get("previous_token_share"), "previous-token heads (share of heads)"),
            ("max_plane_sum_error", s.get("max_plane_sum_error"), "largest |Σ planes − kernel| (Proposition 3 (iii))"),
            ("mean_kernel_error", s.get("mean_kernel_error"), "mean sampling error of a kernel")]  # fmt: skip
    if "sink_threshold" in s:
        rows[2] = (*rows[2][:2], f"attention sinks (share of heads, first-token weight > {num(s['sink_threshold'])})")
    if r.get("config", {}).get("positions") != "RoPE":
        rows = [row for row in rows if row[0] != "max_plane_sum_error"]  # planes are RoPE's
    return [{"key": k, "label": label, "text": num(v)} for k, v, label in rows if isinstance(v, int | float)]


def past_window(r: dict) -> dict | None:
    """The loss by position past the training window, one curve per map, if the result carries one
    (``past_window: {"window": N, "maps": {name: {"bins": [...], "loss": [...]}}}``); None otherwise or if malformed.

    Parameters
    ----------
    r : dict
        A probe result.

    Returns
    -------
    dict or None
        ``window``, ``maps`` (``key``, ``label``, ``bins``, ``loss`` each) and the axes ``x`` and ``y``.

    Examples
    --------
    >>> pw = past_window({"past_window": {"window": 4, "maps": {"none": {"bins": [2, 6], "loss": [1.0, 3.0]}}}})
    >>> pw["maps"][0]["key"], pw["window"], pw["y"]["min"] <= 1.0 and pw["y"]["max"] >= 3.0
    ('none', 4, True)
    >>> past_window({"past_window": {"maps": "?"}}) is None
    True
    """
    part = r.get("past_window")
    if not isinstance(part, dict) or not isinstance(part.get("maps"), dict):
        return None
    maps = []
    for key, m in part["maps"].items():
        if isinstance(m, dict) and isinstance(m.get("bins"), list) and isinstance(m.get("loss"), list) \
                and len(m["bins"]) == len(m["loss"]) > 0:  # fmt: skip
            maps.append({"key": str(key), "label": str(m.get("label", key)), "bins": m["bins"],
                         "loss": _finite(m["loss"])})  # fmt: skip
    losses = [v for m in maps for v in m["loss"] if isinstance(v, int | float)]
    if not losses:
        return None
    window = part.get("window") if isinstance(part.get("window"), int | float) else None
    bins = [b for m in maps for b in m["bins"]]
    x = axis(bins + ([window] if window else []), _step(bins), "position in the text (tokens)")
    return {"window": window, "maps": maps, "x": x, "y": axis(losses, _step(losses), "loss (nats/token)")}


def _census_lines(c: dict, planes: int) -> list[str]:
    base = c["base"]
    base = int(base) if isinstance(base, float) and base.is_integer() else base
    lines = [f"RoPE base {num(base)}, training length {num(c['training_length'])}"]
    if c.get("critical_dimension") is not None:
        lines.append(f"critical dimension d_c = {num(c['critical_dimension'])}: the planes from "
                     f"j = {c['critical_dimension'] // 2} on never complete a turn within the training length")
    never = c.get("never_full_turn") or []
    if never:
        lines.append(f"{len(never)} of {planes} planes never complete a turn within the window: "
                     f"j = {min(never)}..{max(never)}")  # fmt: skip
    if c.get("first_zero") is not None:
        lines.append(f"first zero of κ_d at offset r = {num(c['first_zero'])}")
    return lines


def _absolute(r: dict, layer: int, head: int) -> dict | None:
    a = r.get("absolute")
    if not isinstance(a, dict):
        return None
    rnd = a.get("random_table_defect", {})
    rows = [("learned table (its Gram matrix P Pᵀ)", num(a.get("gram_defect"))),
            ("sinusoidal code", num(a.get("sinusoidal_defect"))),
            (f"random tables ({rnd.get('draws', '?')} draws; 90% in [{num(rnd.get('lo'))}, {num(rnd.get('hi'))}])",
             num(rnd.get("mean")))]  # fmt: skip
    out = {"positions": a.get("positions"), "rows": rows, "head": None,
           "head_note": "the head's position–position term is read on layer 0, where the table enters",
           "title": "Toeplitz defect (Theorem 1): the share of the Gram matrix that no function of the offset explains"}
    heads = a.get("heads")
    if layer == 0 and isinstance(heads, list) and head < len(heads):  # the position–position term, layer 0
        h = heads[head]
        out["head"] = [(f"layer 0 head {head}: P W_Q W_Kᵀ Pᵀ", num(h.get("defect"))),
                       (f"random W_Q W_Kᵀ of the same rank and norm (90% in [{num(h.get('random_lo'))}, "
                        f"{num(h.get('random_hi'))}])", num(h.get("random_mean")))]  # fmt: skip
    return out


def _provenance(p: dict) -> list[tuple[str, str]]:
    rows = [("model file", f"{p.get('file', '?')} ({p.get('source', '?')})"), ("model SHA-256", p.get("sha256", "?")),
            ("text", p.get("text", "?")), ("text SHA-256", p.get("text_sha256", "?")),
            ("tokens", num(p.get("tokens"))), ("machine", p.get("machine", "?")), ("command", p.get("command", "?"))]
    versions = p.get("versions")
    if isinstance(versions, dict):
        rows.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    return [(k, str(v)) for k, v in rows]  # fmt: skip


def view(name: str, layer: int, head: int) -> dict:
    """One head of a shipped result: its kernel over offsets, plane split and energies, the census's predictions,
    the model's figures and provenance, and the axes the page draws them on.

    Parameters
    ----------
    name : str
        A shipped result (:func:`models`).
    layer, head : int
        The head read.

    Returns
    -------
    dict
        What the page draws of that head.

    Raises
    ------
    PosKernelsError
        If no result has that name, or the layer or head is out of range.

    Examples
    --------
    >>> v = view("smollm2-135m", 0, 0)
    >>> v["census"]["critical_dimension"], len(v["q_energy"]), len(v["kernel"]["offsets"]) == len(v["kernel"]["mean"])
    (40, 32, True)
    >>> view("minilm-l6", 0, 1)["absolute"]["rows"][1]
    ('sinusoidal code', '2.808e-29')
    >>> view("smollm2-135m", 99, 0)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: layer 99, head 0: accepted layers 0..29 and heads 0..8
    """
    results = _results()
    if name not in results:
        raise PosKernelsError(f"no probe result named {name[:80]!r}; accepted: {', '.join(results) or 'none shipped'}")
    r = results[name]
    layers, heads = r["config"]["layers"], r["config"]["heads"]
    if not (0 <= layer < layers and 0 <= head < heads):
        raise PosKernelsError(f"layer {layer}, head {head}: accepted layers 0..{layers - 1} and heads 0..{heads - 1}")
    lay = r["layers"][layer]
    h = lay["heads"][head]
    census = r.get("census", {}).get(str(lay.get("type")))
    mean = _finite(h["kernel"])
    planes = r["config"].get("positions") == "RoPE" and bool(h.get("q_energy"))
    energies = (h.get("q_energy") or []) + (h.get("k_energy") or [])
    out = {
        "name": name, "layer": layer, "head": head, "positions": r["config"].get("positions"),
        "type": None if lay.get("type") in (None, "None") else lay["type"],  # one layer type: no name
        "kernel": {"offsets": r["offsets"], "mean": mean, "error": h.get("kernel_error"),
                   "x": _offset_axis(r["offsets"]), "y": axis(mean, _step(mean), "mean logit q·k / √d")},
        "plane_split": {"offsets": r.get("plane_offsets"), "planes": [_finite(p) for p in h.get("plane_split", [])]},
        "q_energy": h.get("q_energy"), "k_energy": h.get("k_energy"),
        "planes": planes,
        "first_token": h.get("first_token"), "previous_token": h.get("previous_token"),
        "census": None if census is None else {k: census.get(k) for k in ("base", "training_length",
                                                                            "critical_dimension", "first_zero",
                                                                            "never_full_turn")},
        "absolute": _absolute(r, layer, head),
        "provenance": r["provenance"],
        "provenance_rows": _provenance(r["provenance"]),
        "figures": figures(r),
        "head_figures": [{"label": "mean weight on the first token", "text": num(h.get("first_token"))},
                         {"label": "mean weight on the previous token", "text": num(h.get("previous_token"))},
                         {"label": "sampling error of the kernel", "text": num(h.get("kernel_error"))}],
        "past_window": past_window(r),
    }  # fmt: skip
    if planes:
        n = len(h["q_energy"])
        ticks = list(range(0, n, 8 if n > 40 else 4))
        label = "plane j (fast to slow; shaded: never completes a turn within the window)"
        out["energy"] = {"x": {"min": -0.5, "max": n - 0.5, "log": False, "ticks": ticks, "label": label},
                         "y": axis([0.0] + energies, _step([0.0] + energies), "mean chunk norm on the text")}
    if census is not None:
        out["census"]["lines"] = _census_lines(census, len(h.get("q_energy") or []))
    return out


def view_of_query(query: str) -> dict:
    """:func:`view` of ``name=...&layer=...&head=...`` (layer and head default to 0).

    Parameters
    ----------
    query : str
        The request's query string.

    Returns
    -------
    dict
        :func:`view`'s.

    Raises
    ------
    PosKernelsError
        If layer or head is not an integer, or :func:`view` refuses them.

    Examples
    --------
    >>> view_of_query("name=smollm2-135m&layer=1&head=2")["layer"]
    1
    >>> view_of_query("name=smollm2-135m&layer=x")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: layer and head must be integers; got 'name=smollm2-135m&layer=x'
    """
    q = parse_qs(query)
    name = q.get("name", [""])[-1]
    try:
        layer, head = int(q.get("layer", ["0"])[-1]), int(q.get("head", ["0"])[-1])
    except ValueError:
        raise PosKernelsError(f"layer and head must be integers; got {query[:80]!r}") from None
    return view(name, layer, head)
