"""What several test modules share (a test module never imports another): waiting on conditions,
run folders written by hand, the walk through every screen, the fake trainer, float tolerances."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository (tests/helpers/ is two levels down)
