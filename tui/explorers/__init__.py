"""The explorers: scaling, positions, norms, parameters, trained attention and tokens."""
