"""theory layer of poskernels."""
