"""``python -m poskernels.census.hf_families``: see :func:`poskernels.census.hf_families.main`."""

from poskernels.census.hf_families import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
