"""Experiments and lab jobs: the sweep list, one experiment and its plot, the lab menu."""
