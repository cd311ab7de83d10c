"""The public API of the math layer is annotated: every parameter and the return of every public function.

Public: listed in its module's ``__all__`` and defined there.  The codes, the maps and the article's statements take
``numpy.typing.ArrayLike`` for their arrays; ``make lint`` runs mypy over these modules (``[tool.mypy]`` in
pyproject.toml).  The functions not annotated yet are listed here by name, so the list can only shrink: a new
public function without annotations fails this test.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import poskernels

#: The math layer and the ground it stands on: what a user calls with their own arrays.
PUBLIC = ("poskernels.encodings", "poskernels.extension", "poskernels.theory", "poskernels.torch_rope",
          "poskernels.errors", "poskernels.seeds")  # fmt: skip

#: Not annotated yet: shrink this list, never grow it.
NOT_YET: dict[str, set[str]] = {}


def _public_functions():
    names = [m.name for m in pkgutil.walk_packages(poskernels.__path__, "poskernels.")] + list(PUBLIC)
    for name in sorted(set(names)):
        if not any(name == p or name.startswith(p + ".") for p in PUBLIC):
            continue
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                yield module.__name__, attr, obj


def _annotated(fn) -> bool:
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    return sig.return_annotation is not inspect.Signature.empty and all(
        p.annotation is not inspect.Parameter.empty for p in params
    )


def test_the_public_math_api_is_annotated():
    missing = {f"{m}.{n}" for m, n, fn in _public_functions() if not _annotated(fn)}
    allowed = {f"{m}.{n}" for m, names in NOT_YET.items() for n in names}
    assert missing <= allowed, f"public functions without annotations: {sorted(missing - allowed)}"
    functions = list(_public_functions())
    assert len(functions) >= 100  # the count this measures (about 120 public functions)
    share = 1 - len(missing) / len(functions)
    assert share >= 0.95, share


def test_arrays_are_taken_as_array_like():
    from poskernels.encodings import codes, rotations
    from poskernels.theory import kernel

    for fn, name in ((kernel.kappa_d, "delta"), (codes.sinusoidal_code, "m"), (rotations.apply_rope, "positions")):
        assert inspect.signature(fn).parameters[name].annotation == "ArrayLike", (fn.__name__, name)
