"""poskernels: every positional encoding is a kernel over offsets.

The reference implementation of "Positional Encodings: Sinusoids, Rotations, and RoPE":
the codes (:mod:`poskernels.encodings`), the context-extension maps
(:mod:`poskernels.extension`), the article's statements as code (:mod:`poskernels.theory`),
and the experiments that train single attention heads in NumPy.
"""

from .encodings import SCHEMES, apply_rope, get_scheme, omega, sinusoidal_code
from .errors import PosKernelsError
from .extension import MAPS, Extension, extend

__version__ = "0.1.0"

__all__ = [
    "MAPS",
    "SCHEMES",
    "Extension",
    "PosKernelsError",
    "__version__",
    "apply_rope",
    "extend",
    "get_scheme",
    "omega",
    "sinusoidal_code",
]
