"""The gate a user's scheme file passes, under hostile files: every wrong scheme fails with a line naming what is
wrong (gradients at random parameters and far from the window, a stack against each head alone, every promise to
the engine far out), a file that exits at import is a file that failed to load, and nothing Python raises gets out
as a traceback."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from hostile_schemes import INIT_RAISES, RIGHT, WRONG, fixed, gauss
from poskernels.cli import main
from poskernels.encodings import SCHEMES
from poskernels.errors import PosKernelsError
from poskernels.model.scheme_check import check_scheme, checked_scheme_file
from poskernels.model.scheme_file import load_scheme_file


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_a_wrong_scheme_fails_the_check_that_names_it(kind, clean_registry, tmp_path):
    source, check, words = WRONG[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(source)
    (name,) = load_scheme_file(path)
    checks = {c.name: c for c in check_scheme(name)}
    assert checks[check].ok is False, [c.line() for c in checks.values()]
    assert words.lower() in checks[check].detail.lower(), checks[check].line()


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_check_scheme_and_the_tournament_refuse_a_wrong_file_in_one_line_exit_2(kind, clean_registry, tmp_path,
                                                                                capsys):  # fmt: skip
    source, check, _ = WRONG[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(source)
    cache = tmp_path / "cache"
    for argv in (["check-scheme", str(path)], ["tournament", "--scheme-file", str(path), "--cache", str(cache)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "internal error" not in err, err
        assert f"scheme file {path}" in err and " fails: " in err, err  # the first check that fails, named
    assert not (cache / "heads").exists()


@pytest.mark.parametrize("kind", sorted(RIGHT))
def test_an_unusual_but_right_scheme_passes_every_check(kind, clean_registry, tmp_path):
    path = tmp_path / f"{kind}.py"
    path.write_text(RIGHT[kind])
    (name,) = load_scheme_file(path)
    checks = check_scheme(name)
    assert all(c.ok is not False for c in checks), [c.line() for c in checks]
    assert checked_scheme_file(path) == [name]


def test_the_central_difference_line_names_the_schemes_own_parameter(clean_registry, tmp_path):
    path = tmp_path / "g.py"
    path.write_text(gauss("gauss_named"))
    load_scheme_file(path)
    line = {c.name: c for c in check_scheme("gauss_named")}["backward against central differences"]
    assert line.ok and "the scheme's own parameters" in line.detail and "'c'" in line.detail, line.detail


EXITS = {
    "exit0": "import sys\nsys.exit(0)\n",
    "exit_text": "import sys\nsys.exit('done here')\n",
    "raise_system_exit": "raise SystemExit\n",
    "exit_in_class_body": "from poskernels.encodings import Scheme\nclass X(Scheme):\n    __import__('sys').exit(0)\n",
}


@pytest.mark.parametrize("kind", sorted(EXITS))
def test_a_file_that_exits_at_import_failed_to_load(kind, clean_registry, tmp_path, capsys):
    path = tmp_path / f"{kind}.py"
    path.write_text(EXITS[kind])
    before = dict(SCHEMES)
    with pytest.raises(PosKernelsError, match="failed to load"):
        load_scheme_file(path)
    assert SCHEMES == before
    grid = tmp_path / "grid.toml"
    grid.write_text(f'[sweep]\nscheme_file = "{path}"\n[fixed]\nsteps = 5\n')
    for argv in (["check-scheme", str(path)], ["tournament", "--scheme-file", str(path), "--cache", str(tmp_path)],
                 ["sweep", str(grid), "--store", str(tmp_path / "s.sqlite")]):  # fmt: skip
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "failed to load" in err and "sys.exit" in err and str(path) in err, err


@pytest.mark.parametrize("given", [None, 3, 3.5, b"my_pe.py", ["my_pe.py"], "", object()])
def test_load_scheme_file_of_something_not_a_path_is_the_librarys_error(given):
    with pytest.raises(PosKernelsError, match="a path"):
        load_scheme_file(given)


@pytest.mark.parametrize("seed", [-1, True, 1.5, "0", None, 2**64])
def test_check_scheme_of_a_bad_seed_is_the_librarys_error(seed):
    with pytest.raises(PosKernelsError, match="seed"):
        check_scheme("alibi", seed=seed)


@pytest.mark.parametrize("scheme", [3, None, b"alibi", int, ["alibi"]])
def test_check_scheme_of_something_not_a_scheme_is_the_librarys_error(scheme):
    with pytest.raises(PosKernelsError):
        check_scheme(scheme)


@pytest.mark.parametrize("setting", ["lr", "seed", "rope_theta", "steps", "batch", "tau", "d", "test_lengths", "eps"])
def test_a_setting_named_like_a_field_of_the_head_or_trainer_is_refused(setting, clean_registry, tmp_path):
    path = tmp_path / "shadow.py"
    path.write_text(
        gauss("shadow").replace('"shadow_width"', f'"{setting}"').replace('"shadow_width")', f'"{setting}")')
    )
    with pytest.raises(PosKernelsError, match=f"setting '{setting}' is named like a field"):
        load_scheme_file(path)
    assert "shadow" not in SCHEMES


def test_every_field_of_the_head_trainer_and_sweep_is_reserved():
    from dataclasses import fields

    from poskernels.model.config import HeadConfig, TrainConfig
    from poskernels.model.scheme_file import RESERVED
    from poskernels.sweep.settings import SETTINGS

    owned = {k for k, s in SETTINGS.items() if s.part != "scheme"}
    assert owned | {f.name for f in fields(HeadConfig)} | {f.name for f in fields(TrainConfig)} <= RESERVED


def test_a_half_installed_torch_skips_the_autograd_check_saying_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))  # imports, but has nothing in it
    torch_check = check_scheme("alibi")[-1]
    assert torch_check.name == "PyTorch autograd" and torch_check.ok is None, torch_check.line()
    assert "does not run" in torch_check.detail and "reinstall" in torch_check.detail


BOOM = fixed("boom", "-0.5 * r if np.size(r) != 32 else (_ for _ in ()).throw(RuntimeError('boom at 32'))", "")
EXIT_AT_32 = fixed("exit32", "-0.5 * r if np.size(r) != 32 else __import__('sys').exit(4)", "")


@pytest.mark.parametrize(
    ("source", "name", "raised"), [(BOOM, "boom", "RuntimeError"), (EXIT_AT_32, "exit32", "SystemExit")]
)
def test_a_bias_that_raises_in_training_is_the_librarys_error_naming_scheme_and_file(source, name, raised,
                                                                                      clean_registry, tmp_path,
                                                                                      capsys):  # fmt: skip
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    argv = ["tournament", "--scheme-file", str(path), "--seeds", "1", "--lengths", "32", "--cache", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"scheme {name!r} (scheme file {path}" in err and raised in err, err
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.point import point_key, run_job

    grid = tmp_path / "grid.toml"
    grid.write_text(f'[sweep]\nscheme_file = "{path}"\n[fixed]\nsteps = 2\nbatch = 2\ntest_lengths = [8]\n'
                    f'test_size = 4\n[grid]\nscheme = ["{name}"]\n')  # fmt: skip
    g = parse_grid(grid.read_text(), str(grid))
    with pytest.raises(PosKernelsError, match=f"scheme {name!r} \\(scheme file {path}"):
        run_job({"points": [[point_key(p), p] for p in g.points], "cache_dir": None, "scheme_files": g.scheme_files})


def test_a_sweep_runs_the_same_gate(clean_registry, tmp_path):
    from poskernels.sweep.grid import parse_grid

    source, check, _ = WRONG["mixes_the_stack"]
    path = tmp_path / "mix.py"
    path.write_text(source)
    grid = f'[sweep]\nscheme_file = "{path}"\n[grid]\nscheme = ["gauss_mix"]\n'
    with pytest.raises(PosKernelsError, match="class Gauss: .* fails: "):
        parse_grid(grid, str(tmp_path / "grid.toml"))


def test_the_tournament_checks_its_json_against_its_scheme_files_before_training(clean_registry, tmp_path, capsys):
    path = tmp_path / "g.py"
    path.write_text(gauss("gauss_json"))
    cache = tmp_path / "cache"
    for out in (str(path), str(tmp_path / "missing" / "t.json"), str(tmp_path)):
        argv = ["tournament", "--scheme-file", str(path), "--seeds", "1", "--cache", str(cache), "--json", out]
        assert main(argv) == 2
        assert "--json" in capsys.readouterr().err
        assert not (cache / "heads").exists()
    assert path.read_text() == gauss("gauss_json")


def test_the_gate_is_cheap_to_pass_twice_and_sees_an_edit(clean_registry, tmp_path):
    path = tmp_path / "g.py"
    path.write_text(gauss("gauss_twice"))
    assert checked_scheme_file(path) == ["gauss_twice"] == checked_scheme_file(path)
    path.write_text(WRONG["mixes_the_stack"][0].replace("gauss_mix", "gauss_twice"))  # the same name, now wrong
    with pytest.raises(PosKernelsError, match="class Gauss: .* fails: "):
        checked_scheme_file(path)


def test_random_parameters_move_every_parameter():
    from poskernels.model.config import HeadConfig
    from poskernels.model.scheme_far import random_params

    cfg = HeadConfig(scheme="fire")
    a, b = (random_params(cfg, np.random.default_rng(s)) for s in (0, 1))
    assert all(np.all(a[k] != b[k]) for k in a)


def test_a_scheme_whose_head_cannot_be_built_is_bad_input_not_an_internal_error(clean_registry, tmp_path, capsys):
    path = tmp_path / "no_head.py"
    path.write_text(INIT_RAISES)
    assert main(["check-scheme", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a head of the scheme builds fails: raised AttributeError" in err and "no_such_setting" in err, err
