"""Page section ``long``: the tournament's heads far past their window (beyond the article).

Computed by :func:`poskernels.experiments.long_context.run_long_context` (cached); keys of ``numbers.json``:

- ``long.length.accuracy[reader][n]`` (mean over seeds), ``.stderr``, ``.per_seed``: the cue task at n = 32 … 10^5;
- ``long.distance.accuracy[reader][r]``, ``.stderr``, ``.per_seed``: the needle ``r`` positions back, r = 1 … 10^5;
- ``long.distance.horizon[seed]``: each ALiBi head's ``W``, horizon ``W / s``, certified cut ``D`` and its
  accuracy inside half the horizon and beyond twice it (Theorem 3 (iii)).
"""

from __future__ import annotations

from ..experiments.long_context import run_long_context
from .registry import READER_LABELS, Context, Section, cell, format_table, register

__all__: list[str] = []


def _compute(ctx: Context) -> dict:
    return run_long_context(ctx.cache_dir, ctx.log)


def _curve_table(part: dict, axis: str, title: str) -> str:
    xs = part[axis]
    rows = [[READER_LABELS.get(r, r), *(cell(part["accuracy"][r][x]) for x in xs)] for r in part["accuracy"]]
    return format_table(["reader", *xs], rows, title=title)


def _render(data: dict) -> str:
    k = len(data["seeds"])
    note = f"mean of {k} seeds, {data['count']} sequences a point; ALiBi read to its cut, eps = {data['eps']:g}"
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


register(
    Section(
        "long",
        "Far past the window — accuracy against length and against the needle's offset",
        _compute,
        _render,
        trained=True,
    )  # fmt: skip
)
