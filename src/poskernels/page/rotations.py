"""Page section for "Rotations: RoPE": ``prop4``, the long-term-decay envelope's mean per octave of offsets at
``d = 128`` (Proposition 4 (i)).

Every number comes from :mod:`poskernels.theory`; this module only chooses the grid and prints it.
"""

from __future__ import annotations

from ..encodings import DEFAULT_BASE
from ..theory.decay import envelope_octave_means
from .registry import Context, Section, format_table

__all__ = ["ENVELOPE_LAST_OCTAVE", "ENVELOPE_WIDTH", "PROP4"]

ENVELOPE_WIDTH = 128  # d of Proposition 4's measurement
ENVELOPE_LAST_OCTAVE = 2048


# --------------------------------------------------------------------------- Proposition 4


def _prop4(ctx: Context) -> dict:
    means = envelope_octave_means(ENVELOPE_WIDTH, DEFAULT_BASE, ENVELOPE_LAST_OCTAVE)
    # Proposition 4 (i): the envelope sum_j |S_j|, averaged over each octave [2^k, 2^(k+1) - 1]
    return {"d": ENVELOPE_WIDTH, "envelope_octave_mean": {str(start): m for start, m in means.items()}}


def _prop4_render(data: dict) -> str:
    planes = data["d"] // 2
    rows = [
        [start if start == "1" else f"{start}-{2 * int(start) - 1}", mean, mean / planes]
        for start, mean in data["envelope_octave_mean"].items()
    ]
    title = f"RoPE's decay envelope sum_j |S_j|, d = {data['d']}: mean over each octave of offsets"
    return format_table(["offsets", "envelope", "per plane"], rows, title=title)


PROP4 = Section("prop4", "Proposition 4 — the long-term-decay envelope", _prop4, _prop4_render)
