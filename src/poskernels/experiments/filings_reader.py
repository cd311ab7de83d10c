"""The one-pass filing reader: a trained head asked "which company was named last?" at every position at once.

The question at position ``t`` of a filing is the cue task's sequence ``x_0 .. x_t, QUERY``: the filing's prefix
with the query token appended at position ``t + 1``.  The plain way to answer it everywhere runs the head's
forward pass once per position (:func:`read_filing_loop`, ``n`` passes over prefixes of growing length).  The
one-pass reader (:func:`read_filing`) computes every key and value of the filing once, puts a query token at each
of the positions ``1 .. n`` at once, and lets query ``t + 1`` attend to the keys ``j <= t`` and to itself:

    z_{t j} = <R(t+1) q_{t+1}, R(j) k_j> / tau + bias(t + 1 - j),  j <= t,     z_{t,self} = <q, k_QUERY> / tau + bias(0)

an ``(n, n + 1)`` score matrix instead of ``n`` forward passes, every score the head's one definition
(:func:`poskernels.model.score.score`); the tests check it equals the loop at every position for every scheme
and every reading.

Readers: the four trained schemes, and the RoPE heads re-read through the context-extension maps
(:data:`FILING_READERS`); every other registered scheme read as trained (:func:`filing_readers`: the schemes beyond
the article, :mod:`poskernels.experiments.filings_beyond`) goes through the same score.  Which
``kappa`` a map reads a question with is a rule of :data:`KAPPA_RULES`: by default the tournament's rule applied
to each question (``"question"``: the question at ``t`` is a sequence of ``t + 2`` tokens, the prefix and the
query, read at ``kappa_t = max(1, (t + 2) / L)``), or one ``kappa = max(1, (n + 1) / L)`` for every question of a
filing of ``n`` tokens (``"filing"``: its longest question's).  :func:`read_filing_as` stays one pass: runs of
consecutive questions form bands whose ``kappa`` lie within :data:`BAND_TOLERANCE` (1/16) of each other, each
band is read at its longest question's ``kappa`` as one block of the score matrix (its questions against the keys
they see), so the scores computed are those of one pass, cut into bands (``tol=0``: a band per ``kappa``, each
question at exactly its own, at ~10x the cost).

Examples
--------
>>> from poskernels.model import HeadConfig, init_params
>>> cfg = HeadConfig(scheme="alibi")
>>> params = init_params(cfg, np.random.default_rng(0))
>>> ids = np.random.default_rng(1).integers(0, 16, size=50)
>>> np.allclose(read_filing(params, cfg, ids), read_filing_loop(params, cfg, ids))
True
>>> filing_kappa(209), filing_kappa(20)
(6.5625, 1.0)
>>> question_kappas(36).tolist()[29:]  # the questions at t = 29 .. 35: sequences of 31 .. 37 tokens
[1.0, 1.0, 1.03125, 1.0625, 1.09375, 1.125, 1.15625]
>>> cfg = HeadConfig(scheme="rope")
>>> rope = init_params(cfg, np.random.default_rng(0))
>>> np.allclose(read_filing_as(rope, cfg, ids, "rope_yarn"), read_filing_as_loop(rope, cfg, ids, "rope_yarn"))
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..encodings import SCHEMES, Scheme, default_positions
from ..errors import PosKernelsError, check_int, check_name
from ..model.config import HeadConfig
from ..model.engine.bands import band_turns, turn
from ..model.engine.cut import content_width as stream_content_width
from ..model.engine.one_head import query_forward
from ..model.engine.scores import pair_scores, scores
from ..model.head import Reading, token_table
from ..model.reading import frequencies
from ..model.score import score, score_scale
from ..tasks.filings.tokens import QUERY
from .readers import pick

__all__ = [
    "BAND_TOLERANCE",
    "DEFAULT_KAPPA_RULE",
    "FILING_READERS",
    "KAPPA_RULES",
    "filing_readers",
    "band_kappas",
    "recursive_decay",
    "content_width",
    "filing_kappa",
    "kappa_bands",
    "question_kappas",
    "reader_reading",
    "read_filing",
    "read_filing_as",
    "read_filing_as_loop",
    "read_filing_loop",
]

#: The seven readers of the case study: name -> (trained scheme, context-extension map).
FILING_READERS: dict[str, tuple[str, str]] = pick(
    ("nope", "sinusoidal", "rope", "alibi", "rope_pi", "rope_ntk", "rope_yarn")
)


_PLAIN = Reading()  # a head read as trained


def filing_readers() -> dict[str, tuple[str, str]]:
    """Every reader :func:`read_filing_as` takes: the seven of :data:`FILING_READERS`, then each scheme registered
    now (those registered later included) read as trained, where its code is defined at every position.

    A learned table of positions (``defined_everywhere=False``) has no row past the window a filing runs beyond, so
    it has no filing reader.

    Returns
    -------
    dict of str to (str, str)
        ``reader -> (trained scheme, map)``.

    Examples
    --------
    >>> r = filing_readers()
    >>> list(r)[:7] == list(FILING_READERS), r["fire"], "learned" in r
    (True, ('fire', 'none'), False)
    """
    whole = {s: (s, "none") for s, scheme in SCHEMES.items() if scheme.defined_everywhere}
    return {**FILING_READERS, **whole}


def _reader(reader: str, cfg: HeadConfig) -> tuple[str, str]:
    """``(scheme, map)`` of ``reader`` (a key of :func:`filing_readers`), checked against the head's scheme."""
    readers = filing_readers()
    scheme, name = readers[check_name("reader", reader, readers)]
    if cfg.scheme != scheme:
        raise PosKernelsError(f"reader {reader!r} reads {scheme!r} heads; got a {cfg.scheme!r} head")
    return scheme, name


