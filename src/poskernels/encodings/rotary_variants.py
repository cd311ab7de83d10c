"""The rotary schemes models ship beyond RoPE itself: xPos, p-RoPE and partial rotary, each a transform.

Each is RoPE (Definition 4) with other per-plane frequencies, so each is one :class:`Scheme` whose ``transform``
returns them; the head, the stacked trainer and the streaming reader turn by any frequencies, and a complex one
``theta - i gamma`` is a rotation with decay.  None has parameters of its own: a transform's backward is the
head's inverse turn.

* **xPos** (Sun et al. 2022, "A Length-Extrapolatable Transformer"): the query at ``t`` is scaled by
  ``zeta_j^{t / gamma}`` and the key at ``j`` by ``zeta_j^{-j / gamma}`` in plane ``j``, so their product carries
  ``zeta_j^{(t - j) / gamma}``, a decay in the *offset*, with ``zeta_j = (2j/d + gamma_x) / (1 + gamma_x)`` in
  ``(0, 1)`` (the fast planes decay most) and the scale base ``gamma``.  As complex frequencies:
  ``theta_j - i gamma_j`` with ``gamma_j = -ln(zeta_j) / gamma`` (:func:`xpos_frequencies`).
* **p-RoPE** (Barbero et al. 2024, "Round and Round We Go! What makes Rotary Positional Encodings useful?"):
  RoPE's frequencies on the fastest ``floor(p d / 2)`` planes, frequency 0 (no turn) on the slowest rest
  (:func:`p_rope_frequencies`).
* **Partial rotary** as released models use it (GPT-NeoX's ``rotary_pct``, transformers' ``partial_rotary_factor``):
  the first ``d_r = floor(f d)`` dimensions turn, with frequencies of the rotary width, ``b^{-2i/d_r}``, the rest do
  not (:func:`partial_rotary_frequencies`).  The same kernel as p-RoPE's but for the frequencies: partial rotary
  spans the whole range ``1 .. b^{-(d_r - 2)/d_r}`` in fewer planes, p-RoPE keeps the fastest of RoPE's own.

These are the formulas a head evaluates at every step; the kernels over offsets, with what the papers state, are
in :mod:`poskernels.theory.rotary_variants`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import PosKernelsError, check_base, check_budget, check_even_dimension, check_real
from .codes import omega, plane_frequencies
from .scheme import Scheme
from .setting import Setting
from .torch_terms import rope_turn, tensor, torch_module, turn

__all__ = [
    "PRope",
    "PartialRotary",
    "XPOS_PAPER_SCALE_BASE",
    "XPos",
    "XPosRescaled",
    "p_rope_frequencies",
    "partial_rotary_frequencies",
    "rotated_planes",
    "xpos_frequencies",
    "xpos_zeta",
]

#: The paper's scale base ``gamma`` (torchscale's ``scale_base``), set for its 1,024-token training length.
XPOS_PAPER_SCALE_BASE = 512.0


def xpos_zeta(d: int, gamma_x: float = 0.4) -> np.ndarray:
    """xPos's per-plane decay base ``zeta_j = (2j/d + gamma_x) / (1 + gamma_x)``, ``j = 0..d/2-1``, in ``(0, 1)``.

    torchscale writes it ``(arange(0, d, 2) + 0.4 d) / (1.4 d)`` (Sun et al. 2022).

    Parameters
    ----------
    d : int
        The even head width.
    gamma_x : float, optional
        xPos's positive offset; default 0.4 (torchscale's).

    Returns
    -------
    ndarray, shape (d/2,)
        ``zeta_j``, increasing in ``j``.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `gamma_x` not positive.

    Examples
    --------
    >>> xpos_zeta(8).round(4).tolist()
    [0.2857, 0.4643, 0.6429, 0.8214]
    """
    d = check_even_dimension(d)
    gamma_x = check_real("gamma_x", gamma_x, 0, None, open_lo=True)
    return (2.0 * np.arange(d // 2) / d + gamma_x) / (1.0 + gamma_x)  # (d/2,)


def xpos_frequencies(d: int, base: float, scale_base: float, gamma_x: float = 0.4) -> np.ndarray:
    """xPos as complex frequencies ``theta_j - i gamma_j``, ``gamma_j = -ln(zeta_j) / scale_base`` (shape ``(d/2,)``).

    A key ``r`` back then weighs ``e^{-gamma_j r} = zeta_j^{r / scale_base}`` in plane ``j``.

    Parameters
    ----------
    d : int
        The even head width.
    base : float
        RoPE's base of ``theta_j = b^{-2j/d}``.
    scale_base : float
        xPos's positive scale: the decay is ``zeta_j`` per ``scale_base`` positions.
    gamma_x : float, optional
        xPos's positive offset in ``zeta_j``; default 0.4.

    Returns
    -------
    ndarray of complex, shape (d/2,)
        ``theta_j - i gamma_j``.

    Raises
    ------
    PosKernelsError
        If `d`, `base`, `scale_base` or `gamma_x` is out of range.

    Examples
    --------
    >>> f = xpos_frequencies(8, 10_000.0, 16.0)
    >>> f.real.round(4).tolist(), np.exp(-16 * -f.imag).round(4).tolist()  # theta; zeta = e^{-gamma * scale_base}
    ([1.0, 0.1, 0.01, 0.001], [0.2857, 0.4643, 0.6429, 0.8214])
    """
    scale_base = check_real("scale_base", scale_base, 0, None, open_lo=True)
    gamma = -np.log(xpos_zeta(d, gamma_x)) / scale_base  # (d/2,) > 0
    base = check_base(base)  # d was checked by xpos_zeta; omega's budget, then its frequencies
    check_budget(f"omega(d) at d = {d}", d // 2)
    return plane_frequencies(int(d), base) - 1j * gamma  # (d/2,) complex


def rotated_planes(d: int, p: float) -> int:
    """How many of the ``d/2`` planes p-RoPE turns: ``floor(p d / 2)`` (at ``p = 1`` all: RoPE; Barbero et al. 2024).

    Parameters
    ----------
    d : int
        The even head width.
    p : float
        The share of planes that turn, in ``[0, 1]``.

    Returns
    -------
    int
        The number of turning planes (the fastest ones).

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer or `p` lies outside ``[0, 1]``.

    Examples
    --------
    >>> rotated_planes(16, 0.75), rotated_planes(6, 0.75), rotated_planes(16, 1.0)
    (6, 2, 8)
    """
    d = check_even_dimension(d)
    p = check_real("p", p, 0, 1)
    return _rotated_planes(d, p)


def _rotated_planes(d: int, p: float) -> int:
    """:func:`rotated_planes` of a checked even `d` and `p` in ``[0, 1]``."""
    return int(math.floor(p * (d // 2) + 1e-9))


def p_rope_frequencies(d: int, base: float, p: float) -> np.ndarray:
    """p-RoPE's frequencies: RoPE's ``b^{-2j/d}`` on the fastest :func:`rotated_planes` planes, 0 on the rest.

    Parameters
    ----------
    d : int
        The even head width.
    base : float
        RoPE's base.
    p : float
        The share of planes that turn, in ``[0, 1]``.

    Returns
    -------
    ndarray, shape (d/2,)
        The frequencies, 0 on the planes that do not turn.

    Raises
    ------
    PosKernelsError
        If `d`, `base` or `p` is out of range.

    Examples
    --------
    >>> p_rope_frequencies(8, 10_000.0, 0.75).tolist()
    [1.0, 0.1, 0.01, 0.0]
    """
    theta = omega(d, base)  # (d/2,)  d and base checked
    theta[_rotated_planes(2 * theta.size, check_real("p", p, 0, 1)) :] = 0.0  # the slowest planes do not turn
    return theta


def partial_rotary_frequencies(d: int, base: float, factor: float) -> np.ndarray:
    """Partial rotary's frequencies: ``b^{-2i/d_r}`` on the first ``d_r / 2`` planes, ``d_r = floor(f d)``; 0 after.

    As transformers' ``_compute_default_rope_parameters`` (``dim = int(head_dim * partial_rotary_factor)``,
    ``inv_freq = base ** -(arange(0, dim, 2) / dim)``) and GPT-NeoX's ``rotary_pct``.

    Parameters
    ----------
    d : int
        The even head width.
    base : float
        RoPE's base.
    factor : float
        The partial rotary factor ``f``, in ``[0, 1]``.

    Returns
    -------
    ndarray, shape (d/2,)
        The frequencies, 0 past the rotary width.

    Raises
    ------
    PosKernelsError
        If `d`, `base` or `factor` is out of range.

    Examples
    --------
    >>> partial_rotary_frequencies(16, 10_000.0, 0.5).tolist()
    [1.0, 0.1, 0.01, 0.001, 0.0, 0.0, 0.0, 0.0]
    """
    d = check_even_dimension(d)
    factor = check_real("partial_rotary_factor", factor, 0, 1)
    base = check_base(base)
    d_r = int(d * factor + 1e-9)  # the rotary width
    theta = np.zeros(d // 2)  # (d/2,)
    i = np.arange(d_r // 2)
    theta[: i.size] = base ** (-2.0 * i / d_r)
    return theta


def _read(theta: np.ndarray, reading, turned: np.ndarray | None = None) -> np.ndarray:
    """``theta`` as trained, or a reading's frequencies (Definition 5's maps) on the planes the scheme turns."""
    if reading.inv_freq is None:
        return theta
    freq = np.asarray(reading.inv_freq, dtype=float).copy()  # (d/2,)
    if freq.shape != theta.shape:
        raise PosKernelsError(f"a reading's inv_freq must have shape {theta.shape}; got {freq.shape}")
    if turned is not None:
        freq[~turned] = 0.0  # the planes the scheme leaves unturned stay so under any map
    return freq


class XPos(Scheme):
    """xPos (Sun et al. 2022): RoPE whose plane ``j`` decays as ``zeta_j^{(t - j) / gamma}`` in the offset.

    ``zeta_j = (2j/d + gamma_x) / (1 + gamma_x)`` with the paper's ``gamma_x = 0.4`` (setting ``xpos_gamma``);
    the scale base ``gamma`` is the setting ``xpos_scale_base``, by default the paper's (and torchscale's)
    ``gamma = 512`` (:data:`XPOS_PAPER_SCALE_BASE`).  At our 32-token window that decay is slight (the fastest
    plane keeps ``zeta_0^{31/512} = 0.93`` of its weight at the window's edge), so inside the window the head is
    nearly RoPE; :class:`XPosRescaled` (``xpos_rescaled``) is the variant that keeps the paper's *ratio* instead.
    A reading's frequencies (Definition 5) replace ``theta`` and keep the decay.
    """

    name, title = "xpos", "xPos"
    article = "Sun et al. 2022, A Length-Extrapolatable Transformer"
    paper, year, colour = "Sun et al.", 2022, "#56b4e9"
    where, relative, defined_everywhere, in_article = "rotation", True, True, False
    settings = {
        "xpos_scale_base": Setting(
            XPOS_PAPER_SCALE_BASE, 0.0, None, "the scale base gamma (the paper's and torchscale's 512)"
        ),
        "xpos_gamma": Setting(0.4, 0.0, None, "gamma_x in zeta_j = (2j/d + gamma_x) / (1 + gamma_x); the paper's 0.4"),
    }

    def transform(self, cfg, reading):
        theta = xpos_frequencies(cfg.d, cfg.base, cfg.xpos_scale_base, cfg.xpos_gamma)  # (d/2,) complex
        return _read(theta.real, reading) + 1j * theta.imag  # theta - i gamma (imag = -gamma)

    def reference_turn(self, v, cfg, positions, dtype, query=False, reading=None):
        """In torch (torchscale's ``XPOS``): RoPE's turn, then plane ``j`` scaled by ``zeta_j^{m / gamma}`` for a
        query and ``zeta_j^{-m / gamma}`` for a key, ``zeta_j = (2j + gamma_x d) / ((1 + gamma_x) d)``."""
        zeta = (np.arange(0, cfg.d, 2) + cfg.xpos_gamma * cfg.d) / ((1 + cfg.xpos_gamma) * cfg.d)  # (P,)
        m = np.asarray(positions, dtype=float)[..., None]  # (..., 1)
        scale = zeta ** ((m if query else -m) / cfg.xpos_scale_base)  # (..., P)
        return rope_turn(v, cfg, positions, dtype, reading) * tensor(scale, dtype).repeat_interleave(2, dim=-1)


class XPosRescaled(XPos):
    """xPos with its scale base rescaled to our window, ``gamma = L / 2 = 16`` (not the paper's constant).

    The paper's ``gamma = 512`` is half its 1,024-token training length; at ``gamma = 16`` every plane decays over
    our 32-token window as much as the paper's did over its own (``zeta_0^{2} = 0.08`` at the edge).  The price:
    far out the decay ``zeta^{r / gamma}`` erases the planes whose turns would rebound (planes 2 and 3 keep 0.0002
    and 0.0012 of their weight at ``r = 181``, where the paper's constant keeps 0.76 and 0.81), so this variant's
    long readings are those of a strongly decaying kernel, not of xPos as published.  Same setting, another default.
    """

    name, title = "xpos_rescaled", "xPos, scale base rescaled to 16"
    colour = "#9ad0f0"
    settings = {
        **XPos.settings,
        "xpos_scale_base": Setting(
            16.0, 0.0, None, "the scale base gamma: half our 32-token training length (the paper's 512: half its 1,024)"
        ),
    }


class PRope(Scheme):
    """p-RoPE (Barbero et al. 2024): RoPE on the fastest ``floor(p d / 2)`` planes, the slowest left unturned.

    The paper trains ``p = 0.25`` and ``0.75`` (and 1, RoPE; 0, no position) and finds ``0.75`` best; ``0.75`` is
    the setting ``prope_p``'s default (6 of our 8 planes turn; the unturned two had wavelengths 6,283 and 19,869).
    The unturned planes are a channel of the score that does not depend on the offset.
    """

    name, title = "p_rope", "p-RoPE"
    article = "Barbero et al. 2024, Round and Round We Go! What makes Rotary Positional Encodings useful?"
    paper, year, colour = "Barbero et al.", 2024, "#332288"
    where, relative, defined_everywhere, in_article = "rotation", True, True, False
    settings = {"prope_p": Setting(0.75, 0.0, 1.0, "the fraction p of the planes that turn (the fastest)")}

    def transform(self, cfg, reading):
        theta = p_rope_frequencies(cfg.d, cfg.base, cfg.prope_p)  # (d/2,)
        return _read(theta, reading, np.arange(cfg.d // 2) < rotated_planes(cfg.d, cfg.prope_p))

    def reference_turn(self, v, cfg, positions, dtype, query=False, reading=None):  # in torch: the fastest planes
        k = int(np.floor(cfg.prope_p * (cfg.d // 2) + 1e-9))  # planes that turn by RoPE's theta, the others not
        turned = rope_turn(v, cfg, positions, dtype, reading)
        return torch_module().cat([turned[..., : 2 * k], v[..., 2 * k :]], dim=-1)


class PartialRotary(Scheme):
    """Partial rotary as released models ship it: the first ``floor(f d)`` dimensions turn, at the rotary width's
    frequencies ``b^{-2i/d_r}``; the rest do not.

    ``f`` is the setting ``partial_rotary_factor`` (transformers' name; GPT-NeoX's ``rotary_pct``), default 0.25,
    GPT-NeoX's, Pythia's and StableLM's (Phi-2 uses 0.4, ChatGLM and Persimmon 0.5).  At ``d = 16`` that is 4
    rotary dimensions, two planes, at frequencies 1 and 0.01.  transformers turns its rotary dimensions in the
    half-split layout (``rotate_half``); ours are consecutive pairs: the score is the same once the coordinates
    are mapped (``tests/test_rotary_variants.py`` checks it against transformers).
    """

    name, title = "partial_rotary", "partial rotary"
    article = "Black et al. 2022, GPT-NeoX-20B: An Open-Source Autoregressive Language Model (rotary_pct)"
    paper, year, colour = "Black et al.", 2022, "#117733"
    where, relative, defined_everywhere, in_article = "rotation", True, True, False
    settings = {"partial_rotary_factor": Setting(0.25, 0.0, 1.0, "the fraction f of the head's dimensions that turn")}

    def transform(self, cfg, reading):
        theta = partial_rotary_frequencies(cfg.d, cfg.base, cfg.partial_rotary_factor)  # (d/2,)
        return _read(theta, reading, theta > 0)

    def reference_turn(self, v, cfg, positions, dtype, query=False, reading=None):
        """In torch: the first ``d_r = int(f d)`` coordinates turn by ``b^{-2i/d_r}`` (consecutive pairs here), the
        others not at all."""
        d_r = int(cfg.d * cfg.partial_rotary_factor + 1e-9)
        P = d_r // 2
        inv_freq = None if reading is None else reading.inv_freq
        theta = cfg.base ** (-np.arange(0, 2 * P, 2) / d_r) if inv_freq is None else inv_freq[:P]
        ang = np.asarray(positions, dtype=float)[..., None] * np.asarray(theta, dtype=float)  # (..., P)
        return torch_module().cat([turn(v[..., : 2 * P], ang, dtype), v[..., 2 * P :]], dim=-1)
