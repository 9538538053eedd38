"""The playground: sampling, next-character steps, scoring a text, sweeps and comparisons."""
