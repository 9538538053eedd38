"""The attention stepper's trained model, as a mix-in: c picks a checkpoint (the shipped MiniGPT
first, a run's checkpoint or snapshot, or a GPT-2-family folder), a typed name and layer (or layer,
head and sentence for GPT-2) say what to step through, and a worker thread loads it.

``minigpt.teaching.trained_stepper`` builds the stepper's inputs from the model's own weights; the
screen (``tui.attention.attention_stepper``) supplies ``open_input``, ``close_input``, ``message``
and ``recompute``. The Result is handled by name (``on_trained_layer_loaded``): Textual collects
``@on`` handlers only from the screen's own class body, not from a mix-in.
"""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.errors import CheckpointError
from minigpt.pretrained.gpt2 import is_pretrained_folder
from minigpt.teaching.trained_stepper import parse_layer_head_sentence, parse_name_layer
from tui.common.checkpoint_picker import CheckpointPicker, checkpoint_rows
from tui.workers import Result, background


@dataclass
class TrainedLayerLoaded(Result):
    """A trained model's numbers at a name and layer, or why not (``error``)."""
    state: object = None
    error: str = ""
    retype: bool = False  # the model loaded but the typed text did not fit it


class TrainedModelStepping:
    """The stepper's c key: step through one layer of a trained model instead of a preset."""

    model_path = None  # the checkpoint picked with c (its name and layer typed next)
    model_text = "emma 1"
    _stepped = None  # (folder, loaded checkpoint): the model last stepped, kept for the next sentence

    def action_model(self) -> None:
        """Pick a trained model (the shipped one first), then type a name and a layer."""
        self.close_input(reveal=False)

        def picked(path) -> None:
            if path is not None:
                self.model_path = path
                self.ask_model_text()

        self.app.push_screen(CheckpointPicker("Step through a trained model's attention",
                                              checkpoint_rows(pretrained=True)), picked)

    def ask_model_text(self) -> None:
        """Open the input for what to step through in the picked model (its last text kept)."""
        if is_pretrained_folder(self.model_path):
            typed = self.model_text if self.model_text[:1].isdigit() else "1 1 The cat sat on the mat"
            self.open_input("model", "layer head sentence (up to 8 tokens), e.g. 5 1 The cat sat", typed,
                            "layer, head (from 1) and your sentence")
        else:
            self.open_input("model", "a name (up to 7 letters) and a layer, e.g. emma 1", self.model_text)

    def submit_model_text(self, text: str) -> None:
        """Load the layer the typed text names; a ValueError leaves the input open."""
        head = None
        if is_pretrained_folder(self.model_path):
            name, layer, head = parse_layer_head_sentence(text)
        else:
            name, layer = parse_name_layer(text)
        self.model_text = text
        self.close_input(reveal=False)
        self.message(f"loading layer {layer} of {self.model_path} …")
        self.load_model(self.model_path, name, layer, head)

    @background(thread=True, exclusive=True, group="model")
    def load_model(self, path, name: str, layer: int, head: int | None = None) -> TrainedLayerLoaded:
        from minigpt.teaching.trained_stepper import load_steppable, trained_state

        try:
            if self._stepped is None or self._stepped[0] != path:  # GPT-2 takes seconds to load: once
                self._stepped = (path, load_steppable(path))
            return TrainedLayerLoaded(trained_state(self._stepped[1], name, layer - 1, None if head is None else head - 1))
        except CheckpointError as e:  # a damaged folder, a model it cannot show
            return TrainedLayerLoaded(error=str(e))
        except ValueError as e:  # a name or sentence it cannot read, a layer it lacks: typed again
            return TrainedLayerLoaded(error=str(e), retype=True)

    def on_trained_layer_loaded(self, loaded: TrainedLayerLoaded) -> None:
        if loaded.error:
            if loaded.retype:  # the typed text comes back to be fixed, not typed again whole
                self.ask_model_text()
            self.message(loaded.error, True)
            return
        self.state = state = loaded.state
        self.stage_index = min(self.stage_index, len(self.stages) - 1)
        self.head = 0
        bias = " (X's last column of 1s carries the biases; b_O is left out)" if state.dim_labels[-1] == "1" else ""
        self.message(f"{state.name}: that model's own numbers{bias} · [ ] presets")
        self.recompute()
