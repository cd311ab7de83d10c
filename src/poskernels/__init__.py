"""poskernels: every positional encoding is a kernel over offsets.

The reference implementation of "Positional Encodings: Sinusoids, Rotations, and RoPE":
the codes (:mod:`poskernels.encodings`), the context-extension maps
(:mod:`poskernels.extension`), the article's statements as code (:mod:`poskernels.theory`),
and the experiments that train single attention heads in NumPy.  A positional scheme of your own is a
:class:`Scheme` subclass; :func:`register_scheme` adds it (``docs/guide/your_own_scheme.md``).
"""

from .encodings import SCHEMES, Scheme, Setting, apply_rope, get_scheme, omega, register_scheme, sinusoidal_code
from .errors import PosKernelsError
from .extension import MAPS, Extension, extend

__version__ = "0.1.0"

__all__ = [
    "MAPS",
    "SCHEMES",
    "Extension",
    "PosKernelsError",
    "Scheme",
    "Setting",
    "__version__",
    "apply_rope",
    "extend",
    "get_scheme",
    "omega",
    "register_scheme",
    "sinusoidal_code",
]
