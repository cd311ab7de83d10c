"""tasks layer of poskernels."""