def recursive_decay(cfg: HeadConfig) -> float | None:
    """The decay ``rho = e^{-s}`` per position of offset of a head whose one-pass reading is a recursive filter.

    A head whose bias is exactly ``-s r`` (the scheme's ``linear_slope``: ALiBi's ``s``, 0 without position) and
    whose logit scale is 1 (Theorem 3 (i): the exponential kernel ``e^{-s r}``); None for any other.

    Parameters
    ----------
    cfg : HeadConfig
        The head.

    Returns
    -------
    float or None
        ``rho = e^{-s}`` (1 without position); None when the reading is not a fixed filter.

    Examples
    --------
    >>> round(recursive_decay(HeadConfig(scheme="alibi")), 4)  # ALiBi's default slope 0.5: e^{-0.5}
    0.6065
    >>> recursive_decay(HeadConfig(scheme="nope")), recursive_decay(HeadConfig(scheme="rope"))
    (1.0, None)
    """
    scheme = SCHEMES[cfg.scheme]
    if scheme.scale_grows:  # a logit scale s log n changes with every new key: no fixed filter
        return None
    s = scheme.linear_slope(cfg)
    return None if s is None or scheme.logit_scale(cfg, _PLAIN) != 1.0 else math.exp(-s)


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


def reader_reading(reader: str, cfg: HeadConfig, n_tokens: int) -> Reading:
    """How ``reader`` reads a filing of ``n_tokens`` (plain, or a RoPE head through PI, NTK-aware or YaRN).

    Parameters
    ----------
    reader : str
        A key of :func:`filing_readers`.
    cfg : HeadConfig
        The head read, of the reader's scheme.
    n_tokens : int
        The filing's length (the map reads it at :func:`filing_kappa`).

    Returns
    -------
    Reading
        The plain reading for a reader with no map, else the map's at ``kappa = filing_kappa(n_tokens, L)``.

    Raises
    ------
    PosKernelsError
        If ``reader`` is not a filing reader, or reads heads of another scheme than ``cfg``'s.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> r = reader_reading("rope_pi", HeadConfig(scheme="rope"), 127)
    >>> (r.inv_freq / omega(16)).round(4).tolist()[:2], r.logit_scale
    ([0.25, 0.25], 1.0)
    >>> reader_reading("rope_pi", HeadConfig(scheme="alibi"), 127)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: reader 'rope_pi' reads 'rope' heads; got a 'alibi' head
    """
    _, name = _reader(reader, cfg)
    if name == "none":
        return _PLAIN
    return Reading.through(cfg, name, filing_kappa(n_tokens, cfg.n_train))


