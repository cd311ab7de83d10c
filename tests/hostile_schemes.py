"""Scheme files a hostile (or careless) user writes: each wrong in one way the gate must name.

``WRONG[name] = (source, check, words)``: the file's source, the check of
:func:`poskernels.model.scheme_check.check_scheme` that must fail on it, and words its line must hold.  Every file
is right everywhere the old gate looked (a head of ``n = 10``, twice the initial parameters, offsets below 400, one
head at a time), so each one passed it.  ``RIGHT`` are files that are unusual but right: the gate must pass them.
"""

from __future__ import annotations

HEAD = """
import numpy as np
from poskernels.encodings import Scheme, Setting

"""

#: A Gaussian bias ``-r^2 e^{-2c} / 2``, ``c`` one scalar per head, with its backward's gradient of ``c`` as ``{DC}``.
_GAUSS = (
    HEAD
    + """
class Gauss(Scheme):
    name, title, article, where, colour = "{NAME}", "a Gaussian bias", "none", "score", "#aa3377"
    settings = {{"{NAME}_width": Setting(8.0, 0.0, None, "the width w the head starts from")}}

    def init(self, cfg, rng):
        return {{"c": np.full(1, np.log(getattr(cfg, "{NAME}_width")))}}

    def bias(self, params, cfg, q, r):
        return -0.5 * r**2 * np.exp(-2.0 * params["c"])

    def bias_backward(self, dz, params, cfg, q, r):
        dc = {DC}
        return None, {{"c": dc}}
"""
)
_RIGHT_DC = '(dz * (r**2 * np.exp(-2.0 * params["c"]))[:, None, :]).sum(axis=(1, 2))[:, None]'


def gauss(name: str, dc: str = _RIGHT_DC) -> str:
    """The Gaussian bias's file with the backward ``dc``."""
    return _GAUSS.format(NAME=name, DC=dc)


#: A fixed bias with no parameters: ``{BIAS}`` of ``r``, and what it promises the engine (``{PROMISE}``).
_FIXED = (
    HEAD
    + """
class Fixed(Scheme):
    name, title, article, where, colour = "{NAME}", "a fixed bias", "none", "score", "#117733"

    def bias(self, params, cfg, q, r):
        return {BIAS}

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {{}}
{PROMISE}
"""
)


def fixed(name: str, bias: str, promise: str) -> str:
    return _FIXED.format(NAME=name, BIAS=bias, PROMISE=promise)


#: ``-sin(a) log(1 + r)``, ``a`` zero at the start: a backward of ``-log(1 + r)`` (no ``cos a``) is right only there.
_ZERO_START = (
    HEAD
    + """
class ZeroStart(Scheme):
    name, title, article, where, colour = "zero_start", "a bias from zero", "none", "score", "#332288"

    def init(self, cfg, rng):
        return {"a": np.zeros(1)}

    def bias(self, params, cfg, q, r):
        return -np.sin(params["a"]) * np.log1p(r)

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {"a": (dz * -np.log1p(r)).sum(axis=(1, 2))[:, None]}  # d/da at a = 0 only: cos(a) dropped
"""
)

#: Two widths that start equal; a backward that gives one gradient, shape ``(M, 1)``, broadcasts into ``(M, 2)``.
_TWO_WIDTHS = (
    HEAD
    + """
class TwoWidths(Scheme):
    name, title, article, where, colour = "two_widths", "two Gaussian widths", "none", "score", "#88ccee"

    def init(self, cfg, rng):
        return {"c": np.full(2, np.log(8.0))}

    def bias(self, params, cfg, q, r):
        return -0.25 * r**2 * np.exp(-2.0 * params["c"]).sum(axis=-1, keepdims=True)

    def bias_backward(self, dz, params, cfg, q, r):
        dc = (dz.sum(axis=1)[:, None, :] * 0.5 * r**2 * np.exp(-2.0 * params["c"])[..., None]).sum(axis=-1)
        return None, {"c": dc.mean(axis=-1, keepdims=True)}  # (M, 1): right where both widths are equal
"""
)

#: A learned code ``p(m) = sin(m w) u`` whose backward is right only at positions below 400.
_CODE_FAR = (
    HEAD
    + """
class WaveCode(Scheme):
    name, title, article, where, colour = "wave_code", "a learned wave", "none", "input", "#44aa99"

    def init(self, cfg, rng):
        return {"u": rng.normal(0.0, 0.1, cfg.d), "w": np.full(1, 0.01)}

    def code(self, params, cfg, positions):
        return np.sin(positions[:, None] * params["w"][..., None, :]) * params["u"][..., None, :]

    def code_backward(self, dcode, params, cfg, positions):
        pos = np.minimum(positions, 400.0)[:, None]  # wrong past 400
        s = np.sin(pos * params["w"][:, None, :])
        c = np.cos(pos * params["w"][:, None, :])
        du = (dcode * s).sum(axis=1)
        dw = (dcode * c * pos * params["u"][:, None, :]).sum(axis=(1, 2))[:, None]
        return {"u": du, "w": dw}
"""
)

