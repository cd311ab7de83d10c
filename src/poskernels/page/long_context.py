"""Page section ``long``: the tournament's heads far past their window (beyond the article).

Computed by :func:`poskernels.experiments.long_context.run_long_context` (cached); keys of ``numbers.json``:

- ``long.length.accuracy[reader][n]`` (mean over seeds), ``.stderr``, ``.per_seed``: the cue task at n = 32 … 10^5;
- ``long.distance.accuracy[reader][r]``, ``.stderr``, ``.per_seed``: the needle ``r`` positions back, r = 1 … 10^5;
- ``long.distance.horizon[seed]``: each ALiBi head's ``W``, horizon ``W / s``, certified cut ``D`` and its
  accuracy inside half the horizon and beyond twice it (Theorem 3 (iii));
- ``long.distance.tail_cut[scheme][seed]``: each Kerple head's learned ``r1``, ``r2``, content width ``W`` and the
  certified cut ``D`` its tail bound allows (None where the tail is heavy; :mod:`poskernels.theory.kerple_fire`).
"""

from __future__ import annotations

from ..experiments.long_context import run_long_context
from ..experiments.readers import reader_label
from .registry import Context, Section, cell, format_table

__all__ = ["LONG", "markdown"]


def _compute(ctx: Context) -> dict:
    return run_long_context(ctx.cache_dir, ctx.log, seeds=ctx.seeds)


def _curve_table(part: dict, axis: str, title: str) -> str:
    xs = part[axis]
    rows = [[reader_label(r), *(cell(part["accuracy"][r][x]) for x in xs)] for r in part["accuracy"]]
    return format_table(["reader", *xs], rows, title=title)


def _render(data: dict) -> str:
    k = len(data["seeds"])
    cut = "ALiBi and Kerple read to their cuts" if data["distance"].get("tail_cut") else "ALiBi read to its cut"
    note = f"mean of {k} seeds, {data['count']} sequences a point; {cut}, eps = {data['eps']:g}"
    length = _curve_table(data["length"], "lengths", f"Cue task: accuracy against length n ({note})")
    distance = _curve_table(
        data["distance"], "offsets", "Needle: accuracy against its offset r (sequence length max(32, r + 1))"
    )
    rows = [
        [seed, row["W"], cell(row["horizon"], 1), row["cut_D"], cell(row["inside_half"]), cell(row["beyond_twice"])]
        for seed, row in data["distance"]["horizon"].items()
    ]
    horizon = format_table(
        ["seed", "W", "horizon W/s", "cut D", "inside half (r <= W/2s)", "beyond twice (r > 2W/s)"],
        rows,
        title="ALiBi heads: Theorem 3's horizon against the needle's offset",
    )
    return f"{length}\n\n{distance}\n\n{horizon}"


def _md_table(part: dict, axis: str, keep) -> list[str]:
    xs = [x for x in part[axis] if int(x) in keep]
    lines = ["| reader | " + " | ".join(f"{int(x):,}" for x in xs) + " |", "|---" * (len(xs) + 1) + "|"]
    for r, row in part["accuracy"].items():
        cells = [cell(row[x]) if row[x] is None else f"{row[x]:.3f} ± {part['stderr'][r][x]:.3f}" for x in xs]
        lines.append(f"| {reader_label(r)} | " + " | ".join(cells) + " |")
    return lines


def markdown(data: dict) -> str:
    """The documentation's tables of this section, generated from ``numbers.json``'s ``long`` (mean ± standard error).

    Parameters
    ----------
    data : dict
        ``numbers.json``'s ``long`` section (``length`` and ``distance`` parts, ``seeds``, ``count``, ``eps``).

    Returns
    -------
    str
        Markdown: the cue task against length, the needle against offset, and the ALiBi heads' horizons.

    Examples
    --------
    >>> part = {"accuracy": {"alibi": {"32": 1.0, "64": 0.5}}, "stderr": {"alibi": {"32": 0.0, "64": 0.1}},
    ...         "lengths": ["32", "64"], "offsets": ["32", "64"]}
    >>> data = {"length": part, "distance": {**part, "horizon": {"0": {"W": 20.0, "horizon": 40.0, "cut_D": 97,
    ...         "inside_half": 1.0, "beyond_twice": 0.125}}}, "seeds": [0], "count": 10, "eps": 1e-12}
    >>> print(markdown(data).splitlines()[4])
    | ALiBi | 1.000 ± 0.000 | 0.500 ± 0.100 |
    """
    k, count = len(data["seeds"]), data["count"]
    lines = [
        f"Cue task, accuracy against length n (mean ± standard error over {k} seeds, {count} sequences a point):",
        "",
    ]
    lines += _md_table(data["length"], "lengths", {32, 64, 256, 1024, 4096, 16384, 100_000})
    lines += ["", f"Needle, accuracy against its offset r (sequence length max(32, r + 1); {k} seeds):", ""]
    lines += _md_table(data["distance"], "offsets", {1, 16, 32, 48, 64, 96, 128, 256, 1024, 16384, 100_000})
    lines += ["", "ALiBi heads: horizon W/s (Theorem 3 (iii)) and needle accuracy on each side of it:", ""]
    lines += [
        "| seed | W | horizon W/s | cut D | inside half the horizon | beyond twice the horizon |",
        "|---" * 6 + "|",
    ]
    for seed, row in data["distance"]["horizon"].items():
        lines.append(
            f"| {seed} | {row['W']:.2f} | {row['horizon']:.1f} | {row['cut_D']} | {cell(row['inside_half'])} "
            f"| {cell(row['beyond_twice'])} |"
        )
    return "\n".join(lines)


LONG = Section(
    "long",
    "Far past the window — accuracy against length and against the needle's offset",
    _compute,
    _render,
    trained=True,
)
