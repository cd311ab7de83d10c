"""experiments layer of poskernels."""
