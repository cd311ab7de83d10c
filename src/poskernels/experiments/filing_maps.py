"""The named filing readers: a trained scheme read as trained or through a context-extension map, band by band.

Readers: the four trained schemes, and the RoPE heads re-read through the context-extension maps
(:data:`FILING_READERS`, the case study's seven); every other registered scheme read as trained
(:func:`filing_readers`: the schemes beyond the article, :mod:`poskernels.experiments.filings_beyond`) goes through
the same score.  :func:`read_filing_as` reads each question at its ``kappa`` under a rule of
:data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` and stays one pass of
:func:`~poskernels.experiments.filings_reader.read_filing`: runs of consecutive questions form bands
(:func:`~poskernels.experiments.kappa_rules.kappa_bands`), each read at its longest question's ``kappa`` as one
block of the score matrix (its questions against the keys they see), so the scores computed are those of one pass,
cut into bands (``tol=0``: a band per ``kappa``, each question at exactly its own, at ~10x the cost).  A head whose
score is its turned content alone (RoPE) reads its bands together, bit for bit.  :func:`read_filing_as_loop` is the
reference, one forward pass per question.

Examples
--------
>>> from poskernels.model import init_params
>>> cfg = HeadConfig(scheme="rope")
>>> rope = init_params(cfg, np.random.default_rng(0))
>>> ids = np.random.default_rng(1).integers(0, 16, size=50)
>>> np.allclose(read_filing_as(rope, cfg, ids, "rope_yarn"), read_filing_as_loop(rope, cfg, ids, "rope_yarn"))
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encodings import SCHEMES, Scheme, default_positions
from ..errors import PosKernelsError, check_name
from ..model.config import HeadConfig
from ..model.engine.bands import band_turns, turn
from ..model.engine.one_head import query_forward
from ..model.head import Reading, token_table
from ..model.reading import PLAIN, frequencies
from ..model.score import score_scale
from ..tasks.filings.tokens import QUERY
from .filings_reader import _check_ids, read_filing
from .kappa_rules import BAND_TOLERANCE, DEFAULT_KAPPA_RULE, band_kappas, filing_kappa, kappa_bands, question_kappas
from .readers import pick

__all__ = ["FILING_READERS", "filing_readers", "read_filing_as", "read_filing_as_loop", "reader_reading"]


#: The seven readers of the case study: name -> (trained scheme, context-extension map).
FILING_READERS: dict[str, tuple[str, str]] = pick(
    ("nope", "sinusoidal", "rope", "alibi", "rope_pi", "rope_ntk", "rope_yarn")
)


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


def reader_reading(reader: str, cfg: HeadConfig, n_tokens: int) -> Reading:
    """How ``reader`` reads a filing of ``n_tokens`` (plain, or a RoPE head through PI, NTK-aware or YaRN).

    Parameters
    ----------
    reader : str
        A key of :func:`filing_readers`.
    cfg : HeadConfig
        The head read, of the reader's scheme.
    n_tokens : int
        The filing's length (the map reads it at :func:`~poskernels.experiments.kappa_rules.filing_kappa`).

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
        return PLAIN
    return Reading.through(cfg, name, filing_kappa(n_tokens, cfg.n_train))


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

    One pass cut into bands (:func:`~poskernels.experiments.kappa_rules.kappa_bands`): the questions ``a .. b - 1``
    of a band are one call of :func:`~poskernels.experiments.filings_reader.read_filing` on the prefix ``ids[:b]``
    from ``start = a``, the block of the score matrix with their rows, read through the map at the band's ``kappa``.
    A plain reader (no map) is one call.  A head whose score is its turned content alone (RoPE) reads its bands
    together, the same bits as the band-by-band calls with a fraction of their NumPy calls (each band's keys turned
    in one call for all bands).

    Parameters
    ----------
    params, cfg
        A head of the reader's scheme.
    ids : ndarray of int, shape (n,)
        The filing's token ids (no query token).
    reader : str
        A key of :func:`filing_readers` (the seven of :data:`FILING_READERS`, or a registered scheme as trained).
    rule : str
        A key of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (default
        :data:`~poskernels.experiments.kappa_rules.DEFAULT_KAPPA_RULE`).
    tol : float
        How wide a band may be (:data:`~poskernels.experiments.kappa_rules.BAND_TOLERANCE`; 0: each question at exactly
        its own ``kappa``).

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
    plain_turn = frequencies(cfg, PLAIN) is not None and scheme.code(params, cfg, default_positions(1)) is None
    return plain_turn and type(scheme).bias is Scheme.bias and not scheme.scale_grows


def _read_bands(params: dict, cfg: HeadConfig, ids: np.ndarray, name: str, bands) -> np.ndarray:
    """:func:`~poskernels.experiments.filings_reader.read_filing` of every band ``(kappa, a, b)`` of a head that turns
    alone (:func:`_turns_alone`), bit for bit: the same arithmetic on the same operands, the bands together where it
    is elementwise (each band's keys turned at its frequencies in one call, the softmax's exponentials in one), and
    each product whose shape decides its rounding at its band's own shape (a BLAS product's row may round
    differently in a taller matrix: a band's keys and values are its prefix's own).  ``(n, C)``, row ``t`` the
    question at ``t``."""
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
        A key of :data:`~poskernels.experiments.kappa_rules.KAPPA_RULES` (default
        :data:`~poskernels.experiments.kappa_rules.DEFAULT_KAPPA_RULE`).
    tol : float
        How wide a band may be (:data:`~poskernels.experiments.kappa_rules.BAND_TOLERANCE`).

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
        reading = PLAIN if name == "none" else _map_reading(cfg, name, float(kappas[t]))
        seq = np.append(ids[: t + 1], QUERY)[None, :]  # (1, t + 2): the prefix and the query
        rows.append(query_forward(params, cfg, seq, reading=reading)[0][0])
    return np.stack(rows)  # (n, C)
