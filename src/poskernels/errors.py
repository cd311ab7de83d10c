"""The library's one error type and the small validators every module shares.

Every check quotes the offending value and says what would be accepted, so a user
reading a traceback knows what to change without opening the source.
"""

from __future__ import annotations

import difflib
import math
import numbers

__all__ = [
    "PosKernelsError",
    "check_base",
    "check_even_dimension",
    "check_kappa",
    "check_name",
    "check_positive_int",
    "check_positive_real",
    "did_you_mean",
]


class PosKernelsError(ValueError):
    """Raised for any input the library cannot accept.

    Subclasses :class:`ValueError`, so ``except ValueError`` keeps working.

    Examples
    --------
    >>> from poskernels.errors import PosKernelsError, check_even_dimension
    >>> try:
    ...     check_even_dimension(15)
    ... except PosKernelsError as err:
    ...     print(err)
    d must be a positive even integer (planes are coordinate pairs); got 15
    """


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_positive_int(name: str, value) -> int:
    """Return ``value`` as ``int`` if it is a positive integer, else raise.

    >>> check_positive_int("n", 32)
    32
    """
    if not _is_int(value) or value <= 0:
        raise PosKernelsError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def check_positive_real(name: str, value) -> float:
    """Return ``value`` as ``float`` if it is a finite positive number, else raise.

    >>> check_positive_real("s", 0.5)
    0.5
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise PosKernelsError(f"{name} must be a finite positive number; got {value!r}")
    return float(value)


def check_even_dimension(d, name: str = "d") -> int:
    """Return ``d`` if it is a positive even integer (a whole number of planes), else raise.

    >>> check_even_dimension(16)
    16
    """
    if not _is_int(d) or d <= 0 or d % 2:
        raise PosKernelsError(f"{name} must be a positive even integer (planes are coordinate pairs); got {d!r}")
    return int(d)


def check_base(b) -> float:
    """Return the frequency base ``b`` if it is a finite number above 1, else raise.

    >>> check_base(10_000)
    10000.0
    """
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not math.isfinite(b) or b <= 1:
        raise PosKernelsError(f"the base b must be a finite number > 1; got {b!r}")
    return float(b)


def check_kappa(kappa) -> float:
    """Return the extension ratio ``kappa = L'/L`` if it is a finite number >= 1, else raise.

    >>> check_kappa(4)
    4.0
    """
    if isinstance(kappa, bool) or not isinstance(kappa, numbers.Real) or not math.isfinite(kappa) or kappa < 1:
        raise PosKernelsError(f"the extension ratio kappa = L'/L must be a finite number >= 1; got {kappa!r}")
    return float(kappa)


def did_you_mean(name, names) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``names`` to a misspelt ``name``, else ``""``.

    >>> did_you_mean("lama3", ["llama3", "yarn"])
    " (did you mean 'llama3'?)"
    >>> did_you_mean("zzz", ["llama3", "yarn"])
    ''
    """
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, [str(n) for n in names], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_name(kind: str, name, registry) -> str:
    """Return ``name`` if it is a key of ``registry``, else raise listing the accepted names.

    >>> check_name("scheme", "rope", {"rope": 1, "alibi": 2})
    'rope'
    >>> check_name("scheme", "alibl", {"rope": 1, "alibi": 2})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'alibl' (did you mean 'alibi'?); accepted: alibi, rope
    """
    if not isinstance(name, str) or name not in registry:
        accepted = ", ".join(sorted(registry))
        raise PosKernelsError(f"unknown {kind} {name!r}{did_you_mean(name, registry)}; accepted: {accepted}")
    return name
