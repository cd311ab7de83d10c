"""Count the library's input checks (``errors.check_*``) while some code runs: which check, of what, from where.

Every ``check_*`` function of :mod:`poskernels.errors` is wrapped, in ``errors`` itself and in every loaded
``poskernels`` module that imported it by name, for the length of a ``with counting() as calls:`` block; each call
appends one :class:`Call`.  An argument is identified by the check, the name the check gives it (``"the training
length L"``; ``check_base``'s ``"b"``) and its value (an array by shape, dtype and bytes), so the same length
checked by two theory functions in one census counts twice; each call also records its entry into the math layer
(the public function a caller above it called), so a repeat can be told within one function's calls.
``tests/test_check_count.py`` holds one census to one check of each argument per theory function;
``benchmarks/check_count.py`` prints the counts.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np

from poskernels import errors

#: The checks counted: every public ``check_*`` function of :mod:`poskernels.errors`.
CHECKS = {name: fn for name, fn in vars(errors).items() if name.startswith("check_") and inspect.isfunction(fn)}


#: The math layer: a call into it from outside is one entry (``theory.context.critical_dimension``).
MATH = ("poskernels.theory", "poskernels.encodings", "poskernels.extension")


@dataclass(frozen=True)
class Call:
    """One check: its name, the argument's label, a key of its value, the function that called it, and the entry:
    the outermost math-layer function on the stack (the public function a caller above the math layer called), or
    the caller itself when no math function is on the stack."""

    check: str
    label: str
    value: object
    caller: str
    entry: str


def _value_key(value) -> object:
    """A hashable key of a checked value: an array by shape, dtype and a digest of its bytes; anything else by repr."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return ("array", value.shape, str(value.dtype), hashlib.sha1(data.tobytes()).hexdigest())
    if isinstance(value, (list, tuple)):
        numbers = value and all(isinstance(v, (int, float)) for v in value)
        return _value_key(np.asarray(value)) if numbers else repr(value)
    return repr(value)


def _label_and_value(name: str, fn, args, kwargs) -> tuple[str, object]:
    """The argument a check is about: its label (its first argument when that is a name) and its value."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    params = list(bound.arguments)
    if params[0] in ("name", "what", "kind"):  # check_length("the training length L", L), check_budget(what, ...)
        return str(bound.arguments[params[0]]), _value_key(bound.arguments[params[1]])
    if name == "check_even_dimension":  # check_even_dimension(d, name="d")
        return str(bound.arguments["name"]), _value_key(bound.arguments["d"])
    return params[0], _value_key(bound.arguments[params[0]])  # check_base(b), check_kappa(kappa)


def _wrap(name: str, fn, calls: list[Call]):
    @functools.wraps(fn)
    def counted(*args, **kwargs):
        frame = sys._getframe(1)
        module = frame.f_globals.get("__name__", "?")
        if module == errors.__name__:  # a check built on another (check_length on check_int) is one check
            return fn(*args, **kwargs)
        caller = entry = f"{module}.{frame.f_code.co_qualname}"
        f = frame
        while f is not None:
            m = f.f_globals.get("__name__", "")
            if m.startswith(MATH):
                entry = f"{m}.{f.f_code.co_qualname}"
            f = f.f_back
        label, value = _label_and_value(name, fn, args, kwargs)
        calls.append(Call(name, label, value, caller, entry))
        return fn(*args, **kwargs)

    return counted


@contextlib.contextmanager
def counting():
    """Within the block, every ``check_*`` call of the library is recorded in the list it yields."""
    calls: list[Call] = []
    wrappers = {fn: _wrap(name, fn, calls) for name, fn in CHECKS.items()}
    patched = []
    for modname, module in list(sys.modules.items()):
        if modname != "poskernels" and not modname.startswith("poskernels."):
            continue
        for attr, value in list(vars(module).items()):
            if inspect.isfunction(value) and value in wrappers:
                patched.append((module, attr, value))
                setattr(module, attr, wrappers[value])
    try:
        yield calls
    finally:
        for module, attr, value in patched:
            setattr(module, attr, value)


def by_check(calls: list[Call]) -> Counter:
    """How many times each check ran."""
    return Counter(c.check for c in calls)


def repeated(calls: list[Call], per_entry: bool = False) -> dict[tuple, list[str]]:
    """Each argument checked more than once, ``(check, label, value)`` (with ``per_entry``, ``(entry, check,
    label, value)``: checked twice by calls of one public function), with the callers that checked it."""
    seen: dict[tuple, list[str]] = {}
    for c in calls:
        key = (c.check, c.label, c.value)
        seen.setdefault((c.entry, *key) if per_entry else key, []).append(c.caller)
    return {k: v for k, v in seen.items() if len(v) > 1}