def _check_ids(cfg: HeadConfig, ids) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise PosKernelsError(
            f"a filing's token ids must be a non-empty 1-d integer array; got {ids.dtype} {ids.shape}"
        )
    if ids.min() < 0 or ids.max() >= QUERY:
        raise PosKernelsError(
            f"a filing's token ids must lie in [0, {QUERY - 1}] (no query token); got {ids.min()}..{ids.max()}"
        )
    return ids


def _causal_mask(n: int) -> np.ndarray:
    """0 where question ``t``'s query (at ``t + 1``) sees key ``j <= t``, else -inf; shape (n, n), read-only: a corner
    of one mask kept for the longest filings (a corpus's 100 lengths, each read by every head in turn)."""
    return _causal_mask_upto(1 << max(0, n - 1).bit_length())[:n, :n]


@lru_cache(maxsize=4)
def _causal_mask_upto(size: int) -> np.ndarray:
    t = np.arange(size)
    mask = np.where(t[:, None] >= t[None, :], 0.0, -np.inf)  # (size, size)
    mask.setflags(write=False)
    return mask


def read_filing(
    params: dict, cfg: HeadConfig, ids, reading: Reading = _PLAIN, method: str = "auto", start: int = 0
) -> np.ndarray:
    """Answer the question at every position of a filing in one pass.

    Parameters
    ----------
    params : dict of ndarray
        A head's weights (:func:`poskernels.model.head.init_params`).
    cfg : HeadConfig
        The head's configuration.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reading : Reading
        Frequencies and logit scale for a RoPE head (:func:`reader_reading`).
    method : str
        ``"matrix"``: the ``(n, n + 1)`` score matrix, for every scheme.  ``"recursive"``: the ``O(n d)`` filter of
        :func:`recursive_decay`, for the heads it gives a decay.  ``"auto"`` (default): recursive where it applies.
    start : int
        Ask only the questions ``t >= start`` (the rows ``start ..`` of the score matrix: a band of
        :func:`read_filing_as`).

    Returns
    -------
    ndarray, shape (n - start, C)
        Row ``t - start``: the logits of the head asked at ``t`` (query token at position ``t + 1``).

    Notes
    -----
    Without a code or a rotation the query vector is the same at every position, ``q = E[QUERY] W_Q``, so key
    ``j``'s content score ``c(x_j)`` does not depend on the question.  For ALiBi its weight in question ``t`` is
    ``e^{c(x_j)} rho^{t + 1 - j}`` with ``rho = e^{-s}`` (Theorem 3 (i): a content kernel times an exponential
    kernel in time), so the weighted sums over ``j <= t`` obey ``y_t = rho (y_{t-1} + e^{c(x_t)} v_t)``: a
    first-order recursive filter, one pass over the filing (``rho = 1`` without position: a running sum).

    Raises
    ------
    PosKernelsError
        If ``ids`` is not a non-empty 1-d array of content token ids, ``start`` is not a question of the filing,
        ``method`` is unknown, or ``"recursive"`` is asked of a head it does not apply to.

    Examples
    --------
    >>> from poskernels.model import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> ids = np.random.default_rng(1).integers(0, 16, size=50)
    >>> read_filing(params, cfg, ids).shape, read_filing(params, cfg, ids, start=40).shape
    ((50, 8), (10, 8))
    >>> np.allclose(read_filing(params, cfg, ids, method="recursive"), read_filing(params, cfg, ids, method="matrix"))
    True
    >>> read_filing(params, cfg, [16])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: a filing's token ids must lie in [0, 15] (no query token); got 16..16
    """
    ids = _check_ids(cfg, ids)
    start = check_int("start", start, 0, ids.size - 1, f"the questions of a filing of {ids.size} tokens")
    if method not in ("auto", "matrix", "recursive"):
        raise PosKernelsError(f"unknown method {method!r}; accepted: auto, matrix, recursive")
    rho = recursive_decay(cfg)
    if method == "recursive" and rho is None:
        recursive = sorted(n for n in SCHEMES if recursive_decay(HeadConfig(scheme=n)) is not None)
        raise PosKernelsError(f"the recursive reader needs a scheme of {recursive}; got {cfg.scheme!r} (use 'matrix')")
    if method != "matrix" and rho is not None:
        if not reading.is_plain:
            raise PosKernelsError(f"a rescaled reading applies to rotary heads only; this head is {cfg.scheme!r}")
        return _read_recursive(params, cfg, ids, rho)[start:]
    n, a = ids.size, start
    pos = default_positions(n + 1)  # (n + 1,) the filing at 0..n-1, the queries at 1..n
    code = SCHEMES[cfg.scheme].code(params, cfg, pos)  # (n + 1, d) or None, computed once for both
    E = token_table(params, cfg)  # (V, d)
    # (n, d) and (n - a, d): the filing's tokens, one query per question asked
    H, Hq = E[ids], np.broadcast_to(E[QUERY], (n - a, cfg.d))
    if code is not None:
        H, Hq = H + code[:n], Hq + code[a + 1 :]
    Q, K, V = Hq @ params["W_Q"], H @ params["W_K"], H @ params["W_V"]  # (n - a, d), (n, d), (n, d)
    Ks, Vs = Hq @ params["W_K"], Hq @ params["W_V"]  # (n - a, d) each: the query token's own key and value
    seen = np.arange(a, n) + 2.0  # (n - a,) question t sees t + 2 keys: the prefix 0..t and the query's own
    Z = scores(params, cfg, Q, pos[a + 1 :], K, pos[:n], reading, n=seen)  # (n - a, n): query t + 1 against key j
    if a == 0:
        Z += _causal_mask(n)
    else:  # a band's rows only: question t sees the keys j <= t
        Z[np.arange(n)[None, :] > np.arange(a, n)[:, None]] = -np.inf
    z_self = pair_scores(params, cfg, Q, pos[a + 1 :], Ks, pos[a + 1 :], reading, n=seen)  # (n - a,) own
    m = np.maximum(Z.max(axis=1), z_self)  # (n - a,)
    Z -= m[:, None]
    np.exp(Z, out=Z)  # (n - a, n) unnormalized weights, 0 past each question's prefix
    w_self = np.exp(z_self - m)  # (n - a,)
    out = Z @ V + w_self[:, None] * Vs  # (n - a, d)
    out /= (Z.sum(axis=1) + w_self)[:, None]
    return out @ params["W_O"]  # (n - a, C)


