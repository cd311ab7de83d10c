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
    """The caption of the clocks: the planes' rates, and why the readout does not move with the offset locked.

    Parameters
    ----------
    part : dict
        The clocks part (its ``d`` and ``b``).

    Returns
    -------
    str

    Examples
    --------
    >>> clocks({"d": 16, "b": 10000.0})[:47]
    'Plane j turns at rate b^(−2j/d) = 10000^(−j/8):'
    """
    half = part["d"] // 2
    return (
        f"Plane j turns at rate b^(−2j/d) = {_num(part['b'])}^(−j/{half}): the first hand at one radian per step, "
        "the last almost not at all. Lock the offset and move either slider: every hand turns, each by its own "
        "rate, and the readout does not move. The inner product of two positions depends only on how far apart "
        "they are (Proposition 2 and Theorem 1)."
    )


def ruler(part: dict) -> str:
    """The caption of the kernel against its cosine-integral limit: the ruler and its cost per octave.

    Parameters
    ----------
    part : dict
        The ruler part (``dims``, ``octave_cost``, and ``table`` when the article's kernel table is drawn).

    Returns
    -------
    str

    Examples
    --------
    >>> ruler({"dims": ["16", "64"], "octave_cost": 0.075})[:40]
    'The kernel (2/d) κ_d(Δ) at d = 16, 64 ag'
    """
    dims = ", ".join(part["dims"])
    return (
        f"The kernel (2/d) κ_d(Δ) at d = {dims} against its cosine-integral limit I_b(Δ), on a logarithmic "
        f"offset axis. Past a few positions the limit is a straight line in ln Δ, the ruler: each doubling of the "
        f"offset costs the same ln 2 / ln b ≈ {part['octave_cost']} of similarity (Theorem 1 (ii)). The "
        "convergence in d is not uniform in Δ: large offsets need many planes."
        + (" Dots: the article's kernel table." if "table" in part else "")
    )


def drift(part: dict) -> str:
    """The caption of the drift view: a sinusoidal head's score drifts with absolute position, RoPE's does not.

    Parameters
    ----------
    part : dict
        The drift part (``offset`` and the training ``window``).

    Returns
    -------
    str

    Examples
    --------
    >>> drift({"offset": 5, "window": 32})[:61]
    'The score a trained head gives a marked key at offset r = 5, '
    """
    return (
        f"The score a trained head gives a marked key at offset r = {part['offset']}, as the query moves "
        "along the sequence. The sinusoidal head's score drifts with absolute position: adding a stationary code "
        "does not make attention relative (Theorem 2). The RoPE head's is flat, because its score depends on the "
        f"offset alone (Proposition 3 (i)). Training always put the query at position {part['window'] - 1} "
        "(shaded: the positions training saw)."
    )


def scores(part: dict) -> str:
    """The caption of the scores against offset: inside the window, the dive past it and the rebound.

    Parameters
    ----------
    part : dict
        The scores part (``window`` and ``query_length``).

    Returns
    -------
    str

    Examples
    --------
    >>> scores({"window": 32, "query_length": 64})[:44]
    'Training only sees offsets 0 to 31 (shaded).'
    """
    last = part["window"] - 1
    return (
        f"Training only sees offsets 0 to {last} (shaded). The RoPE head's score is a trigonometric polynomial in "
        "r (Proposition 3): it falls across the window, as the task rewards, dives past it, and then the planes "
        "that never completed a turn bring it back up. ALiBi's score is a straight line down. The absolute codes' "
        f"curves are drawn for a query at the end of a {part['query_length']}-token sequence, the learned table's "
        f"for a query at {last}, its last row: it has nothing past {last}. Toggle a reader to show or hide its curve."
    )


def readouts(part: dict) -> str:
    """The caption of the readouts: RoPE's seed head's score at ``r = 1``, at the window's edge, its dive and peak.

    Parameters
    ----------
    part : dict
        The readouts part (``peak`` and ``deepest`` as ``[r, score]``, ``score_r1``, ``score_edge``,
        ``rebound_seed`` and the ``decimals`` of a score).

    Returns
    -------
    str
        Its last clause says what the peak outscores: the most recent key, the window's edge, or neither.

    Examples
    --------
    >>> part = {"peak": [180, 80.0], "deepest": [90, -50.0], "score_r1": 100.0, "score_edge": 5.0,
    ...         "rebound_seed": 0, "decimals": {"score": 1}}
    >>> readouts(part).split(": ")[1][:45]
    "100.0 at r = 1, 5.0 at the window's edge, a d"
    >>> "outscores one at the window's edge" in readouts(part)
    True
    """
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
    """The caption of the wavelength census: which planes turn a whole circle in the window (Theorem 5).

    Parameters
    ----------
    part : dict
        The census part (``planes``, ``full_turn`` per plane, ``d`` and ``L``).

    Returns
    -------
    str

    Examples
    --------
    >>> census({"planes": [0, 1, 2], "full_turn": [True, True, False], "d": 6, "L": 32}).split(" (")[0]
    'Wavelengths λ_j = 2π/θ_j of the 3 planes at d = 6: only planes 0 and 1 turn a whole circle in 32 positions'
    """
    full = [str(j) for j, f in zip(part["planes"], part["full_turn"]) if f]
    return (
        f"Wavelengths λ_j = 2π/θ_j of the {len(part['planes'])} planes at d = {part['d']}: only plane"
        f"{'s' if len(full) != 1 else ''} {' and '.join(full)} turn a whole circle in {part['L']} positions "
        "(Theorem 5 (i)); the rest never showed the head their full circle. Bars: each rescaling's factor on "
        "θ_j at the chosen κ. PI divides every plane by κ; NTK-aware keeps plane 0 and divides the slowest by "
        "exactly κ (Theorem 5 (iii)); YaRN, at this small d, is nearly PI."
    )


def filing(part: dict) -> str:
    """The caption of the held-out filing: how to read it, and where "the company" opens after the last mention.

    Parameters
    ----------
    part : dict
        The filing part (``companies``, ``company`` by token, and ``the_company`` and ``last_mention`` when known).

    Returns
    -------
    str

    Examples
    --------
    >>> part = {"the_company": 40, "last_mention": 30, "companies": ["Acme", "Globex"], "company": {30: 1}}
    >>> filing(part).split("“the company”, ")[1]
    '10 tokens after the last company named (Globex).'
    """
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
