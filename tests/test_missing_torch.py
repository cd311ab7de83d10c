"""Without PyTorch, the modules that need it raise the library's error naming the extra that installs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
# torch made unimportable in a fresh interpreter (sys.modules[name] = None: `import torch` raises ImportError)
PRELUDE = "import sys; sys.modules['torch'] = None\n"


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", PRELUDE + code], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("code", "needed_by"),
    [
        ("import poskernels.torch_rope", "poskernels.torch_rope"),
        ("from poskernels.model import reference; reference.torch_params({})", "the PyTorch reference head"),
    ],
)
def test_a_missing_torch_names_the_extra(code, needed_by):
    run = _run(code)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last == (
        f"poskernels.errors.MissingDependencyError: {needed_by} needs torch, which is not installed: "
        "pip install 'poskernels[torch]'"
    ), run.stderr


def test_the_numpy_library_works_without_torch_and_the_error_is_an_import_error():
    code = (
        "import numpy as np, poskernels\n"
        "from poskernels.errors import MissingDependencyError\n"
        "print(poskernels.apply_rope(np.ones((2, 4)), [0, 1], poskernels.encodings.omega(4)).shape)\n"
        "try:\n    import poskernels.torch_rope\nexcept ImportError as e:\n"
        "    print(type(e).__name__, e.name, isinstance(e, MissingDependencyError))\n"
    )
    run = _run(code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[:2] == ["(2, 4)", "MissingDependencyError torch True"]
