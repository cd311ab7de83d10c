"""The positional codes of the article: sinusoids, rotations, RoPE, ALiBi, T5 buckets, Shaw.

One module per idea: :mod:`~poskernels.encodings.codes` (the codes of Definition 2 and the conventions
they share), :mod:`~poskernels.encodings.rotations` (the rotations of Definition 4 and Proposition 2, RoPE),
:mod:`~poskernels.encodings.relative` (the biases of Definition 3 that act on the score),
:mod:`~poskernels.encodings.scheme` (what a scheme is: its metadata and its hooks in a head, checked when it is
defined), the schemes themselves (:mod:`~poskernels.encodings.article_schemes`, the article's;
:mod:`~poskernels.encodings.kerple`, :mod:`~poskernels.encodings.fire` and
:mod:`~poskernels.encodings.rotary_variants`, those models ship beyond it; :mod:`~poskernels.encodings.variants`,
the scaled softmax and randomized positions of any scheme) and :mod:`~poskernels.encodings.registry`, which
lists them all in :data:`SCHEMES`.  Every name of ``__all__`` is importable from here.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the head, the
experiments, the page and the laboratory loop over one registry.
"""

from __future__ import annotations

from .codes import DEFAULT_BASE, clock_code, omega, plane_angles, sinusoidal_code
from .registry import BUILT_IN, SCHEMES, get_scheme, register_scheme, scheme_settings
from .relative import alibi_bias, alibi_slopes, shaw_clip, t5_bucket
from .rotations import R_omega, apply_rope, from_half_split, generator, rotate, rotation, to_half_split
from .scheme import Scheme, default_positions
from .setting import Setting

__all__ = [
    "BUILT_IN",
    "DEFAULT_BASE",
    "SCHEMES",
    "Scheme",
    "Setting",
    "R_omega",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "clock_code",
    "default_positions",
    "from_half_split",
    "generator",
    "get_scheme",
    "omega",
    "plane_angles",
    "register_scheme",
    "rotate",
    "rotation",
    "scheme_settings",
    "shaw_clip",
    "sinusoidal_code",
    "t5_bucket",
    "to_half_split",
]