@lru_cache(maxsize=4096)
def _map_reading(cfg: HeadConfig, name: str, kappa: float) -> Reading:
    """``Reading.through``, kept: the questions of every filing share their ``kappa`` values ((t + 2) / L)."""
    reading = Reading.through(cfg, name, kappa)
    reading.inv_freq.setflags(write=False)  # shared by every caller
    return reading


def read_filing_as(
    params: dict, cfg: HeadConfig, ids, reader: str, rule: str = DEFAULT_KAPPA_RULE, tol: float = BAND_TOLERANCE
) -> np.ndarray:
    """Every question of a filing answered by ``reader``, each read at its ``kappa`` under ``rule``.

    One pass cut into bands (:func:`kappa_bands`): the questions ``a .. b - 1`` of a band are one call of
    :func:`read_filing` on the prefix ``ids[:b]`` from ``start = a``, the block of the score matrix with their rows,
    read through the map at the band's ``kappa``.  A plain reader (no map) is one call.  A head whose score is its
    turned content alone (RoPE) reads its bands together, the same bits as the band-by-band calls with a fraction
    of their NumPy calls (each band's keys turned in one call for all bands).

    Parameters
    ----------
    params, cfg
        A head of the reader's scheme.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reader : str
        A key of :func:`filing_readers` (the seven of :data:`FILING_READERS`, or a registered scheme as trained).
    rule : str
        A key of :data:`KAPPA_RULES` (default :data:`DEFAULT_KAPPA_RULE`).
    tol : float
        How wide a band may be (:data:`BAND_TOLERANCE`; 0: each question at exactly its own ``kappa``).

    Returns
    -------
    ndarray, shape (n, C)
        Row ``t``: the logits of the reader asked at ``t``.

    Raises
    ------
    PosKernelsError
        If ``ids`` is not a filing, ``reader`` not a filing reader or one of another scheme, or ``rule`` unknown.

    Examples
    --------
    >>> from poskernels.model import init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> ids = np.random.default_rng(1).integers(0, 16, size=50)
    >>> np.allclose(read_filing_as(params, cfg, ids, "rope_pi"), read_filing_as_loop(params, cfg, ids, "rope_pi"))
    True
    >>> read_filing_as(params, cfg, ids, "alibi")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: reader 'alibi' reads 'alibi' heads; got a 'rope' head
    """
    ids = _check_ids(cfg, ids)
    kappas = question_kappas(ids.size, cfg.n_train, rule)  # (n,) checks the rule
    _, name = _reader(reader, cfg)
    if name == "none":
        return read_filing(params, cfg, ids)
    if _turns_alone(params, cfg):
        return _read_bands(params, cfg, ids, name, kappa_bands(kappas, tol))
    blocks = [
        read_filing(params, cfg, ids[:b], _map_reading(cfg, name, kappa), start=a)  # (b - a, C)
        for kappa, a, b in kappa_bands(kappas, tol)
    ]
    return np.concatenate(blocks)  # (n, C)


