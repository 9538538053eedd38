"""Opening the training panel on a run folder in a Pilot test."""

from __future__ import annotations

from tests.helpers import waiting
from tui import navigation


async def open_panel(pilot, run):
    """The training screen on ``run``, once its panel has read the run's state."""
    from textual.css.query import NoMatches

    navigation.open_screen(pilot.app, "training", run_dir=run)

    def ready():
        try:
            return pilot.app.screen.panel.state is not None
        except (AttributeError, NoMatches):  # not mounted yet
            return False

    await waiting.until(pilot, ready, 30, "the panel to read the run")
    return pilot.app.screen.panel
