"""``python -m poskernels.hf_families``: see :func:`poskernels.hf_families.main`."""

from poskernels.hf_families import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
