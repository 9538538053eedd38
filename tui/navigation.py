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
    "home": "tui.home.home:HomeScreen",
    "help": "tui.home.help:HelpScreen",
    "too_small": "tui.home.too_small:TooSmallScreen",
    "lessons": "tui.lessons.lessons:LessonsScreen",
    "lesson": "tui.lessons.lesson:LessonScreen",
    "flashcards": "tui.study.flashcards:FlashcardsScreen",
    "quiz": "tui.study.quiz:QuizScreen",
    "interview": "tui.interview.interview:InterviewScreen",
    "flag_note": "tui.study.flag_note:FlagNoteScreen",
    "flagged_cards": "tui.study.flagged_cards:FlaggedCardsScreen",
    "stats": "tui.study.study_stats:StudyStatsScreen",
    "study_plan": "tui.study.study_plan:StudyPlanScreen",
    "attention": "tui.attention.attention_stepper:AttentionStepperScreen",
    "explorer_menu": "tui.explorers.explorer_menu:ExplorerMenu",
    "lab_menu": "tui.experiments.lab_menu:LabMenu",
    "explorer.scaling": "tui.explorers.explorer_scaling:ScalingExplorerScreen",
    "explorer.positions": "tui.explorers.explorer_positions:PositionsExplorerScreen",
    "explorer.norms": "tui.explorers.explorer_norms:NormsExplorerScreen",
    "explorer.params": "tui.explorers.explorer_params:ParamsExplorerScreen",
    "explorer.trained": "tui.explorers.explorer_trained:TrainedAttentionScreen",
    "explorer.tokens": "tui.explorers.explorer_tokens:TokensExplorerScreen",
    "training": "tui.training.training:TrainingScreen",
    "runs": "tui.training.runs:RunsScreen",
    "compare_runs": "tui.training.compare_runs:CompareRunsScreen",
    "playground": "tui.playground.playground:PlaygroundScreen",
    "playground.step": "tui.playground.playground_step:StepScreen",
    "playground.score": "tui.playground.playground_score:ScoreScreen",
    "playground.sweep": "tui.playground.playground_sweep:SweepScreen",
    "playground.compare": "tui.playground.playground_compare:CompareScreen",
    "experiments": "tui.experiments.experiments:ExperimentsScreen",
    "experiment": "tui.experiments.experiment:ExperimentScreen",
    "katas": "tui.katas.katas:KatasScreen",
    "kata": "tui.katas.kata:KataScreen",
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
