"""Trained-model attention: pick a checkpoint, type a name, see every layer × head as a small
heatmap; enter focuses one head as a labelled matrix. The course's exercise 1, live.

A GPT-2 folder (``minigpt hf fetch``'s) reads the learner's own sentence as BPE pieces, and
every head's previous-token and induction scores (lesson 215's, on repeated random tokens) are
measured when it loads.

A run's checkpoint is followed while the run trains; ``[`` and ``]`` move to its snapshots (the
step scrubber, ``minigpt.runs.snapshots``), and the training panel opens this view at the step it
shows and gets the step back when the view closes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Select, Static

from minigpt.playground.checkpoint_choices import find_checkpoints
from minigpt.pretrained.gpt2 import PretrainedCheckpoint
from minigpt.runs.snapshots import run_of_checkpoint, scrub_target, snapshot_path, snapshot_steps
from minigpt.teaching.explorers import SHOWN_SENTENCE_TOKENS, name_ids, sentence_ids
from minigpt.teaching.stepper import Panel
from minigpt.text import markup_escape, printable
from tui.common.checkpoint_picker import pretrained_threads
from tui.common.header import TutorHeader
from tui.common.matrix_view import MatrixView
from tui.explorers.attention_grid import AttentionGrid
from tui.workers import Result, background


def available_checkpoints() -> list[tuple[str, Path]]:
    """GPT checkpoints (the shipped ones, the GPT-2 folders hf fetch keeps, then finished runs):
    only they have attention."""
    return [(markup_escape(c.label), c.path) for c in find_checkpoints(live=True, pretrained=True) if c.kind == "gpt"]


SENTENCE = "The cat sat on the mat. The cat sat"  # a pretrained model's first sentence: a repeat in it


FOLLOW_S = 2.0  # how often a live run's checkpoint is looked at


def folder_stamp(path: Path) -> tuple | None:
    """What changes when a checkpoint folder is saved again (it is replaced by a rename)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns)


