"""What the command line imports when it starts: no module of scipy or mpmath (each is imported where it is used).

Importing ``scipy.special`` costs about 0.15 s, ``scipy.linalg`` 0.1 s and ``mpmath`` 20 ms, at the start of every
command; a warm ``poskernels reproduce`` reads their results from the cache (issue 31: warm reproduce <= 1 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

PROGRAM = """
import json, sys
import poskernels.cli, poskernels.page, poskernels.lab.payload, poskernels.lab.figures
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("scipy", "mpmath"))))
"""


def test_the_command_line_starts_without_scipy_or_mpmath():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True, env=env)
    assert json.loads(out.stdout) == []
