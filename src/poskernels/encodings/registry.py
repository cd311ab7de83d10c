"""The registry of the ways of adding position, as the article classifies them.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the
tests and the experiments can loop over one registry (the behaviour of each in a trained head is
:data:`poskernels.model.schemes.HEAD_SCHEMES`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import check_name
from .codes import omega

__all__ = ["SCHEMES", "Scheme", "get_scheme"]


@dataclass(frozen=True)
class Scheme:
    """One way of adding position, as the article classifies it.

    Attributes
    ----------
    name : str
        Registry key.
    title : str
        Human-readable name.
    where : str
        ``"input"`` (added to the embedding), ``"rotation"`` (applied to q and k) or
        ``"score"`` (added to the logits) or ``"none"``.
    relative : bool
        Whether the score depends on positions only through the offset.
    defined_everywhere : bool
        Whether the code is defined at every position (a learned table is not).
    article : str
        The article element that defines it.
    offset_kernel : callable or None
        ``r -> value`` for a fixed scheme's kernel over causal offsets ``r >= 0`` (None when learned).
    """

    name: str
    title: str
    where: str
    relative: bool
    defined_everywhere: bool
    article: str
    offset_kernel: Callable[[np.ndarray], np.ndarray] | None = None


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in [
        Scheme("nope", "no position", "none", True, True, "Proposition 1"),
        Scheme(
            "sinusoidal",
            "sinusoidal code, added",
            "input",
            False,
            True,
            "Definition 2",
            # Theorem 1 (i): <p(m), p(m + r)> = kappa_16(r) at d = 16
            lambda r: np.cos(np.asarray(r, dtype=float)[..., None] * omega(16)).sum(-1),
        ),
        Scheme("learned", "learned table, added", "input", False, False, "Definition 1"),
        Scheme(
            "rope",
            "RoPE (rotations)",
            "rotation",
            True,
            True,
            "Definition 4",
            # Proposition 3 (iii) with q = k = all ones: sum_j 2 cos(r theta_j) at d = 16
            lambda r: 2 * np.cos(np.asarray(r, dtype=float)[..., None] * omega(16)).sum(-1),
        ),
        Scheme(
            "alibi",
            "ALiBi (linear penalty)",
            "score",
            True,
            True,
            "Definition 3, Theorem 3",
            lambda r: -0.5 * np.asarray(r, dtype=float),  # slope 1/2, ALiBi's first slope at H = 8
        ),
        Scheme("t5", "T5 relative buckets", "score", True, True, "Definition 3"),
        Scheme("shaw", "Shaw relative keys", "score", True, True, "Definition 3"),
    ]
}


def get_scheme(name: str) -> Scheme:
    """Look a scheme up by name.

    >>> get_scheme("alibi").relative
    True
    >>> get_scheme("xpos")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'xpos'; accepted: alibi, learned, nope, rope, shaw, sinusoidal, t5
    """
    return SCHEMES[check_name("scheme", name, SCHEMES)]
