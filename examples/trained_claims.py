"""The trained claims the tests assert, as data: what ``examples/claim_calibration.py`` calibrates.

Each :class:`Claim` names the test, reads the per-seed values it needs from one block's ``numbers.json``
(``get(numbers) -> {name: array}``, seeds on axis 0), and carries the threshold the test asserted before the
calibration (``old``) and the one it asserts now (``new``; ``None`` if unchanged, ``DROPPED`` if a robust claim in
the list replaced it).  Kinds: ``share`` (``q``: the share of seeds with the property is ``>= q``), ``lower`` /
``upper`` (the mean ``-`` / ``+ k`` SE is ``>= c`` / ``<= c``), ``gap`` (mean ``a`` ``- off`` lies above mean ``b`` by
more than ``k`` joined SE, the tests' ``_apart``), ``near`` (``|mean - t| <= tol + k * hypot(SE, extra)``),
``median`` (``lo < median < hi``), ``custom`` (``check(block, params)``).  Keep it beside the tests: a threshold
changed there is changed here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

K = 3.0  # the tests' standard errors of margin
TEST_COUNT = 2000  # test sequences per tournament point (poskernels.experiments.tournament.TEST_COUNT)
LONG = ("64", "128", "256")
LENGTHS = ("32", *LONG)
INSIDE = ("1", "4", "8", "12", "16")  # tests/test_long_context.py
BEYOND = ("256", "1024", "4096", "100000")
FENWICK, MARROW = "Fenwick Logistics", "Marrow Freight"


def mean_se(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the last axis, ignoring NaN (a seed with no value)."""
    n = np.sum(~np.isnan(x), axis=-1)
    return np.nanmean(x, axis=-1), np.nanstd(x, axis=-1, ddof=1) / np.sqrt(n)


@dataclass
class Claim:
    """One assertion of a test: ``get(numbers) -> {name: per-seed array, seeds on axis 0}``, a kind, thresholds."""

    test: str
    name: str
    kind: str  # share | lower | upper | gap | near | median | custom
    get: Callable[[dict], dict]
    old: dict | None  # None: a claim the tests did not assert before this calibration
    new: dict | None = None
    check: Callable[[dict, dict], bool] | None = field(default=None, repr=False)  # custom: (block, params) -> pass

    @property
    def now(self) -> dict | None:
        """The threshold the tests assert now (``None``: the assertion was replaced by another claim's)."""
        return self.old if self.new is None else (None if self.new is DROPPED else self.new)

    @property
    def any(self) -> dict:
        return self.now if self.now is not None else self.old


DROPPED: dict = {}  # ``new=DROPPED``: the test no longer asserts this (a robust claim in the list replaces it)


# ---------------------------------------------------------------- the claims, in the tests' order


