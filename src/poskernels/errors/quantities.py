"""The validators of the article's own quantities: a code's width ``d``, its frequency base ``b``, and an
extension's ratio ``kappa = L'/L`` (Definitions 4 and 5), with the widest code the math layer takes.
"""

from __future__ import annotations

from typing import Any

from . import PosKernelsError
from .show import _is_finite_real, _is_int, _show

__all__ = ["check_base", "check_even_dimension", "check_kappa", "MAX_D"]

#: Widest code the math layer takes: 65,536 coordinates, eight times the article's widest (8,192) and far past any
#: model's rotary width (512 at most); a census or a Chen counterexample lists one row per plane.
MAX_D = 2**16


def check_even_dimension(d: Any, name: str = "d") -> int:
    """Return ``d`` if it is a positive even integer (a whole number of planes), else raise.

    Parameters
    ----------
    d : object
        The width.
    name : str
        Its name in the message.

    Returns
    -------
    int

    Raises
    ------
    PosKernelsError
        If ``d`` is not a positive even integer at most :data:`MAX_D`.

    Examples
    --------
    >>> check_even_dimension(16)
    16
    """
    if not _is_int(d) or d <= 0 or d % 2:
        raise PosKernelsError(f"{name} must be a positive even integer (planes are coordinate pairs); got {_show(d)}")
    if d > MAX_D:
        raise PosKernelsError(
            f"{name} must be at most {MAX_D} (eight times the article's widest code; every function of it builds "
            f"arrays of d/2 planes); got {_show(d)}"
        )
    return int(d)


def check_base(b: Any) -> float:
    """Return the frequency base ``b`` if it is a finite number above 1, else raise.

    Parameters
    ----------
    b : object
        The base.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``b`` is not a finite number > 1.

    Examples
    --------
    >>> check_base(10_000)
    10000.0
    """
    if not _is_finite_real(b) or b <= 1 or float(b) <= 1:
        raise PosKernelsError(f"the base b must be a finite number > 1; got {_show(b)}")
    return float(b)


def check_kappa(kappa: Any) -> float:
    """Return the extension ratio ``kappa = L'/L`` if it is a finite number >= 1, else raise.

    Parameters
    ----------
    kappa : object
        The ratio.

    Returns
    -------
    float

    Raises
    ------
    PosKernelsError
        If ``kappa`` is not a finite number >= 1.

    Examples
    --------
    >>> check_kappa(4)
    4.0
    """
    if not _is_finite_real(kappa) or kappa < 1:
        raise PosKernelsError(f"the extension ratio kappa = L'/L must be a finite number >= 1; got {_show(kappa)}")
    return float(kappa)
