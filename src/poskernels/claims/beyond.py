"""The claims of the papers beyond the article: Kerple and FIRE hold past the training length where RoPE does not.

Chi et al. 2022 (Kerple) and Li et al. 2023 (FIRE) claim that their biases let a model read past the length it was
trained on, where RoPE does not.  Here a head *holds* at length ``n`` when its accuracy there is within
:data:`HOLD` of its accuracy at the training length 32: over a block of ten seeds the claim passes when the mean
drop ``acc(32) - acc(n)`` plus three standard errors is at most :data:`HOLD`, and RoPE *falls* when its mean drop
minus three standard errors is at least :data:`HOLD`.  Both are read at the tournament's longest length (256, its
2,000 test sequences; ``numbers.json``'s ``tournament``) and at 10^5 tokens (the long-context section's cue task,
500 sequences, the streaming reader; ``long.length``).

FIRE at 10^5 is a *finding*, not the paper's claim: our single FIRE head degrades there by more than :data:`HOLD`,
so the table records that the hold rule fails for it (its mean drop plus three standard errors exceeds
:data:`HOLD`), and that it still stays far above RoPE, which is at chance.  Ten seeds do not resolve the finding
(its false-pass rate is in ``page/claims_calibration.json``): it is asserted as consistent, not as proven.

Examples
--------
>>> [c.id for c in BEYOND_CLAIMS][:2]
['beyond.kerple_log_holds_at_256', 'beyond.kerple_power_holds_at_256']
>>> c = BEYOND_CLAIMS[0]
>>> c.threshold, c.where
('mean + 3 SE <= 0.05', 'Chi et al. 2022, abstract and experiments (extrapolation past the training length)')
"""

from __future__ import annotations

from .record import Claim, arr

__all__ = ["BEYOND_CLAIMS", "CLAIMED", "CONTRAST", "FAR_SCHEMES", "HOLD"]

S = "beyond"
#: The largest drop in accuracy from the training length that still counts as holding (five points).
HOLD = 0.05
#: The schemes whose papers make the claim, and the one they contrast with.
CLAIMED = ("kerple_log", "kerple_power", "fire")
CONTRAST = "rope"
#: Every scheme the claims read at 10^5 tokens: the claimed ones, RoPE, FIRE from c = 1 and ALiBi (Chi et al.'s).
FAR_SCHEMES = (CONTRAST, *CLAIMED, "fire_c1", "alibi")
TRAIN = "32"

PAPER = {
    "kerple_log": "Chi et al. 2022, abstract and experiments (extrapolation past the training length)",
    "kerple_power": "Chi et al. 2022, abstract and experiments (extrapolation past the training length)",
    "fire": "Li et al. 2023, abstract and experiments (generalization to longer contexts)",
    "rope": "Chi et al. 2022 and Li et al. 2023, experiments (RoPE as a baseline that degrades past training)",
}
SENTENCE = {
    "kerple_log": "Kerple's logarithmic bias lets a model trained on short sequences hold its accuracy on longer ones.",
    "kerple_power": "Kerple's power bias lets a model trained on short sequences hold its accuracy on longer ones.",
    "fire": "FIRE's progressive interpolation lets a model hold its accuracy past the length it was trained on.",
    "rope": "RoPE does not hold its accuracy past the length it was trained on.",
}


def _tournament(scheme: str, n: str):
    return lambda d: arr(d["tournament"]["per_seed"][scheme][n])


def _long(scheme: str, n: str):
    return lambda d: arr(d["long"]["length"]["per_seed"][scheme][n])


def _drop(read, scheme: str, n: str):
    """Each seed's ``acc(32) - acc(n)``, as ``{"x": (seeds,)}``."""
    return lambda d: {"x": read(scheme, TRAIN)(d) - read(scheme, n)(d)}


def _claims() -> list[Claim]:
    out: list[Claim] = []
    places = [("256", _tournament, ("tournament",), "at 256"), ("1e5", _long, ("long",), "at 10^5 tokens")]
    for label, read, needs, where in places:
        n = "256" if label == "256" else "100000"
        for scheme in CLAIMED:
            if scheme == "fire" and label == "1e5":
                continue  # the finding below
            out.append(
                Claim(
                    f"{S}.{scheme}_holds_at_{label}",
                    S,
                    f"{SENTENCE[scheme]} (read {where})",
                    PAPER[scheme],
                    "upper",
                    {"c": HOLD, "k": 3.0},  # the mean drop from 32, plus 3 SE, within five points
                    _drop(read, scheme, n),
                    needs,
                )
            )
        out.append(
            Claim(
                f"{S}.rope_falls_at_{label}",
                S,
                f"{SENTENCE['rope']} (read {where})",
                PAPER["rope"],
                "lower",
                {"c": HOLD, "k": 3.0},  # the mean drop from 32, less 3 SE, beyond five points
                _drop(read, CONTRAST, n),
                needs,
            )
        )
    out += _fire_claims() + _kerple_against_alibi()
    return out


