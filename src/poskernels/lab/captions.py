"""The line under each view of the laboratory: what to look for (the article's captions are the model).

Every number a caption quotes is read from the part it describes, never typed in, so a caption cannot
disagree with the curve above it.

Examples
--------
>>> clocks({"d": 16, "b": 10000.0, "omega": [1.0, 0.1]})[:47]
'Plane j turns at rate b^(−2j/d) = 10000^(−j/8):'
"""

from __future__ import annotations

from ..experiments.readers import MAP_TITLES  # the one label table: readers and maps

__all__ = ["FIGURE_TITLES", "MAP_TITLES", "census", "clocks", "drift", "filing", "readouts", "ruler", "scores"]

FIGURE_TITLES = {
    "A": "A · Clocks and kernels — the sinusoidal code, the kernel it induces, and what a learned score does with it",
    "B": "B · Past the training window — heads trained at 32 tokens, read longer",
}


def _num(x) -> str:
    return f"{x:g}" if isinstance(x, int | float) else str(x)


def clocks(part: dict) -> str:
    half = part["d"] // 2
    return (
        f"Plane j turns at rate b^(−2j/d) = {_num(part['b'])}^(−j/{half}): the first hand at one radian per step, "
        "the last almost not at all. Lock the offset and move either slider: every hand turns, each by its own "
        "rate, and the readout does not move. The inner product of two positions depends only on how far apart "
        "they are (Proposition 2 and Theorem 1)."
    )


def ruler(part: dict) -> str:
    dims = ", ".join(part["dims"])
    return (
        f"The kernel (2/d) κ_d(Δ) at d = {dims} against its cosine-integral limit I_b(Δ), on a logarithmic "
        f"offset axis. Past a few positions the limit is a straight line in ln Δ, the ruler: each doubling of the "
        f"offset costs the same ln 2 / ln b ≈ {part['octave_cost']} of similarity (Theorem 1 (ii)). The "
        "convergence in d is not uniform in Δ: large offsets need many planes."
        + (" Dots: the article's kernel table." if "table" in part else "")
    )


def drift(part: dict) -> str:
    return (
        f"The score a trained head gives a marked key at offset r = {part['offset']}, as the query moves "
        "along the sequence. The sinusoidal head's score drifts with absolute position: adding a stationary code "
        "does not make attention relative (Theorem 2). The RoPE head's is flat, because its score depends on the "
        f"offset alone (Proposition 3 (i)). Training always put the query at position {part['window'] - 1} "
        "(shaded: the positions training saw)."
    )


def scores(part: dict) -> str:
    last = part["window"] - 1
    return (
        f"Training only sees offsets 0 to {last} (shaded). The RoPE head's score is a trigonometric polynomial in "
        "r (Proposition 3): it falls across the window, as the task rewards, dives past it, and then the planes "
        "that never completed a turn bring it back up. ALiBi's score is a straight line down. The absolute codes' "
        f"curves are drawn for a query at the end of a {part['query_length']}-token sequence, the learned table's "
        f"for a query at {last}, its last row: it has nothing past {last}. Toggle a reader to show or hide its curve."
    )


def readouts(part: dict) -> str:
    r, s = part["peak"]
    f = f"{{:.{part['decimals']['score']}f}}".format
    return (
        f"RoPE's accuracy at each length, and its seed-{part['rebound_seed']} head's score for a marked key: "
        f"{f(part['score_r1'])} at r = 1, {f(part['score_edge'])} at the window's edge, a dive to "
        f"{f(part['deepest'][1])} at r = {part['deepest'][0]}, then {f(s)} at r = {r}"
        + (
            f", so a cue {r} positions back outscores even the most recent one (r = 1)."
            if s > part["score_r1"]
            else f", so a cue {r} positions back outscores one at the window's edge."
            if s > part["score_edge"]
            else ", still below the score at the window's edge."
        )
        + " Below: every reader's accuracy at every length (— where it has no reading)."
    )


def census(part: dict) -> str:
    full = [str(j) for j, f in zip(part["planes"], part["full_turn"]) if f]
    return (
        f"Wavelengths λ_j = 2π/θ_j of the {len(part['planes'])} planes at d = {part['d']}: only plane"
        f"{'s' if len(full) != 1 else ''} {' and '.join(full)} turn a whole circle in {part['L']} positions "
        "(Theorem 5 (i)); the rest never showed the head their full circle. Bars: each rescaling's factor on "
        "θ_j at the chosen κ. PI divides every plane by κ; NTK-aware keeps plane 0 and divides the slowest by "
        "exactly κ (Theorem 5 (iii)); YaRN, at this small d, is nearly PI."
    )


def filing(part: dict) -> str:
    return (
        "One held-out filing, token by token (company mentions in bold, underlined in each company's colour). "
        "Hover over or focus a token (Tab, then the arrow keys) to see every reader's answer there to the literal "
        "question, which company was named last; ✗ marks an answer that differs from the truth. The redder a "
        "token, the more of the readers' answers (every reader, every seed) miss there: far from the last "
        "mention, the readers part ways."
        + (
            f" It opens at token {part['the_company']}, “the company”, {part['the_company'] - part['last_mention']} "
            f"tokens after the last company named ({part['companies'][part['company'][part['last_mention']]]})."
            if part.get("the_company") is not None and part.get("last_mention") is not None
            else ""
        )
    )