WRONG = {
    "wrong_shape": (_TWO_WIDTHS, "backward against central differences", "shape"),
    "right_only_at_start": (_ZERO_START, "backward against central differences", "random parameters"),
    "gauss_from_width": (
        gauss("gauss_w", "(dz * r**2 / cfg.gauss_w_width**2).sum(axis=(1, 2))[:, None]"),
        "backward against central differences",
        "'c'",
    ),
    "mixes_the_stack": (
        gauss(
            "gauss_mix",
            'np.broadcast_to((dz * (r**2 * np.exp(-2.0 * params["c"]))[:, None, :]).sum(), (dz.shape[0], 1))',
        ),
        "a head in a stack equals the head alone",
        "mixes the heads",
    ),
    "wrong_far_from_the_window": (
        gauss(
            "gauss_far",
            '(dz * (np.minimum(r, 400.0)**2 * np.exp(-2.0 * params["c"]))[:, None, :]).sum(axis=(1, 2))[:, None]',
        ),
        "backward hooks far from the window",
        "'c'",
    ),
    "code_wrong_far": (_CODE_FAR, "backward hooks far from the window", "code_backward"),
    "far_past_false_at_600": (
        fixed("far_false", "-0.01 * np.minimum(r, 600.0)", "    def far_past(self, cfg):\n        return 400\n"),
        "promises to the engine hold far out",
        "far_past",
    ),
    "far_past_false_at_1e5": (
        fixed("far_false2", "-1e-3 * (r >= 100000)", "    def far_past(self, cfg):\n        return 0\n"),
        "promises to the engine hold far out",
        "far_past",
    ),
    "far_past_false_far_out": (
        fixed("far_false3", "-1e-3 * (r >= 2000000)", "    def far_past(self, cfg):\n        return 100000\n"),
        "promises to the engine hold far out",
        "far_past",
    ),
    "linear_slope_false_past_400": (
        fixed(
            "slope_false",
            "-0.5 * np.minimum(r, 400.0) - 0.25 * np.maximum(r - 400.0, 0.0)",
            "    def linear_slope(self, cfg):\n        return 0.5\n",
        ),
        "promises to the engine hold far out",
        "linear_slope",
    ),
    "linear_slope_nan": (
        fixed("slope_nan", "-0.5 * r", "    def linear_slope(self, cfg):\n        return float('nan')\n"),
        "promises to the engine hold far out",
        "linear_slope",
    ),
    "tail_bound_nan": (
        fixed(
            "tail_nan", "-0.5 * r", "    def tail_bound(self, params, cfg):\n        return lambda W, D: float('nan')\n"
        ),
        "promises to the engine hold far out",
        "nan",
    ),
    "tail_bound_too_small_far": (
        fixed(
            "tail_small",
            "-1.5 * np.log1p(r)",
            "    def tail_bound(self, params, cfg):\n"
            "        return lambda W, D: 0.0 if D > 400 else np.exp(W) * ((1 + D) ** -1.5 + 2 / np.sqrt(1 + D))\n",
        ),
        "promises to the engine hold far out",
        "below the bias's own tail",
    ),
    "tail_bound_nan_far": (
        fixed(
            "tail_nan_far",
            "-0.5 * r",
            "    def tail_bound(self, params, cfg):\n"
            "        return lambda W, D: float('nan') if D > 1e6 else np.exp(W - 0.5 * D) / (1 - np.exp(-0.5))\n",
        ),
        "promises to the engine hold far out",
        "nan",
    ),
    "query_free_reads_q": (
        fixed("free_reads_q", "-0.5 * r + q[..., :1]", "    bias_reads_query = False\n"),
        "hooks agree with metadata",
        "fails without a query",
    ),
    "query_free_moves_with_q": (
        fixed("free_moves", "-0.5 * r + (0.0 if q is None else q[..., :1])", "    bias_reads_query = False\n"),
        "hooks agree with metadata",
        "moves with the query",
    ),
    "bias_raises": (
        fixed("bias_raises", "np.asarray(r) + (_ for _ in ()).throw(ValueError('no bias today'))", ""),
        "hooks agree with metadata",
        "ValueError",
    ),
    "bias_exits": (
        fixed("bias_exits", "__import__('sys').exit(3)", ""),
        "hooks agree with metadata",
        "SystemExit",
    ),
}

RIGHT = {
    "gauss": gauss("gauss_ok"),
    "far_past_true": fixed(
        "far_true", "-0.01 * np.minimum(r, 400.0)", "    def far_past(self, cfg):\n        return 400\n"
    ),
    "slope_true": fixed("slope_true", "-0.5 * r", "    def linear_slope(self, cfg):\n        return 0.5\n"),
    "query_free_true": fixed("free_true", "-0.5 * np.log1p(np.maximum(r, 0.0))", "    bias_reads_query = False\n"),
    "tail_true": fixed(
        "tail_true",
        "-1.5 * np.log1p(r)",
        "    def tail_bound(self, params, cfg):\n"
        "        return lambda W, D: np.exp(W) * ((1 + D) ** -1.5 + 2 / np.sqrt(1 + D))\n",
    ),
}

#: A scheme whose parameters cannot be drawn: the head does not build.
INIT_RAISES = (
    HEAD
    + """
class NoHead(Scheme):
    name, title, article, where, colour = "no_head", "no head", "none", "score", "#999933"

    def init(self, cfg, rng):
        return {"c": np.zeros(cfg.no_such_setting)}

    def bias(self, params, cfg, q, r):
        return -0.5 * r

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {}
"""
)
