"""The claims of Theorem 3 about the trained ALiBi heads far past the window (the ``long`` section)."""

from __future__ import annotations

import math

import numpy as np

from .record import Claim, arr

__all__ = ["INSIDE", "BEYOND", "LONG_CLAIMS"]

S = "long_context"
NEEDS = ("long",)
INSIDE = ("1", "4", "8", "12", "16")  # inside half of every horizon W/s >= 24
BEYOND = ("256", "1024", "4096", "100000")  # beyond twice every horizon
CHANCE = 1 / 8
THM3 = "Theorem 3 (ii)-(iii)"


def _horizon(d: dict, key: str) -> np.ndarray:
    rows = d["long"]["distance"]["horizon"]
    return arr([rows[i][key] for i in sorted(rows, key=int)])


def _tail_bound(d: dict) -> np.ndarray:
    W, h = _horizon(d, "W"), _horizon(d, "horizon")
    s = W / h
    return np.exp(W - 100 * s) / (1 - np.exp(-s))  # Theorem 3 (ii) at D = 100, poskernels.theory.alibi


def _needle(d: dict, offsets, inside: bool) -> np.ndarray:
    """Each head's mean needle accuracy over the offsets inside half its horizon, or beyond twice it, (seeds,)."""
    per = d["long"]["distance"]["per_seed"]["alibi"]
    h = _horizon(d, "horizon")  # (seeds,)
    acc = np.array([arr(per[r]) for r in offsets])  # (offsets, seeds)
    r = np.array([float(x) for x in offsets])[:, None]  # (offsets, 1)
    mask = r <= h / 2 if inside else r > 2 * h  # (offsets, seeds)
    return np.nanmean(np.where(mask, acc, np.nan), axis=0)


def _x(f):
    return lambda d: {"x": f(d)}


def _claims() -> list[Claim]:
    tail = "The keys past offset D carry at most e^W e^{-sD} / (1 - e^{-s}) of the weight, whatever n."
    needle = "Past the horizon W/s a key weighs less than the query itself."
    return [
        Claim(
            f"{S}.median_tail_bound_at_offset_100_below_1e-6",
            S,
            tail,
            THM3,
            "median",
            {"hi": 1e-6, "k": 2.0},
            _x(_tail_bound),
            NEEDS,
        ),
        Claim(
            f"{S}.tail_bound_at_offset_100_below_1e-2_in_eight_heads_of_ten",
            S,
            tail,
            THM3,
            "share",
            {"q": 0.8},  # one head in 100 is certified above 1e-2 (a wide content width)
            _x(lambda d: (_tail_bound(d) < 1e-2).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.every_half_horizon_holds_4_of_5_inside_offsets",
            S,
            needle,
            THM3,
            "share",
            {"q": 1.0},
            _x(lambda d: (_horizon(d, "horizon") / 2 >= 12).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.needle_found_inside_half_the_horizon_0.9_by_every_head",
            S,
            needle + " (inside half of it the content decides)",
            THM3,
            "share",
            {"q": 1.0},
            _x(lambda d: (_needle(d, INSIDE, True) >= 0.9).astype(float)),
            NEEDS,
        ),
        Claim(
            f"{S}.needle_at_chance_beyond_twice_the_horizon",
            S,
            needle + " (beyond twice it the answer is chance, 1/8)",
            THM3,
            "near",
            {"t": CHANCE, "k": 4.0, "max": True},
            lambda d: {
                "x": _needle(d, BEYOND, False),
                "extra": np.float64(math.sqrt(CHANCE * (1 - CHANCE) / (d["long"]["count"] * len(BEYOND)))),
            },
            NEEDS,
        ),
        Claim(
            f"{S}.cue_task_read_at_1e5_at_0.9",
            S,
            "An ALiBi head's behaviour at 10^5 is its behaviour at 100.",
            THM3,
            "lower",
            {"c": 0.9, "k": 3.0},
            _x(lambda d: arr(d["long"]["length"]["per_seed"]["alibi"]["100000"])),
            NEEDS,
        ),
        Claim(
            f"{S}.cue_task_at_1e5_as_at_100",
            S,
            "An ALiBi head's behaviour at 10^5 is its behaviour at 100.",
            THM3,
            "agree",
            {"k": 4.0},
            lambda d: {
                "a": arr(d["long"]["length"]["per_seed"]["alibi"]["100"]),
                "b": arr(d["long"]["length"]["per_seed"]["alibi"]["100000"]),
                "binomial": np.float64(2 * 0.25 / d["long"]["count"]),
            },
            NEEDS,
            optional=True,  # numbers.json reads the cue task from 32 on; the test reads it at 100
        ),
    ]


LONG_CLAIMS: tuple[Claim, ...] = tuple(_claims())
