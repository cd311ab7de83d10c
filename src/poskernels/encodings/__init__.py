"""The positional codes of the article: sinusoids, rotations, RoPE, ALiBi, T5 buckets, Shaw.

Four modules, one idea each: :mod:`~poskernels.encodings.codes` (the codes and rotations of
Definitions 2 and 4, and the conventions they share), :mod:`~poskernels.encodings.relative` (the
biases of Definition 3 that act on the score), :mod:`~poskernels.encodings.scheme` (what a scheme is:
its metadata and its hooks in a head, checked when it is defined) and :mod:`~poskernels.encodings.registry`
(the schemes themselves, :data:`SCHEMES`).  Every name is importable from here.

Every code is a kernel over offsets; :data:`SCHEMES` names them so the command line, the head, the
experiments, the page and the laboratory loop over one registry.
"""

from __future__ import annotations

from .codes import (
    DEFAULT_BASE,
    R_omega,
    apply_rope,
    clock_code,
    from_half_split,
    generator,
    omega,
    plane_angles,
    rotate,
    rotation,
    sinusoidal_code,
    to_half_split,
)
from .registry import BUILT_IN, SCHEMES, get_scheme, register_scheme, scheme_settings
from .relative import alibi_bias, alibi_slopes, shaw_clip, t5_bucket
from .scheme import Scheme, Setting, default_positions

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
