"""Page sections for "Relative position: biases and the ALiBi kernel".

Keys of ``numbers.json``:

- ``def3``: T5's buckets (Definition 3): the first offset of the last bucket and where the log map reaches it;
- ``thm3``: ALiBi's tail bound at ``W = 20``, ``s = 1/2`` (Theorem 3 (ii)), beside the worst content can do.

Every number comes from :mod:`poskernels.theory`; this module only chooses the grid and prints it.
"""

from __future__ import annotations

from ..theory.alibi import (
    alibi_horizon,
    alibi_offset_ratio_bound,
    alibi_tail_bound,
    alibi_worst_tail_weight,
    t5_bucket_ranges,
    t5_last_bucket_first_offset,
    t5_log_reach,
)
from .registry import Context, Section, format_table

__all__ = [
    "DEF3",
    "THM3",
    "ALIBI_LENGTH",
    "ALIBI_OFFSETS",
    "ALIBI_SLOPE",
    "ALIBI_WIDTH",
    "T5_BUCKETS",
    "T5_MAX_DISTANCE",
]

T5_BUCKETS, T5_MAX_DISTANCE = 32, 128  # T5's own configuration
ALIBI_WIDTH, ALIBI_SLOPE = 20.0, 0.5  # W and s of the article's example; s = 1/2 is ALiBi's first slope at H = 8
ALIBI_OFFSETS = (40, 60, 80)  # D
ALIBI_LENGTH = 8192  # length at which the worst content is measured


# --------------------------------------------------------------------------- Definition 3


def _def3(ctx: Context) -> dict:
    return {
        # Definition 3: every causal offset from this one on shares T5's last bucket
        "t5_last_bucket_first_offset": t5_last_bucket_first_offset(T5_BUCKETS, T5_MAX_DISTANCE),
        "t5_log_reach": t5_log_reach(T5_BUCKETS, T5_MAX_DISTANCE),
        "t5_buckets": [list(row) for row in t5_bucket_ranges(T5_BUCKETS, T5_MAX_DISTANCE)],
    }


def _def3_render(data: dict) -> str:
    exact = [b for b, first, last in data["t5_buckets"] if first == last]
    rows = [[f"{exact[0]}-{exact[-1]}", exact[0], exact[-1], "1 each"]]  # the exact buckets: bucket = offset
    for b, first, last in data["t5_buckets"][len(exact) :]:
        rows.append([str(b), first, "and on" if last is None else last, "all" if last is None else last - first + 1])
    table = format_table(
        ["bucket", "first r", "last r", "offsets"],
        rows,
        title=f"T5's causal buckets, {T5_BUCKETS} buckets, max_distance {T5_MAX_DISTANCE}",
    )
    return (
        f"{table}\n\nlast bucket holds every offset from {data['t5_last_bucket_first_offset']} on; "
        f"the log map reaches it at {data['t5_log_reach']:.1f}, not at {T5_MAX_DISTANCE}"
    )


# --------------------------------------------------------------------------- Theorem 3


def _thm3(ctx: Context) -> dict:
    W, s = ALIBI_WIDTH, ALIBI_SLOPE
    return {
        "W": W,
        "s": s,
        "horizon": alibi_horizon(W, s),  # Theorem 3 (iii): W / s
        # Theorem 3 (ii): weight on offsets r >= D, at every length
        "alibi_tail_bound": {str(D): alibi_tail_bound(W, s, D) for D in ALIBI_OFFSETS},
        # the largest tail any content of width W buys at one length (how tight (ii) is)
        "worst_tail_weight": {str(D): alibi_worst_tail_weight(W, s, D, ALIBI_LENGTH) for D in ALIBI_OFFSETS},
        "worst_length": ALIBI_LENGTH,
        # Theorem 3 (iii): alpha_D / alpha_0 <= e^{W - s D}
        "offset_ratio_bound": {str(D): float(alibi_offset_ratio_bound(W, s, D)) for D in ALIBI_OFFSETS},
    }


def _thm3_render(data: dict) -> str:
    rows = [
        [D, data["alibi_tail_bound"][D], data["worst_tail_weight"][D], data["offset_ratio_bound"][D]]
        for D in map(str, ALIBI_OFFSETS)
    ]
    head = ["D", "bound (ii)", f"worst content, n = {data['worst_length']}", "alpha_D / alpha_0 <= (iii)"]
    title = f"ALiBi, W = {data['W']:g}, s = {data['s']:g}: weight on offsets r >= D"
    return f"{format_table(head, rows, title=title)}\n\nhorizon W / s = {data['horizon']:g}"


DEF3 = Section("def3", "Definition 3 — T5's relative-position buckets", _def3, _def3_render)
THM3 = Section("thm3", "Theorem 3 — ALiBi's tail bound and horizon", _thm3, _thm3_render)
