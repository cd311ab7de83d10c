"""What the command line imports when it starts: no module of scipy or mpmath (each is imported where it is used),
and of the commands only the one it runs.

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


COMMAND_PROGRAM = """
import contextlib, io, json, sys
from poskernels.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["reproduce", "-q", "--only", "thm5", "--out", sys.argv[1], "--cache", sys.argv[2]])
ours = ("poskernels.cli.", "poskernels.census", "poskernels.sweep")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(ours))))
"""


def test_a_command_imports_its_own_module_and_no_other_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", COMMAND_PROGRAM, str(tmp_path / "out"), str(tmp_path / "cache")]
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    loaded = json.loads(out.stdout)
    assert "poskernels.cli.reproduce" in loaded
    assert not [m for m in loaded if m.startswith(("poskernels.census", "poskernels.sweep"))]
    assert not {"poskernels.cli.census", "poskernels.cli.lab", "poskernels.cli.sweep"} & set(loaded)


def test_the_command_table_lists_every_command_before_any_is_imported():
    from poskernels.cli import COMMANDS
    from poskernels.cli.commands import COMMAND_MODULES

    assert list(COMMANDS) == list(COMMAND_MODULES) and len(COMMANDS) == len(COMMAND_MODULES)
    assert "check-scheme" in COMMANDS
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        assert help_text and callable(add_arguments) and callable(run), name
    assert "no-such-command" not in COMMANDS and COMMANDS.get("no-such-command") is None