class TrainedAttentionScreen(Screen):
    # The grid has the focus on arrival, so the arrows pick a head at once; n and m reach the fields.
    BINDINGS = [Binding("escape", "back", "Back", show=True, id="explorer_trained.back"),
                Binding("n", "edit_name", "Name", show=True, id="explorer_trained.edit_name"),
                Binding("m", "choose_model", "Model", show=True, id="explorer_trained.choose_model"),
                Binding("f6", "focus_grid", "Grid", show=False, id="explorer_trained.focus_grid"),
                Binding("g", "glyphs", "Glyph ramp on/off", show=False, id="explorer_trained.glyphs"),  # as in the stepper: room for [ ]
                Binding("[", "scrub(-1)", "Step", show=True, key_display="[ ]", id="explorer_trained.earlier"),
                Binding("]", "scrub(1)", "Later", show=False, id="explorer_trained.later")]

    def __init__(self, checkpoints: list[tuple[str, Path]] | None = None, name: str = "emma",
                 run_dir: Path | None = None, step: int | None = None, model: str | None = None) -> None:
        """``run_dir`` (with a snapshot ``step``, or None for its kept checkpoint) opens that
        run's heads instead of the first checkpoint listed (the shipped default); ``model`` opens
        the shipped checkpoint of that folder name (a lesson's: "induction")."""
        super().__init__()
        self.checkpoints = available_checkpoints() if checkpoints is None else checkpoints
        if model is not None:  # that shipped model first, so it is the one shown
            self.checkpoints = sorted(self.checkpoints, key=lambda c: c[1].name != model)
        if run_dir is not None:
            path = Path(run_dir) / "checkpoint"
            if all(p != path for _, p in self.checkpoints):  # not listed yet (e.g. no val loss): add it
                self.checkpoints = [*self.checkpoints, (markup_escape(f"this run: {Path(run_dir).name}"), path)]
            self.checkpoints = sorted(self.checkpoints, key=lambda c: c[1] != path)  # it comes first
        self.initial_name = name
        self.initial_step = self.scrub_step = step  # a snapshot's step, None: the chosen checkpoint
        self.checkpoint = None
        self.base_path: Path | None = None  # the checkpoint chosen in the list (a run's: its kept one)
        self.wanted: Path | None = None  # the folder being loaded (the latest asked for wins)
        self.reloads = 0  # checkpoints loaded (a live run's are reloaded as it saves)
        self.labels: list[str] = []
        self.maps = None
        self.scores = None  # a pretrained model's HeadScores (previous-token, induction)

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with VerticalScroll(classes="explorer-body"):
            # Compact one-line controls: the long checkpoint labels are cut, not wrapped, and the
            # grid gets the rows.
            with Horizontal(id="tr-controls"):
                yield Label("model", classes="tr-label")
                yield Select([(label, str(p)) for label, p in self.checkpoints], id="tr-ckpt",
                             allow_blank=not self.checkpoints, compact=True,
                             prompt="no checkpoint yet: train one in the Training area")
                yield Label("name", classes="tr-label", id="tr-name-label")
                yield Input(self.initial_name, id="tr-name", compact=True)
            yield Static(id="tr-status", classes="explorer-muted")
            yield Static(id="tr-scores", classes="explorer-muted")
            yield AttentionGrid(id="tr-grid")
            yield MatrixView(id="tr-focus", show_cursor=True, auto_fit=True)
        yield Footer()

    def on_mount(self) -> None:
        self._stamp = None  # the loaded checkpoint folder's stamp: a new one means a newer model
        self.set_interval(FOLLOW_S, self._follow)
        self.query_one("#tr-focus").display = False
        self.query_one("#tr-scores").display = False  # (a pretrained model's line)
        self.query_one(AttentionGrid).focus()
        if self.checkpoints:
            self.base_path = self.checkpoints[0][1]
            self.show_step(self.scrub_step)
        else:
            self.status("No checkpoint found: the shipped default is missing and no run has finished.")

    def status(self, text: str) -> None:
        self.query_one("#tr-status", Static).update(markup_escape(text))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.BLANK and str(self.base_path) != event.value:
            self.base_path, self.scrub_step = Path(event.value), None
            self.show_step(None)
        # Back to the grid: left on the list, the arrows meant for the heads changed the model.
        self.query_one(AttentionGrid).focus()

    @property
    def run_dir(self) -> Path | None:
        """The run the chosen checkpoint belongs to (None: a shipped model)."""
        found = run_of_checkpoint(self.base_path) if self.base_path is not None else None
        return found[0] if found else None

    def show_step(self, step: int | None) -> None:
        """Load the chosen run's snapshot at ``step`` (None: the chosen checkpoint itself)."""
        self.scrub_step = step
        path = self.base_path if step is None or self.run_dir is None else snapshot_path(self.run_dir, step)
        self.wanted = path
        self.load(path)

    def action_scrub(self, direction: int) -> None:
        """The chosen run's heads at its previous (-1) or next (+1) snapshot; past the newest,
        its kept checkpoint again (live while it trains)."""
        steps = snapshot_steps(self.run_dir) if self.run_dir is not None else []
        if not steps:
            self.notify("No snapshots to step through: the shipped models keep none, nor runs from "
                        "before the scrubber; pick a run with m", severity="warning")
            return
        self.show_step(scrub_target(steps, self.scrub_step, direction))

    @dataclass
    class Loaded(Result):
        """A checkpoint (or snapshot) read from disk, or why it could not be (``error``)."""
        checkpoint: object = None
        stamp: object = None
        error: Exception | None = None
        scores: object = None  # a pretrained model's HeadScores

    def load(self, path: Path) -> None:
        """Read ``path`` in a worker; the latest folder asked for wins (Result.is_stale)."""
        self.status(f"loading {path} …")
        self._load(path)

    @background(thread=True, exclusive=True, group="load")
    def _load(self, path: Path) -> Loaded:
        from minigpt.errors import CheckpointError
        from minigpt.teaching.induction import pretrained_head_scores
        from minigpt.teaching.trained_stepper import load_steppable

        stamp = folder_stamp(path)
        try:
            ckpt = load_steppable(path)
        except CheckpointError as e:
            return self.Loaded(error=e)
        if not isinstance(ckpt, PretrainedCheckpoint):
            return self.Loaded(ckpt, stamp)
        # A GPT-2's scores are measured once here (4 short rows), on the cores nobody else is using.
        with pretrained_threads(path):
            return self.Loaded(ckpt, stamp, scores=pretrained_head_scores(ckpt))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.error is not None:
            self.status(f"✗ {message.error}")  # the last maps stay on screen
            return
        ckpt = message.checkpoint
        if ckpt.kind != "gpt":
            self.status(f"✗ {ckpt.path} is a {ckpt.kind} model: only GPT models have attention")
            return
        self.checkpoint, self._stamp, self.scores = ckpt, message.stamp, message.scores
        self.reloads += 1
        self.show_scores()
        pretrained = isinstance(ckpt, PretrainedCheckpoint)
        self.query_one("#tr-name-label", Label).update("text" if pretrained else "name")
        field = self.query_one("#tr-name", Input)
        if pretrained and field.value == self.initial_name:
            field.value = SENTENCE  # (Input.Changed shows it)
        elif not pretrained and field.value == SENTENCE:
            field.value = self.initial_name  # back from a GPT-2: a name again, not its sentence
        else:
            self.show_name()

    def show_scores(self) -> None:
        """The best previous-token and induction heads of a pretrained model, as measured."""
        line = self.query_one("#tr-scores", Static)
        line.display = self.scores is not None
        if self.scores is None:
            return
        best = {w: self.scores.best(w) for w in ("previous", "induction")}
        line.update(markup_escape(
            "scores on random tokens written twice (lesson 215): best previous-token head: layer "
            f"{best['previous'][0]} head {best['previous'][1]} ({best['previous'][2]:.2f}); best induction: layer "
            f"{best['induction'][0]} head {best['induction'][1]} ({best['induction'][2]:.2f}); "
            "enter shows a head's own"))

    def _follow(self) -> None:
        """A live run saved a better checkpoint: show its heads (the trained-heads view follows
        the run while it trains)."""
        if self.checkpoint is None or self._stamp is None or self.scrub_step is not None:
            return  # (a snapshot never changes)
        if self.wanted != Path(self.checkpoint.path):
            return  # another folder is loading: a reload here would supersede it
        stamp = folder_stamp(Path(self.checkpoint.path))
        if stamp is not None and stamp != self._stamp:
            self._stamp = stamp
            self.load(Path(self.checkpoint.path))

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.checkpoint is not None:
            self.show_name()

    def show_name(self) -> None:
        ckpt = self.checkpoint
        text = self.query_one("#tr-name", Input).value
        cut = False  # a sentence longer than the grid shows
        try:
            if isinstance(ckpt, PretrainedCheckpoint):
                ids, labels = sentence_ids(ckpt.tokenizer, text, min(SHOWN_SENTENCE_TOKENS, ckpt.model_config.block_size))
                cut = len(ckpt.tokenizer.encode(text)) > len(ids)
            else:
                ids, labels = name_ids(ckpt.vocab, text, ckpt.model_config.block_size)
        except ValueError as e:
            self.status(f"✗ {e}")  # the last maps stay on screen
            return
        self.compute_maps(ids, labels, cut)

    @dataclass
    class Mapped(Result):
        """Every head's attention map on the name."""
        maps: list
        labels: list[str]
        cut: bool = False

    @background(thread=True, exclusive=True, group="maps")
    def compute_maps(self, ids: list[int], labels: list[str], cut: bool = False) -> Mapped:
        import torch

        maps = self.checkpoint.model.attention_maps(torch.tensor([ids]))
        return self.Mapped(maps.tolist(), labels, cut)

    @on(Mapped)
    def _maps_done(self, message: Mapped) -> None:
        self.maps, self.labels = maps, labels = message.maps, message.labels
        cfg = self.checkpoint.model_config
        where = f"⏪ step {self.scrub_step} ([ ] steps, past the last: latest) · " if self.scrub_step is not None else ""
        layers, heads = (f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((cfg.n_layers, "layer"),
                                                                            (cfg.n_heads, "head")))
        pretrained = isinstance(self.checkpoint, PretrainedCheckpoint)
        cut = f" (its first {len(labels)} tokens)" if message.cut else ""
        self.status(f"{where}{layers} × {heads} on {printable(''.join(labels))!r}{cut} "
                    f"(rows: query, columns: key) · arrows pick a head, enter focuses it, "
                    f"n edits the {'text' if pretrained else 'name'}")
        self.query_one(AttentionGrid).set_maps(maps)
        if self.query_one("#tr-focus").display:
            self.focus_head(*self.query_one(AttentionGrid).cursor)

    def on_attention_grid_head_chosen(self, event: AttentionGrid.HeadChosen) -> None:
        self.focus_head(event.layer, event.head)

    def focus_head(self, layer: int, head: int) -> None:
        view = self.query_one("#tr-focus", MatrixView)
        view.display = True
        step = f" · step {self.scrub_step}" if self.scrub_step is not None else ""  # the status may scroll away
        if self.scores is not None:
            step += (f" · previous-token {float(self.scores.previous[layer, head]):.2f},"
                     f" induction {float(self.scores.induction[layer, head]):.2f}")
        labels = [printable(label) for label in self.labels]
        view.set_panel(Panel(f"layer {layer} head {head}{step}", self.maps[layer][head], "unit", labels,
                             labels), show_sums=True)
        view.focus()
        # After the refresh that lays the head out at its height (one refresh later than the focus
        # scroll, which saw it one line tall and left the rest below the screen at 80×24).
        self.call_after_refresh(self.call_after_refresh, view.scroll_visible, top=True, animate=False)

    def action_focus_grid(self) -> None:
        self.query_one(AttentionGrid).focus()

    def action_edit_name(self) -> None:
        self.query_one("#tr-name", Input).focus()

    def action_choose_model(self) -> None:
        select = self.query_one("#tr-ckpt", Select)
        select.focus()
        select.expanded = True

    def check_action(self, action: str, parameters) -> bool | None:
        # Letters belong to the name while it is being typed.
        if action in ("edit_name", "choose_model", "glyphs", "scrub") and isinstance(self.focused, Input):
            return False
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(AttentionGrid).focus()

    def action_glyphs(self) -> None:
        self.query_one(AttentionGrid).glyphs = not self.query_one(AttentionGrid).glyphs
        self.query_one("#tr-focus", MatrixView).glyphs = self.query_one(AttentionGrid).glyphs

    def action_back(self) -> None:
        view = self.query_one("#tr-focus", MatrixView)
        if isinstance(self.focused, (Input, Select)):
            self.query_one(AttentionGrid).focus()
        elif view.display:
            view.display = False
            self.query_one(AttentionGrid).focus()
        else:
            # The step goes back to whoever opened this view on a run (the training panel) when
            # it is still that run's; otherwise the step it was opened at.
            opened = self.checkpoints[0][1] if self.checkpoints else None
            self.dismiss(self.scrub_step if self.base_path == opened else self.initial_step)