def _arr(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _t(section: str, scheme: str, n: str) -> Callable[[dict], np.ndarray]:
    return lambda d: _arr(d[section]["per_seed"][scheme][n])


def _gap(a, b) -> Callable[[dict], dict]:
    return lambda d: {"a": a(d), "b": b(d)}


def _x(f) -> Callable[[dict], dict]:
    return lambda d: {"x": f(d)}


def _rebound(field_: Callable[[dict], float]) -> Callable[[dict], np.ndarray]:
    return lambda d: _arr([field_(r) for r in d["rebound"].values()])


def _horizon(part: str) -> Callable[[dict], np.ndarray]:
    return lambda d: _arr(d["filings"]["horizon_stats"][part]["per_seed"]["beyond"])


def _bag(d: dict, n: str, held: bool) -> float:
    return d["tournament"]["bag_reader_heldout" if held else "bag_reader"][n]


def tournament_claims(first: dict) -> list[Claim]:
    T = "test_tournament"
    out = []
    for n in LENGTHS:
        p = _bag(first, n, False)
        out.append(
            Claim(
                f"{T}::no_position",
                f"nope {n} at bag reader",
                "near",
                _x(_t("tournament", "nope", n)),
                {"t": p, "extra": math.sqrt(p * (1 - p) / TEST_COUNT)},
            )
        )
        out.append(
            Claim(
                f"{T}::no_position",
                f"nope {n} at paired bag reader",
                "near",
                _x(_t("tournament", "nope", n)),
                {"t": _bag(first, n, True), "tol": math.sqrt(p * (1 - p) / TEST_COUNT)},
            )
        )
    for s in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        out.append(
            Claim(
                f"{T}::every_other_scheme",
                f"{s} 32 >= 0.97",
                "lower",
                _x(_t("tournament", s, "32")),
                {"c": 0.97},
                {"c": 0.96},
            )
        )
    for n in LONG:
        out.append(
            Claim(
                f"{T}::sinusoidal_collapses",
                f"sinusoidal {n} <= 0.30",
                "upper",
                _x(_t("tournament", "sinusoidal", n)),
                {"c": 0.30},
            )
        )
        out.append(
            Claim(
                f"{T}::sinusoidal_collapses",
                f"nope {n} above sinusoidal",
                "gap",
                _gap(_t("tournament", "nope", n), _t("tournament", "sinusoidal", n)),
                {},
            )
        )
    for n in LENGTHS:
        out.append(
            Claim(f"{T}::alibi_holds", f"alibi {n} >= 0.95", "lower", _x(_t("tournament", "alibi", n)), {"c": 0.95})
        )
    rope = lambda n: _t("tournament", "rope", n)  # noqa: E731
    fall = lambda a, b: _x(lambda d: rope(a)(d) > rope(b)(d))  # noqa: E731
    out += [
        Claim(f"{T}::rope_falls", "rope 32 above 64", "gap", _gap(rope("32"), rope("64")), {}, {"k": 2.0}),
        Claim(f"{T}::rope_falls", "rope 128 above 256", "gap", _gap(rope("128"), rope("256")), {}),
        Claim(f"{T}::rope_falls", "share rope 64 > 128", "share", fall("64", "128"), {"q": 0.8}, {"q": 0.7}),
        Claim(f"{T}::rope_falls", "rope 64 above 128", "gap", _gap(rope("64"), rope("128")), None, {"k": 1.0}),
        Claim(f"{T}::rope_falls", "share rope 128 > 256", "share", fall("128", "256"), {"q": 0.9}),
        Claim(
            f"{T}::rope_falls",
            "alibi 256 above rope 256",
            "gap",
            _gap(_t("tournament", "alibi", "256"), rope("256")),
            {},
        ),
        Claim(f"{T}::rope_falls", "share rope 32 > 256", "share", fall("32", "256"), {"q": 0.9}),
    ]
    for reader in ("rope_pi", "rope_ntk", "rope_yarn"):
        for n in ("128", "256"):
            got, plain = _t("rescaled", reader, n), _t("rescaled", "rope", n)
            out += [
                Claim(f"{T}::interpolated_and_ntk", f"{reader} {n} >= 0.80", "lower", _x(got), {"c": 0.80}),
                Claim(
                    f"{T}::interpolated_and_ntk",
                    f"{reader} {n} above plain",
                    "gap",
                    _gap(got, plain),
                    {},
                    None if n == "256" else {"k": 1.5},
                ),
                Claim(
                    f"{T}::interpolated_and_ntk",
                    f"share {reader} {n} > plain",
                    "share",
                    _x(lambda d, g=got, q=plain: g(d) > q(d)),
                    {"q": 0.9},
                    None if n == "256" else {"q": 0.7 if reader == "rope_ntk" else 0.6},
                ),
            ]
    rb = "test_tournament::rope_rebound"
    out += [
        Claim(
            rb,
            "first trough r near 32",
            "near",
            _x(_rebound(lambda r: r["first_trough"][0])),
            {"t": 32, "tol": 3},
            DROPPED,
        ),
        Claim(
            rb,
            "median first trough r within 3 of 32",
            "median",
            _x(_rebound(lambda r: r["first_trough"][0])),
            None,
            {"lo": 28.5, "hi": 35.5},
        ),
        Claim(
            rb,
            "share trough within 3 of 31",
            "share",
            _x(_rebound(lambda r: abs(r["first_trough"][0] - 31) <= 3)),
            {"q": 0.8},
            {"q": 0.6},
        ),
        Claim(
            rb,
            "share trough within 5 of 31",
            "share",
            _x(_rebound(lambda r: abs(r["first_trough"][0] - 31) <= 5)),
            None,
            {"q": 0.8},
        ),
        Claim(rb, "deepest r near 89", "near", _x(_rebound(lambda r: r["deepest"][0])), {"t": 89, "tol": 3}, DROPPED),
        Claim(
            rb,
            "median deepest r within 3 of 89",
            "median",
            _x(_rebound(lambda r: r["deepest"][0])),
            None,
            {"lo": 85.5, "hi": 92.5},
        ),
        Claim(
            rb,
            "share deepest r within 3 of 89",
            "share",
            _x(_rebound(lambda r: abs(r["deepest"][0] - 89) <= 3)),
            None,
            {"q": 0.6},
        ),
        Claim(rb, "peak r near 180", "near", _x(_rebound(lambda r: r["peak"][0])), {"t": 180, "tol": 4}),
        Claim(rb, "share top plane 3", "share", _x(_rebound(lambda r: r["top_plane"] == 3)), {"q": 0.7}),
        Claim(rb, "share score r31 > 0", "share", _x(_rebound(lambda r: r["score_r31"] > 0)), {"q": 0.7}, {"q": 0.9}),
        Claim(rb, "score r31 > 0", "lower", _x(_rebound(lambda r: r["score_r31"])), {"c": 1e-300}, DROPPED),
        Claim(
            rb, "first trough score > 0", "lower", _x(_rebound(lambda r: r["first_trough"][1])), {"c": 1e-300}, DROPPED
        ),
        Claim(
            rb,
            "share first trough score > 0",
            "share",
            _x(_rebound(lambda r: r["first_trough"][1] > 0)),
            None,
            {"q": 0.8},
        ),
        Claim(
            rb,
            "share deepest < trough < r1",
            "share",
            _x(_rebound(lambda r: r["deepest"][1] < r["first_trough"][1] < r["score_r1"])),
            {"q": 0.9},
        ),
        Claim(rb, "share peak > score r31", "share", _x(_rebound(lambda r: r["peak"][1] > r["score_r31"])), {"q": 0.9}),
    ]
    th = "test_tournament::sinusoidal_heads_stay"
    for kind in ("init", "trained"):
        out.append(
            Claim(
                th,
                f"defect {kind} near 0.968",
                "near",
                _x(lambda d, k=kind: _arr(d["thm2"]["sinusoidal_defect"][k])),
                {"t": 0.968, "tol": 0.01},
            )
        )
    out.append(
        Claim(
            th,
            "defect change near 0",
            "near",
            _x(
                lambda d: np.subtract(d["thm2"]["sinusoidal_defect"]["trained"], d["thm2"]["sinusoidal_defect"]["init"])
            ),
            {"t": 0.0, "tol": 0.01},
        )
    )
    pr = "test_tournament::projecting_one_term"
    proj = lambda n: _t("sinusoidal", "projected", n)  # noqa: E731
    shift = lambda n: _t("sinusoidal", "shifted", n)  # noqa: E731

    def shift_helps(v, p):
        (ms, ss), (mn, sn) = mean_se(v["shifted"]), mean_se(v["sin"])
        return bool(ms - p.get("k", K) * ss > 2 * (mn + p.get("k", K) * sn))

    out += [
        Claim(pr, "rope 64 above projected 64", "gap", _gap(rope("64"), proj("64")), {}),
        Claim(pr, "shifted 64 above projected 64", "gap", _gap(shift("64"), proj("64")), {}),
        Claim(pr, "projected 128 <= 0.40", "upper", _x(proj("128")), {"c": 0.40}, {"c": 0.40, "k": 1.5}),
        Claim(pr, "projected 256 <= 0.40", "upper", _x(proj("256")), {"c": 0.40}),
        Claim(pr, "rope 128 above projected 128", "gap", _gap(rope("128"), proj("128")), {}),
        Claim(pr, "rope 256 above projected 256", "gap", _gap(rope("256"), proj("256")), {}),
        Claim(
            pr,
            "shifted 64 > 2x sinusoidal 64",
            "custom",
            lambda d: {"shifted": shift("64")(d), "sin": _t("tournament", "sinusoidal", "64")(d)},
            {},
            {"k": 2.5},
            check=shift_helps,
        ),
        Claim(pr, "shifted 64 above shifted 256", "gap", _gap(shift("64"), shift("256")), {}),
        Claim(
            pr,
            "shifted 64 above sinusoidal 64",
            "gap",
            _gap(shift("64"), _t("tournament", "sinusoidal", "64")),
            {"k": 0.0},
        ),
        Claim(pr, "spread ratio > 0.8", "lower", _x(lambda d: _arr(d["sinusoidal"]["spread_ratio"])), {"c": 0.8}),
        Claim(pr, "spread ratio < 1.25", "upper", _x(lambda d: _arr(d["sinusoidal"]["spread_ratio"])), {"c": 1.25}),
        Claim(
            "test_tournament::bias_kernels",
            "shaw 256 above t5 256",
            "gap",
            _gap(_t("tournament", "shaw", "256"), _t("tournament", "t5", "256")),
            {},
        ),
    ]
    return out


def _rows(d: dict, key: str) -> np.ndarray:
    """(seeds, 2): a horizon row's field, synthetic-stream and filing heads of one seed side by side."""
    by = {(r["trained_on"], r["seed"]): r[key] for r in d["filings"]["horizon"]}
    seeds = d["filings"]["seeds"]
    return _arr([by["filings", s] for s in seeds] + [by["synthetic", s] for s in seeds]).reshape(2, -1).T


def _case(d: dict, part: str, reader: str) -> np.ndarray:
    return _arr(d["filings"]["case"][part][reader])


def filings_claims(first: dict) -> list[Claim]:
    F = "test_filings"
    names = first["filings"]["case"]["companies"]
    fenwick, marrow = names.index(FENWICK), names.index(MARROW)
    acc = lambda r, part: _t("filings", r, part)  # noqa: E731

    def misses_wide(v, p):
        h, inside = v["horizon"], v["inside"]
        return bool(np.all((inside == 1.0) | (h > np.median(h, axis=0))))

    def mode_marrow(v, p):
        return Counter(v["x"].astype(int).tolist()).most_common(1)[0][0] == marrow

    out = [
        Claim(
            f"{F}::alibi_inside_half",
            "share of 20 heads answer all inside half",
            "share",
            lambda d: {"x": _rows(d, "inside_half") == 1.0},
            {"q": 0.75},
        ),
    ]
    for i, part in enumerate(("filings", "synthetic")):
        out.append(
            Claim(
                f"{F}::alibi_inside_half",
                f"median inside half = 1 ({part})",
                "share",
                lambda d, i=i: {"x": _rows(d, "inside_half")[:, i] == 1.0},
                {"q": 0.6},
            )
        )
    out += [
        Claim(
            f"{F}::alibi_inside_half",
            "heads that miss are wider than the median",
            "custom",
            lambda d: {"horizon": _rows(d, "horizon"), "inside": _rows(d, "inside_half")},
            {},
            check=misses_wide,
        ),
        Claim(
            f"{F}::alibi_inside_half",
            "mean inside queries > 8000",
            "lower",
            lambda d: {"x": _rows(d, "inside_queries").mean(axis=1)},
            {"c": 8000.0001, "k": 0.0},
        ),
    ]
    for reader in ("rope_pi", "rope_yarn"):
        out += [
            Claim(
                f"{F}::interpolated_far", f"{reader} far >= 0.95", "lower", _x(acc(reader, "far")), {"c": 0.95}, DROPPED
            ),
            Claim(
                f"{F}::interpolated_far",
                f"median {reader} far >= 0.95",
                "median",
                _x(acc(reader, "far")),
                None,
                {"lo": 0.94},
            ),
            Claim(
                f"{F}::interpolated_far",
                f"share {reader} far >= 0.90",
                "share",
                _x(lambda d, r=reader: acc(r, "far")(d) >= 0.90),
                None,
                {"q": 0.8 if reader == "rope_pi" else 0.7},
            ),
            Claim(
                f"{F}::interpolated_far",
                f"{reader} far - 0.2 above rope far",
                "gap",
                _gap(acc(reader, "far"), acc("rope", "far")),
                {"off": 0.2},
                {"off": 0.1},
            ),
            Claim(
                f"{F}::interpolated_far",
                f"share {reader} far > rope far + 0.2",
                "share",
                _x(lambda d, r=reader: acc(r, "far")(d) > acc("rope", "far")(d) + 0.2),
                None,
                {"q": 0.7},
            ),
        ]
    others = ("nope", "sinusoidal", "rope", "alibi", "rope_ntk")
    for leader in ("rope_pi", "rope_yarn"):
        for part in ("all", "far"):
            for other in others:
                out.append(
                    Claim(
                        f"{F}::pi_and_yarn_lead",
                        f"{leader} {part} above {other}",
                        "gap",
                        _gap(acc(leader, part), acc(other, part)),
                        {},
                        {"k": 2.5},
                    )
                )
    out += [
        Claim(
            f"{F}::alibi_loses_far",
            "pi far above alibi far + 0.1",
            "gap",
            _gap(acc("rope_pi", "far"), acc("alibi", "far")),
            {"off": 0.1},
        ),
        Claim(
            f"{F}::alibi_loses_far",
            "alibi all above alibi far + 0.05",
            "gap",
            _gap(acc("alibi", "all"), acc("alibi", "far")),
            {"off": 0.05},
            {"off": 0.05, "k": 2.0},
        ),
    ]
    for part in ("filings", "synthetic"):
        inside = lambda d, p=part: _arr(d["filings"]["horizon_stats"][p]["per_seed"]["inside_half"])  # noqa: E731
        out.append(
            Claim(
                f"{F}::beyond_the_horizon", f"{part}: inside half above beyond", "gap", _gap(inside, _horizon(part)), {}
            )
        )
    out += [
        Claim(
            f"{F}::beyond_the_horizon",
            "filings beyond above synthetic beyond",
            "gap",
            _gap(_horizon("filings"), _horizon("synthetic")),
            {},
            {"k": 1.5},
        ),
        Claim(
            f"{F}::beyond_the_horizon",
            "median synthetic beyond < 0.2",
            "median",
            _x(_horizon("synthetic")),
            {"hi": 0.2},
        ),
        Claim(
            f"{F}::beyond_the_horizon", "median filings beyond > 0.2", "median", _x(_horizon("filings")), {"lo": 0.2}
        ),
    ]
    for i, part in enumerate(("filings", "synthetic")):
        out += [
            Claim(
                f"{F}::horizon_from_weights",
                f"median horizon in (20, 100) ({part})",
                "median",
                lambda d, i=i: {"x": _rows(d, "horizon")[:, i]},
                {"lo": 20, "hi": 100},
            ),
            Claim(
                f"{F}::horizon_from_weights",
                f"share horizon < 100 ({part})",
                "share",
                lambda d, i=i: {"x": _rows(d, "horizon")[:, i] < 100},
                {"q": 0.7},
            ),
        ]
    case = f"{F}::laboratorys_filing"
    for reader in ("rope_pi", "rope_yarn"):
        out += [
            Claim(
                case,
                f"share {reader} right from token 64 on (>= 140 of 145)",
                "share",
                _x(lambda d, r=reader: _case(d, "right_from_last", r) >= 140),
                {"q": 0.9},
                {"q": 0.6},
            ),
            Claim(
                case,
                f"share {reader} names Fenwick at token 109",
                "share",
                _x(lambda d, r=reader: _case(d, "at_the_company", r) == fenwick),
                {"q": 0.9},
                {"q": 0.8} if reader == "rope_pi" else None,
            ),
        ]
    out += [
        Claim(
            case,
            "share nope misnames at token 109",
            "share",
            _x(lambda d: _case(d, "at_the_company", "nope") != fenwick),
            {"q": 0.7},
        ),
        Claim(
            case,
            "nope's most common answer is Marrow",
            "custom",
            _x(lambda d: _case(d, "at_the_company", "nope")),
            {},
            check=mode_marrow,
        ),
        Claim(
            case,
            "rope_pi right >= 0.9 * 209",
            "lower",
            _x(lambda d: _case(d, "right", "rope_pi")),
            {"c": 0.9 * 209},
            DROPPED,
        ),
        Claim(
            case,
            "median rope_pi right >= 0.9 * 209",
            "median",
            _x(lambda d: _case(d, "right", "rope_pi")),
            None,
            {"lo": 0.9 * 209},
        ),
        Claim(
            case,
            "share rope_pi right >= 0.9 * 209",
            "share",
            _x(lambda d: _case(d, "right", "rope_pi") >= 188.1),
            None,
            {"q": 0.7},
        ),
        Claim(
            case, "alibi right < 0.9 * 209", "upper", _x(lambda d: _case(d, "right", "alibi")), {"c": 0.9 * 209 - 1e-9}
        ),
    ]
    return out


def _long_horizon(d: dict, key: str) -> np.ndarray:
    rows = d["long"]["distance"]["horizon"]
    return _arr([rows[i][key] for i in sorted(rows, key=int)])


def _tail_bound(d: dict) -> np.ndarray:
    W, h = _long_horizon(d, "W"), _long_horizon(d, "horizon")
    s = W / h
    return np.exp(W - 100 * s) / (1 - np.exp(-s))  # Theorem 3 (ii) at D = 100, poskernels.theory.alibi


def _needle(d: dict, offsets, inside: bool) -> np.ndarray:
    """Each head's mean needle accuracy over the offsets inside half its horizon, or beyond twice it."""
    per = d["long"]["distance"]["per_seed"]["alibi"]
    h = _long_horizon(d, "horizon")  # (seeds,)
    acc = np.array([_arr(per[r]) for r in offsets])  # (offsets, seeds)
    r = np.array([float(x) for x in offsets])[:, None]  # (offsets, 1)
    mask = r <= h / 2 if inside else r > 2 * h  # (offsets, seeds)
    return np.nanmean(np.where(mask, acc, np.nan), axis=0)


def long_claims(first: dict) -> list[Claim]:
    L = "test_long_context"
    per_point = math.sqrt(1 / 8 * 7 / 8 / (first["long"]["count"] * len(BEYOND)))
    return [
        Claim(f"{L}::weights_at_1e5", "median tail bound < 1e-6", "median", _x(_tail_bound), {"hi": 1e-6}),
        Claim(
            f"{L}::weights_at_1e5", "every tail bound < 1e-2", "share", _x(lambda d: _tail_bound(d) < 1e-2), {"q": 1.0}
        ),
        Claim(
            f"{L}::needle_accuracy",
            "every half horizon holds the inside offsets",
            "share",
            _x(lambda d: _long_horizon(d, "horizon") / 2 >= 16),
            {"q": 1.0},
            DROPPED,
        ),
        Claim(
            f"{L}::needle_accuracy",
            "every half horizon holds 4 of 5 inside offsets",
            "share",
            _x(lambda d: _long_horizon(d, "horizon") / 2 >= 12),
            None,
            {"q": 1.0},
        ),
        Claim(
            f"{L}::needle_accuracy",
            "needle inside half, mean >= 0.98",
            "lower",
            _x(lambda d: _needle(d, INSIDE, True)),
            {"c": 0.98, "k": 0.0},
        ),
        Claim(
            f"{L}::needle_accuracy",
            "needle inside half, every head >= 0.9",
            "share",
            _x(lambda d: _needle(d, INSIDE, True) >= 0.9),
            {"q": 1.0},
        ),
        Claim(
            f"{L}::needle_accuracy",
            "needle beyond twice at chance",
            "near",
            _x(lambda d: _needle(d, BEYOND, False)),
            {"t": 1 / 8, "k": 4.0, "extra": per_point, "max": True},
        ),
        Claim(
            f"{L}::cue_at_1e5",
            "cue task at 100000, mean >= 0.9",
            "lower",
            _x(lambda d: _arr(d["long"]["length"]["per_seed"]["alibi"]["100000"])),
            {"c": 0.9, "k": 0.0},
        ),
    ] + (cue_claims() if "cue_100_1e5" in first else [])


def _cue_close(v: dict, p: dict) -> bool:
    """tests/test_long_context.py: the means at 100 and 10^5 within 4 SE (seeds' spread and the binomial of the
    ``count`` sequences); ``count`` as in the test's reading."""
    a, b = v["a"], v["b"]
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size + 2 * 0.25 / p["count"] / a.size)
    return bool(abs(a.mean() - b.mean()) <= p.get("k", 4.0) * se)


def cue_claims() -> list[Claim]:
    """The cue task at 100 and at 10^5 tokens: read by the test itself (``numbers.json`` has no length 100), so only
    when ``claim_calibration.py --cache`` adds ``cue_100_1e5`` to each block."""
    cue = lambda n: lambda d: _arr(d["cue_100_1e5"]["per_seed"]["alibi"][n])  # noqa: E731
    return [
        Claim(
            "test_long_context::cue_at_1e5",
            "cue task at 100 and 100000 within 4 SE",
            "custom",
            lambda d: {"a": cue("100")(d), "b": cue("100000")(d)},
            {"count": 500},
            check=_cue_close,
        )
    ]


# ---------------------------------------------------------------- all of them


def claims(first: dict) -> list[Claim]:
    return tournament_claims(first) + filings_claims(first) + long_claims(first)
