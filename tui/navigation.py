"""The one table of screens: every screen is opened by name from here, never by another screen.

Screens do not import each other (an import-linter contract checks it); they call
``open_screen(self.app, "runs")``. The table names each screen's module and class as text and
imports it when first opened, so the home screen's first frame does not pay for torch or for
screens the learner never visits.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

SCREENS: dict[str, str] = {
    "home": "tui.screens.home:HomeScreen",
    "help": "tui.screens.help:HelpScreen",
    "too_small": "tui.screens.too_small:TooSmallScreen",
    "lessons": "tui.screens.lessons:LessonsScreen",
    "lesson": "tui.screens.lesson:LessonScreen",
    "flashcards": "tui.screens.flashcards:FlashcardsScreen",
    "quiz": "tui.screens.quiz:QuizScreen",
    "interview": "tui.screens.interview:InterviewScreen",
    "flag_note": "tui.screens.flag_note:FlagNoteScreen",
    "flagged_cards": "tui.screens.flagged_cards:FlaggedCardsScreen",
    "stats": "tui.screens.study_stats:StudyStatsScreen",
    "study_plan": "tui.screens.study_plan:StudyPlanScreen",
    "attention": "tui.screens.attention_stepper:AttentionStepperScreen",
    "explorer_menu": "tui.screens.explorer_menu:ExplorerMenu",
    "lab_menu": "tui.screens.lab_menu:LabMenu",
    "explorer.scaling": "tui.screens.explorer_scaling:ScalingExplorerScreen",
    "explorer.positions": "tui.screens.explorer_positions:PositionsExplorerScreen",
    "explorer.norms": "tui.screens.explorer_norms:NormsExplorerScreen",
    "explorer.params": "tui.screens.explorer_params:ParamsExplorerScreen",
    "explorer.trained": "tui.screens.explorer_trained:TrainedAttentionScreen",
    "explorer.tokens": "tui.screens.explorer_tokens:TokensExplorerScreen",
    "training": "tui.screens.training:TrainingScreen",
    "runs": "tui.screens.runs:RunsScreen",
    "compare_runs": "tui.screens.compare_runs:CompareRunsScreen",
    "playground": "tui.screens.playground:PlaygroundScreen",
    "playground.step": "tui.screens.playground_step:StepScreen",
    "playground.score": "tui.screens.playground_score:ScoreScreen",
    "playground.sweep": "tui.screens.playground_sweep:SweepScreen",
    "playground.compare": "tui.screens.playground_compare:CompareScreen",
    "experiments": "tui.screens.experiments:ExperimentsScreen",
    "experiment": "tui.screens.experiment:ExperimentScreen",
    "katas": "tui.screens.katas:KatasScreen",
    "kata": "tui.screens.kata:KataScreen",
}


def screen_class(name: str) -> type:
    """The screen class registered as ``name`` (imported on first use)."""
    try:
        module, _, cls = SCREENS[name].partition(":")
    except KeyError:
        raise KeyError(f"no screen called {name!r}") from None
    return getattr(import_module(module), cls)


def is_screen(screen: object, name: str) -> bool:
    """Whether ``screen`` is the screen registered as ``name``, without importing its module."""
    module, _, cls = SCREENS[name].partition(":")
    return type(screen).__module__ == module and type(screen).__name__ == cls


def open_screen(app, name: str, /, *args, callback=None, **kwargs):
    """Build the named screen with these arguments and push it; returns the screen.
    ``callback`` receives what a modal screen dismisses with."""
    screen = screen_class(name)(*args, **kwargs)
    app.push_screen(screen, callback)
    return screen


@dataclass(frozen=True)
class Explorer:
    id: str
    key: str
    title: str
    description: str

    @property
    def screen(self) -> str:
        return f"explorer.{self.id}"


EXPLORERS = [
    Explorer("scaling", "1", "Why √d_k", "std of q·k, largest weight, entropy, ±÷√d_k; ctrl+l: a model's own q·k"),
    Explorer("positions", "2", "Positional encoding", "sinusoidal table, RoPE identity; ctrl+l: a trained model's wpe"),
    Explorer("norms", "3", "LayerNorm step by step", "a vector through LayerNorm, BatchNorm, RMSNorm; ctrl+l: a model's γ"),
    Explorer("params", "4", "Parameter counter", "per-component count vs 12·L·d²; ctrl+l: a trained model's shape"),
    Explorer("trained", "5", "Trained-model attention", "every layer × head of a checkpoint on your name"),
    Explorer("tokens", "6", "Tokens (BPE)", "text as BPE tokens at several sizes; ctrl+l: a model's characters"),
]


def open_explorer(app, explorer_id: str, /, **options) -> None:
    """Open an explorer; ``options`` go to its screen (a lesson's ``explorer_options``)."""
    if any(e.id == explorer_id for e in EXPLORERS):
        open_screen(app, f"explorer.{explorer_id}", **options)
    else:
        app.notify(f"No explorer called {explorer_id!r}", severity="error")
