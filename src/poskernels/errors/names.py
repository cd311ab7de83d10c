"""The validators of a name looked up in a registry: a name not in it is refused with the accepted names and the
closest one to a misspelling.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from typing import Any

from . import PosKernelsError
from .show import _show

__all__ = ["check_name", "did_you_mean"]


def did_you_mean(name: Any, names: Iterable[Any]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``names`` to a misspelt ``name``, else ``""``.

    Parameters
    ----------
    name : object
        The name given (not a string: no suggestion).
    names : iterable
        The accepted names.

    Returns
    -------
    str

    Examples
    --------
    >>> did_you_mean("lama3", ["llama3", "yarn"])
    " (did you mean 'llama3'?)"
    >>> did_you_mean("zzz", ["llama3", "yarn"])
    ''
    """
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, [str(n) for n in names], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_name(kind: str, name: Any, registry: Collection[str]) -> str:
    """Return ``name`` if it is a key of ``registry``, else raise listing the accepted names.

    Parameters
    ----------
    kind : str
        What a name names (``"scheme"``), for the message.
    name : object
        The name given.
    registry : collection of str
        The accepted names.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        If ``name`` is not in ``registry``.

    Examples
    --------
    >>> check_name("scheme", "rope", {"rope": 1, "alibi": 2})
    'rope'
    >>> check_name("scheme", "alibl", {"rope": 1, "alibi": 2})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: unknown scheme 'alibl' (did you mean 'alibi'?); accepted: alibi, rope
    """
    if not isinstance(name, str) or name not in registry:
        accepted = ", ".join(sorted(registry))
        raise PosKernelsError(f"unknown {kind} {_show(name)}{did_you_mean(name, registry)}; accepted: {accepted}")
    return name