def _turns_alone(params: dict, cfg: HeadConfig) -> bool:
    """Whether the head's score is its turned content alone (a rotation, no code, no bias, a fixed logit scale): the
    bands of :func:`read_filing_as` are then read together by :func:`_read_bands`."""
    scheme = SCHEMES[cfg.scheme]
    plain_turn = frequencies(cfg, _PLAIN) is not None and scheme.code(params, cfg, default_positions(1)) is None
    return plain_turn and type(scheme).bias is Scheme.bias and not scheme.scale_grows


def _read_bands(params: dict, cfg: HeadConfig, ids: np.ndarray, name: str, bands) -> np.ndarray:
    """:func:`read_filing` of every band ``(kappa, a, b)`` of a head that turns alone (:func:`_turns_alone`), bit for
    bit: the same arithmetic on the same operands, the bands together where it is elementwise (each band's keys
    turned at its frequencies in one call, the softmax's exponentials in one), and each product whose shape decides
    its rounding at its band's own shape (a BLAS product's row may round differently in a taller matrix: a band's
    keys and values are its prefix's own).  ``(n, C)``, row ``t`` the question at ``t``."""
    n, d = ids.size, cfg.d
    E = token_table(params, cfg)  # (V, d)
    H = E[ids]  # (n, d) the filing's tokens
    readings = [_map_reading(cfg, name, kappa) for kappa, _, _ in bands]
    theta = np.stack([frequencies(cfg, r) for r in readings])  # (bands, P) each band's frequencies
    scale = [score_scale(params, cfg, r, None, ()) for r in readings]  # lambda / tau of each band (a number)
    layout = band_turns(theta, bands, n)  # shared by the heads of this configuration: computed once a filing
    stops, first = layout.stops, layout.first  # (bands,) each band's prefix; (bands + 1,) where its keys start in K
    K = np.empty((first[-1], d))  # (sum of the prefixes, d) each band's keys, one after the other
    V = [H[:b] @ params["W_V"] for b in stops]  # (b, d) each band's values
    Q, Ks, Vs = np.empty((n, d)), np.empty((n, d)), np.empty((n, d))  # (n, d) each: the query token's, per question
    for k, (_, a, b) in enumerate(bands):
        K[first[k] : first[k + 1]] = H[:b] @ params["W_K"]
        Hq = np.broadcast_to(E[QUERY], (b - a, d))  # (b - a, d) one query per question of the band
        Q[a:b], Ks[a:b], Vs[a:b] = Hq @ params["W_Q"], Hq @ params["W_K"], Hq @ params["W_V"]
    # phi as content_score turns them: query t + 1 at its band's conjugate rate, each band's keys at its rate
    qt, kt = turn(Q, layout.query), turn(K, layout.key)  # (n, d), (sum of the prefixes, d)
    ks = turn(Ks, layout.own)  # (n, d) pair_scores' turn of the query's own key, by 0
    Z = np.full((n, n), -np.inf)  # (n, n) question t against key j, -inf past its prefix
    z_self = np.einsum("rd,rd->r", Q, ks)  # (n,) each query against its own key, before lambda / tau
    for k, (_, a, b) in enumerate(bands):
        Z[a:b, :b] = (qt[a:b] * scale[k]) @ kt[first[k] : first[k + 1]].T  # (b - a, b) as content_score does
        z_self[a:b] *= scale[k]
    Z[layout.hidden] = -np.inf  # question t sees the keys j <= t
    m = np.maximum(Z.max(axis=1), z_self)  # (n,)
    Z -= m[:, None]
    np.exp(Z, out=Z)  # (n, n) unnormalized weights, 0 past each question's prefix
    w_self = np.exp(z_self - m)  # (n,)
    out = np.empty((n, params["W_O"].shape[1]))  # (n, C)
    for k, (_, a, b) in enumerate(bands):
        o = Z[a:b, :b] @ V[k] + w_self[a:b, None] * Vs[a:b]  # (b - a, d)
        o /= (Z[a:b, :b].sum(axis=1) + w_self[a:b])[:, None]
        out[a:b] = o @ params["W_O"]
    return out


