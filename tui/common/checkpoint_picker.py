"""Pick a model to look inside: the shipped MiniGPT first (the default), then each run's kept
checkpoint with its step-scrubber snapshots below it. A modal list; it dismisses with the chosen
checkpoint folder, or None on escape.

``LoadsCheckpoint`` is the one loading path of the screens that show a trained model (the
parameter counter and the positions, norms, tokens and scaling explorers): ctrl+l opens the
picker, the chosen folder becomes the screen's view in a worker thread (``model_view``, the
library's maths), and the view or the one-line reason it was refused comes back to the screen
(a ``LoadsCheckpoint.Viewed`` Message)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from minigpt.errors import CheckpointError
from minigpt.text import markup_escape
from tui.workers import Result, background


def checkpoint_rows(kinds: tuple[str, ...] = ("gpt",), pretrained: bool = False) -> list[tuple[str, Path]]:
    """(label, folder) for every checkpoint of these kinds: the shipped ones, then each run's kept
    checkpoint (a live run's best so far) followed by its snapshots, earliest first; with
    ``pretrained``, the GPT-2 folders ``minigpt hf fetch`` keeps."""
    from minigpt.playground.checkpoint_choices import find_checkpoints
    from minigpt.runs.snapshots import run_of_checkpoint, snapshot_path, snapshot_steps

    rows = []
    for choice in find_checkpoints(live=True, pretrained=pretrained):
        if choice.kind not in kinds:
            continue
        rows.append((markup_escape(choice.label), choice.path))
        run = run_of_checkpoint(choice.path) if choice.source == "run" else None
        for step in snapshot_steps(run[0]) if run else []:
            rows.append((f"   └ snapshot at step {step:,}", snapshot_path(run[0], step)))
    return rows


def pretrained_threads(path):
    """Around a GPT-2 folder's measurements: torch on the cores no other process is using (on a
    busy machine a second thread made the norms explorer's view five times slower); a no-op for
    the tutor's own small models."""
    import contextlib

    from minigpt.pretrained.gpt2 import is_pretrained_folder
    from minigpt.training.cpu_policy import idle_core_threads

    return idle_core_threads() if is_pretrained_folder(path) else contextlib.nullcontext()


class CheckpointPicker(ModalScreen[Path | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=True, id="checkpoint_picker.cancel")]

    def __init__(self, title: str, rows: list[tuple[str, Path]] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.rows = checkpoint_rows() if rows is None else rows

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static(f"[b]{markup_escape(self.title_text)}[/b]  enter picks, escape cancels", id="picker-title")
            if self.rows:
                yield OptionList(*(Option(label, id=str(i)) for i, (label, _) in enumerate(self.rows)),
                                 id="picker-list")
            else:
                yield Static("No MiniGPT checkpoint: the shipped default is missing and no run has one yet.",
                             id="picker-empty")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.rows[int(event.option.id)][1])

    def action_cancel(self) -> None:
        self.dismiss(None)


class LoadsCheckpoint:
    """A screen mix-in: ctrl+l picks a checkpoint and shows what the library makes of it.

    A screen names ``view_of`` (the library's maths: a loaded MiniGPT checkpoint → the screen's
    view; or it overrides ``model_view(path)``), ``lists_pretrained`` (GPT-2 folders too), ``refusal_at`` (the Static that shows a refusal's
    one line) and ``show_model(path, view)``; ``picker_title`` heads the list."""

    MODEL_BINDING = Binding("ctrl+l", "model", "Model", show=True, id="explorer.model")  # (letters type into the fields)
    picker_title = "Look inside a trained model"
    lists_pretrained = False  # True: the GPT-2 folders hf fetch keeps are listed too
    view_of = None  # staticmethod(minigpt.teaching.model_views.position_view) and the like
    refusal_at = ""  # "#pe-error"

    def model_view(self, path):
        """Called in a worker thread: CheckpointError for a model the screen cannot show."""
        from minigpt.teaching.model_views import load_explorable

        return self.view_of(load_explorable(path))

    def refuse_model(self, reason: str) -> None:
        self.query_one(self.refusal_at, Static).update(f"✗ {markup_escape(reason)}")

    def action_model(self) -> None:
        def picked(path) -> None:
            if path is not None:
                self.notify(f"Loading {markup_escape(path.name)}…", timeout=3)  # a second or more
                self.load_model(path)

        rows = checkpoint_rows(pretrained=self.lists_pretrained)
        self.app.push_screen(CheckpointPicker(self.picker_title, rows), picked)

    @dataclass
    class Viewed(Result):
        """The chosen folder as the screen's view, or the one line saying why not (``refusal``)."""
        path: Path
        view: object = None
        refusal: str = ""

    @background(thread=True, exclusive=True, group="model")
    def load_model(self, path) -> Viewed:
        try:
            with pretrained_threads(path):
                return self.Viewed(path, self.model_view(path))
        except CheckpointError as e:  # a damaged folder, another kind of model, a tensor it lacks
            return self.Viewed(path, refusal=str(e).splitlines()[0] if str(e) else "unreadable")

    # A mix-in is not a Textual class, so @on cannot register here: the handler goes by its name.
    def on_loads_checkpoint_viewed(self, message: Viewed) -> None:
        if message.refusal:
            self.refuse_model(message.refusal)
        else:
            self.show_model(message.path, message.view)