def _fire_claims() -> list[Claim]:
    """FIRE at 10^5 from each initialisation of ``c``: the paper's code's 0.1 (``fire``) and 1 (``fire_c1``)."""
    out: list[Claim] = []
    for scheme, init in (("fire", "c = 0.1, the paper's code's"), ("fire_c1", "c = 1")):
        finding = f"FIRE from {init} at 10^5 tokens: "
        if scheme == "fire_c1":
            out.append(
                Claim(
                    f"{S}.fire_c1_holds_at_256",
                    S,
                    f"{SENTENCE['fire']} (c started at 1; read at 256)",
                    PAPER["fire"] + "; c started at 1",
                    "upper",
                    {"c": HOLD, "k": 3.0},
                    _drop(_tournament, scheme, "256"),
                    ("tournament",),
                    finding="another initialisation than the paper's code's, tried to see whether the 10^5 finding"
                    " depends on it: reported either way",
                )
            )
            out.append(
                Claim(
                    f"{S}.fire_c1_holds_at_1e5",
                    S,
                    f"{SENTENCE['fire']} (c started at 1; read at 10^5 tokens)",
                    PAPER["fire"] + "; c started at 1",
                    "upper",
                    {"c": HOLD, "k": 3.0},
                    _drop(_long, scheme, "100000"),
                    ("long",),
                    finding="c started at 1: reported either way",
                )
            )
        out += [
            Claim(
                f"{S}.{scheme}_does_not_hold_at_1e5",
                S,
                finding + "shown to fall: its mean drop from 32, less 3 SE, beyond five points.",
                PAPER["fire"] + "; a finding here, not the paper's claim",
                "lower",
                {"c": HOLD, "k": 3.0},  # shown to fall, not failed to be shown to hold
                _drop(_long, scheme, "100000"),
                ("long",),
                null="FIRE holds: its mean drop at the bound (0.05)",
                finding=FIRE_FINDING if scheme == "fire" else "c started at 1: reported either way",
            ),
            Claim(
                f"{S}.{scheme}_stays_half_the_scale_above_rope_at_1e5",
                S,
                finding + "far above RoPE, which is at chance (more than 0.5 above it).",
                PAPER["fire"] + "; a finding here, not the paper's claim",
                "gap",
                {"off": 0.5, "k": 3.0},
                lambda d, s=scheme: {"a": _long(s, "100000")(d), "b": _long(CONTRAST, "100000")(d)},
                ("long",),
                finding="" if scheme == "fire" else "c started at 1: reported either way",
            ),
        ]
    return out


def _kerple_against_alibi() -> list[Claim]:
    """Chi et al.'s comparison: Kerple's biases extrapolate better than ALiBi's (at 256 and at 10^5 tokens)."""
    out: list[Claim] = []
    for scheme in ("kerple_log", "kerple_power"):
        for label, read, needs, n in (
            ("256", _tournament, ("tournament",), "256"),
            ("1e5", _long, ("long",), "100000"),
        ):
            out.append(
                Claim(
                    f"{S}.{scheme}_beats_alibi_at_{label}",
                    S,
                    f"Kerple ({scheme.split('_')[1]}) reads longer sequences better than ALiBi (accuracy at {n},"
                    " mean difference over the joined SE above 3).",
                    "Chi et al. 2022, experiments (Kerple against ALiBi past the training length)",
                    "gap",
                    {"k": 3.0},
                    lambda d, s=scheme, r=read, m=n: {"a": r(s, m)(d), "b": r("alibi", m)(d)},
                    needs,
                    finding=KERPLE_FINDING,
                ),
            )
            out.append(
                Claim(
                    f"{S}.{scheme}_ties_alibi_at_{label}",
                    S,
                    f"Kerple ({scheme.split('_')[1]}) reads longer sequences as well as ALiBi (accuracy at {n}: the"
                    f" difference of means with 3 joined SE within {TIE:g}).",
                    "Chi et al. 2022, experiments (Kerple against ALiBi past the training length); what ten seeds"
                    " of our single head support",
                    "tie",
                    {"k": 3.0, "margin": TIE},
                    lambda d, s=scheme, r=read, m=n: {"a": r(s, m)(d), "b": r("alibi", m)(d)},
                    needs,
                )
            )
    return out


#: Why Chi et al.'s comparison is reported, not asserted: on the tests' blocks Kerple's mean accuracy is within a
#: point of ALiBi's at 256 and at 10^5 (log above, power below): ten seeds do not show it better.
KERPLE_FINDING = "Chi et al.'s comparison, not shown by ten seeds of our single head (the two within a point)"
#: Why "FIRE does not hold at 10^5" is reported, not asserted: its mean drop (0.08 on the block 0-9) is past five
#: points, but with three standard errors it is not shown to be.
FIRE_FINDING = "FIRE's drop at 10^5 is past five points on average but not shown to be (its seeds spread)"
#: The margin of a tie between Kerple's and ALiBi's mean accuracies (three points, as the tournament's ties).
TIE = 0.03


BEYOND_CLAIMS: tuple[Claim, ...] = tuple(_claims())