def read_filing_as_loop(
    params: dict, cfg: HeadConfig, ids, reader: str, rule: str = DEFAULT_KAPPA_RULE, tol: float = BAND_TOLERANCE
) -> np.ndarray:
    """The same answers by the plain forward pass, each question on its own at its band's ``kappa`` (the reference).

    Parameters
    ----------
    params, cfg
        A head of the reader's scheme.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reader : str
        A key of :func:`filing_readers`.
    rule : str
        A key of :data:`KAPPA_RULES` (default :data:`DEFAULT_KAPPA_RULE`).
    tol : float
        How wide a band may be (:data:`BAND_TOLERANCE`).

    Returns
    -------
    ndarray, shape (n, C)
        Row ``t``: the logits of the reader asked at ``t``, one forward pass each.

    Raises
    ------
    PosKernelsError
        As :func:`read_filing_as`.

    Examples
    --------
    >>> from poskernels.model import init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> ids = np.random.default_rng(1).integers(0, 16, size=50)
    >>> read_filing_as_loop(params, cfg, ids[:5], "rope_yarn").shape
    (5, 8)
    """
    ids = _check_ids(cfg, ids)
    kappas = band_kappas(question_kappas(ids.size, cfg.n_train, rule), tol)  # (n,)
    _, name = _reader(reader, cfg)
    rows = []
    for t in range(ids.size):
        reading = _PLAIN if name == "none" else _map_reading(cfg, name, float(kappas[t]))
        seq = np.append(ids[: t + 1], QUERY)[None, :]  # (1, t + 2): the prefix and the query
        rows.append(query_forward(params, cfg, seq, reading=reading)[0][0])
    return np.stack(rows)  # (n, C)


