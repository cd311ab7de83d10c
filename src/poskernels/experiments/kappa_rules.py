"""Which ``kappa`` a context-extension map reads each question of a filing at, and the bands read together.

The question at position ``t`` of a filing of ``n`` tokens is a sequence of ``t + 2`` tokens (the prefix and the
query).  A rule of :data:`KAPPA_RULES` gives each question its ``kappa``: by default the tournament's rule applied
to each question (``"question"``: ``kappa_t = max(1, (t + 2) / L)``), or one ``kappa = max(1, (n + 1) / L)`` for
every question of the filing (``"filing"``: its longest question's, :func:`filing_kappa`).  A reader stays one
pass by reading runs of consecutive questions as bands (:func:`kappa_bands`) whose ``kappa`` lie within
:data:`BAND_TOLERANCE` (1/16) of each other, each band at its longest question's ``kappa`` (:func:`band_kappas`;
``tol=0``: a band per ``kappa``, each question at exactly its own).

Examples
--------
>>> filing_kappa(209), filing_kappa(20)
(6.5625, 1.0)
>>> question_kappas(36).tolist()[29:]  # the questions at t = 29 .. 35: sequences of 31 .. 37 tokens
[1.0, 1.0, 1.03125, 1.0625, 1.09375, 1.125, 1.15625]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import PosKernelsError, check_name

__all__ = [
    "BAND_TOLERANCE",
    "DEFAULT_KAPPA_RULE",
    "KAPPA_RULES",
    "band_kappas",
    "filing_kappa",
    "kappa_bands",
    "question_kappas",
]


def filing_kappa(n_tokens: int, L: int = 32) -> float:
    """The extension ratio for a filing of ``n_tokens``: ``max(1, (n_tokens + 1) / L)``.

    The longest sequence the filing poses is all of it plus the query token; a filing that fits the training
    window is read as trained.

    Parameters
    ----------
    n_tokens : int
        The filing's length.
    L : int, optional
        The training length (default 32).

    Returns
    -------
    float
        ``max(1, (n_tokens + 1) / L)``.

    Examples
    --------
    >>> filing_kappa(209), filing_kappa(20), filing_kappa(63, L=16)
    (6.5625, 1.0, 4.0)
    """
    return max(1.0, (int(n_tokens) + 1) / L)


#: How a map's ``kappa`` is chosen for the questions of a filing of ``n`` tokens: name -> ``(n, L) -> (n,)``.
KAPPA_RULES: dict[str, Callable[[int, int], np.ndarray]] = {
    # the tournament's rule, question by question: the question at t reads t + 2 tokens (prefix and query)
    "question": lambda n, L: np.maximum(1.0, (np.arange(n) + 2.0) / L),
    # one kappa for the whole filing, its longest question's (n + 1 tokens)
    "filing": lambda n, L: np.full(n, filing_kappa(n, L)),
}
#: The rule the case study reads with.
DEFAULT_KAPPA_RULE = "question"


def question_kappas(n_tokens: int, L: int = 32, rule: str = DEFAULT_KAPPA_RULE) -> np.ndarray:
    """The ``kappa`` of each question of a filing of ``n_tokens`` under ``rule`` (:data:`KAPPA_RULES`), shape (n,).

    Parameters
    ----------
    n_tokens : int
        The filing's length ``n``.
    L : int, optional
        The training length (default 32).
    rule : str, optional
        A key of :data:`KAPPA_RULES` (default :data:`DEFAULT_KAPPA_RULE`, ``"question"``).

    Returns
    -------
    ndarray, shape (n,)
        The ``kappa`` of the question at each ``t``.

    Raises
    ------
    PosKernelsError
        If ``rule`` is not a rule of :data:`KAPPA_RULES`.

    Examples
    --------
    >>> [float(question_kappas(40, rule=r)[t]) for r in ("filing", "question") for t in (0, 39)]
    [1.28125, 1.28125, 1.0, 1.28125]
    >>> question_kappas(40, rule="longest")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown kappa rule 'longest'; accepted: filing, question
    """
    rule = check_name("kappa rule", rule, KAPPA_RULES)
    return KAPPA_RULES[rule](int(n_tokens), int(L))


#: The default width of a band: its questions' ``kappa`` lie within this ratio of the first one's (1/16: a question
#: is read at most 6.25% more compressed than at its own ``kappa``); 0 reads each question at exactly its own.
BAND_TOLERANCE = 1 / 16


def kappa_bands(kappas: np.ndarray, tol: float = 0.0) -> list[tuple[float, int, int]]:
    """The bands of a filing's questions (non-decreasing ``kappas``): ``(kappa, first, stop)``, in order.

    A band runs from question ``a`` while ``kappa_t <= kappa_a (1 + tol)`` and is read at the largest ``kappa`` of its
    questions (its longest question's, so no question is read at a scale past its own length); ``tol = 0``: each
    run of equal ``kappa``.

    Parameters
    ----------
    kappas : array_like, shape (n,)
        Each question's ``kappa``, non-decreasing (:func:`question_kappas`).
    tol : float, optional
        How wide a band may be, a ratio >= 0 (default 0).

    Returns
    -------
    list of (float, int, int)
        ``(kappa the band is read at, first question, one past its last)``.

    Raises
    ------
    PosKernelsError
        If ``tol`` is negative or not finite, or ``kappas`` decrease.

    Examples
    --------
    >>> kappa_bands(np.array([1.0, 1.0, 1.5, 2.0, 2.0]))
    [(1.0, 0, 2), (1.5, 2, 3), (2.0, 3, 5)]
    >>> kappa_bands(np.array([1.0, 1.0, 1.04, 1.1, 1.12]), tol=1 / 16)
    [(1.04, 0, 3), (1.12, 3, 5)]
    >>> kappa_bands(np.array([2.0, 1.0]))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: kappa_bands reads the questions of a filing in order: kappas must not decrease
    """
    kappas = np.asarray(kappas, dtype=float)
    tol = float(tol)
    if not (tol >= 0 and np.isfinite(tol)):
        raise PosKernelsError(f"the band tolerance must be a finite number >= 0; got {tol!r}")
    if kappas.size and np.any(np.diff(kappas) < 0):
        raise PosKernelsError("kappa_bands reads the questions of a filing in order: kappas must not decrease")
    out, a = [], 0
    while a < kappas.size:
        b = int(np.searchsorted(kappas, kappas[a] * (1 + tol) * (1 + 1e-12), side="right"))  # first past the band
        out.append((float(kappas[b - 1]), a, b))
        a = b
    return out


def band_kappas(kappas: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """The ``kappa`` each question is read at: its band's (:func:`kappa_bands`), shape of ``kappas``.

    Parameters
    ----------
    kappas : array_like, shape (n,)
        Each question's ``kappa``, non-decreasing.
    tol : float, optional
        How wide a band may be (default 0).

    Returns
    -------
    ndarray, shape (n,)
        The ``kappa`` of each question's band.

    Raises
    ------
    PosKernelsError
        As :func:`kappa_bands`.

    Examples
    --------
    >>> band_kappas(np.array([1.0, 1.0, 1.04, 1.1, 1.12]), tol=1 / 16).tolist()
    [1.04, 1.04, 1.04, 1.12, 1.12]
    """
    out = np.empty(np.shape(kappas))
    for kappa, a, b in kappa_bands(kappas, tol):
        out[a:b] = kappa
    return out
