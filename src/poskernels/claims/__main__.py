"""``python -m poskernels.claims NUMBERS.json [--json PATH|-]``: see :func:`poskernels.claims.cli.main`."""

from poskernels.claims.cli import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