def _read_recursive(params: dict, cfg: HeadConfig, ids: np.ndarray, rho: float) -> np.ndarray:
    """The one-pass reader as a recursive filter (see :func:`read_filing`'s Notes), shape (n, C)."""
    E = token_table(params, cfg)  # (V, d)
    q = E[QUERY] @ params["W_Q"]  # (d,) the query vector, the same at every position
    c = score(params, cfg, q[None], [0.0], E @ params["W_K"], np.zeros(len(E)))[0]  # (V,) each token's key at offset 0
    w = np.exp(c - c.max())  # (V,) content kernel, shifted so the largest is 1
    EV = E @ params["W_V"]  # (V, d) value of each token
    x = w[ids][:, None] * EV[ids]  # (n, d) weighted values
    from scipy.signal import lfilter  # imported here: scipy.signal pulls scipy.stats, ~1 s at start-up

    num = lfilter([rho], [1.0, -rho], x, axis=0)  # (n, d): sum_{j <= t} w_j rho^(t+1-j) v_j
    den = lfilter([rho], [1.0, -rho], w[ids])  # (n,)
    num += w[QUERY] * EV[QUERY]  # the query's own key, offset 0
    den += w[QUERY]
    return (num / den[:, None]) @ params["W_O"]  # (n, C)


def read_filing_loop(params: dict, cfg: HeadConfig, ids, reading: Reading = _PLAIN) -> np.ndarray:
    """The same answers by the plain forward pass, run separately at each position (the reference).

    Parameters
    ----------
    params : dict of ndarray
        A head's weights.
    cfg : HeadConfig
        The head's configuration.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reading : Reading, optional
        Frequencies and logit scale for a RoPE head (default as trained).

    Returns
    -------
    ndarray, shape (n, C)
        Row ``t``: the logits of the head asked at ``t``, one forward pass each.

    Raises
    ------
    PosKernelsError
        If ``ids`` is not a non-empty 1-d array of content token ids.

    Examples
    --------
    >>> from poskernels.model import init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> ids = np.random.default_rng(1).integers(0, 16, size=50)
    >>> np.allclose(read_filing_loop(params, cfg, ids[:5]), read_filing(params, cfg, ids[:5]))
    True
    >>> read_filing_loop(params, cfg, [])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: a filing's token ids must be a non-empty 1-d integer array; got float64 (0,)
    """
    ids = _check_ids(cfg, ids)
    rows = []
    for t in range(ids.size):
        seq = np.append(ids[: t + 1], QUERY)[None, :]  # (1, t + 2): the prefix and the query
        rows.append(query_forward(params, cfg, seq, reading=reading)[0][0])
    return np.stack(rows)  # (n, C)


def content_width(params: dict, cfg: HeadConfig) -> float:
    """The content width ``W`` of an ALiBi (or position-free) head, read off its weights (Theorem 3).

    At the query the head's query vector is fixed, ``q = E[QUERY] W_Q``, and a key's content score
    ``c(v) = q (E[v] W_K)^T / tau`` depends only on its token ``v``.  ``W`` is the range of ``c`` over the
    vocabulary (the 16 content tokens and the query's own key): every content score of every filing lies in an
    interval of this width, so Theorem 3 (iii) holds with it, and ``W / s`` is the head's horizon.

    Parameters
    ----------
    params : dict of ndarray
        The head's weights.
    cfg : HeadConfig
        An ALiBi or position-free head (no code, no rotation).

    Returns
    -------
    float
        ``W = max_v c(v) - min_v c(v)``.

    Raises
    ------
    PosKernelsError
        If the head has a code or a rotation.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, init_params
    >>> cfg = HeadConfig(scheme="alibi")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> T = token_table(p, cfg)
    >>> c = (T[QUERY] @ p["W_Q"]) @ (T @ p["W_K"]).T / cfg.tau
    >>> bool(np.isclose(content_width(p, cfg), c.max() - c.min()))
    True
    >>> content_width(p, HeadConfig(scheme="rope"))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the content width is defined for heads without a code or rotation; got 'rope'
    """
    return stream_content_width(params, cfg, [QUERY])  # one definition, through head.token_table
