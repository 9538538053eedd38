"""Trained-model attention: pick a checkpoint, type a name, see every layer × head as a small
heatmap; enter focuses one head as a labelled matrix. The course's exercise 1, live."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, Select, Static

from minigpt.playground.generation import find_checkpoints
from minigpt.teaching.explorers import name_ids
from minigpt.teaching.stepper import Panel
from minigpt.text import markup_escape
from tui.widgets.attention_grid import AttentionGrid
from tui.widgets.matrix_view import MatrixView
from tui.workers import background


def available_checkpoints() -> list[tuple[str, Path]]:
    """MiniGPT checkpoints (the shipped ones, then finished runs): only they have attention."""
    return [(markup_escape(c.label), c.path) for c in find_checkpoints(live=True) if c.kind == "gpt"]


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
    BINDINGS = [Binding("escape", "back", "Back", show=True),
                Binding("n", "edit_name", "Name", show=True),
                Binding("m", "choose_model", "Model", show=True),
                Binding("f6", "focus_grid", "Grid", show=False),
                Binding("g", "glyphs", "Glyphs", show=True)]

    def __init__(self, checkpoints: list[tuple[str, Path]] | None = None, name: str = "emma") -> None:
        super().__init__()
        self.checkpoints = available_checkpoints() if checkpoints is None else checkpoints
        self.initial_name = name
        self.checkpoint = None
        self.reloads = 0  # checkpoints loaded (a live run's are reloaded as it saves)
        self.labels: list[str] = []
        self.maps = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(classes="explorer-body"):
            # Compact one-line controls: the long checkpoint labels are cut, not wrapped, and the
            # grid gets the rows.
            with Horizontal(id="tr-controls"):
                yield Label("model", classes="tr-label")
                yield Select([(label, str(p)) for label, p in self.checkpoints], id="tr-ckpt",
                             allow_blank=not self.checkpoints, compact=True,
                             prompt="no checkpoint yet: train one in the Training area")
                yield Label("name", classes="tr-label")
                yield Input(self.initial_name, id="tr-name", compact=True)
            yield Static(id="tr-status", classes="explorer-muted")
            yield AttentionGrid(id="tr-grid")
            yield MatrixView(id="tr-focus", show_cursor=True, auto_fit=True)
        yield Footer()

    def on_mount(self) -> None:
        self._stamp = None  # the loaded checkpoint folder's stamp: a new one means a newer model
        self.set_interval(FOLLOW_S, self._follow)
        self.query_one("#tr-focus").display = False
        self.query_one(AttentionGrid).focus()
        if self.checkpoints:
            self.load(self.checkpoints[0][1])
        else:
            self.status("No checkpoint found: the shipped default is missing and no run has finished.")

    def status(self, text: str) -> None:
        self.query_one("#tr-status", Static).update(markup_escape(text))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.BLANK and (self.checkpoint is None or str(self.checkpoint.path) != event.value):
            self.load(Path(event.value))

    @background(thread=True, exclusive=True, group="load")
    def load(self, path: Path) -> None:
        from minigpt.checkpoint import load_checkpoint
        from minigpt.errors import CheckpointError

        self.app.call_from_thread(self.status, f"loading {path} …")
        stamp = folder_stamp(path)
        try:
            ckpt = load_checkpoint(path)
        except CheckpointError as e:
            self.app.call_from_thread(self.status, f"✗ {e}")
            return
        self.app.call_from_thread(self._loaded, ckpt, stamp)

    def _loaded(self, ckpt, stamp=None) -> None:
        if ckpt.kind != "gpt":
            self.status(f"✗ {ckpt.path} is a {ckpt.kind} model: only GPT models have attention")
            return
        self.checkpoint, self._stamp = ckpt, stamp
        self.reloads += 1
        self.show_name()

    def _follow(self) -> None:
        """A live run saved a better checkpoint: show its heads (the trained-heads view follows
        the run while it trains)."""
        if self.checkpoint is None or self._stamp is None:
            return
        stamp = folder_stamp(Path(self.checkpoint.path))
        if stamp is not None and stamp != self._stamp:
            self._stamp = stamp
            self.load(Path(self.checkpoint.path))

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.checkpoint is not None:
            self.show_name()

    def show_name(self) -> None:
        ckpt = self.checkpoint
        try:
            ids, labels = name_ids(ckpt.vocab, self.query_one("#tr-name", Input).value,
                                   ckpt.model_config.block_size)
        except ValueError as e:
            self.status(f"✗ {e}")  # the last maps stay on screen
            return
        self.compute_maps(ids, labels)

    @background(thread=True, exclusive=True, group="maps")
    def compute_maps(self, ids: list[int], labels: list[str]) -> None:
        import torch

        maps = self.checkpoint.model.attention_maps(torch.tensor([ids]))
        self.app.call_from_thread(self._maps_done, maps.tolist(), labels)

    def _maps_done(self, maps, labels) -> None:
        self.maps, self.labels = maps, labels
        cfg = self.checkpoint.model_config
        self.status(f"{cfg.n_layers} layers × {cfg.n_heads} heads on {''.join(labels)!r} "
                    f"(rows: query, columns: key) · arrows pick a head, enter focuses it, "
                    f"n edits the name")
        self.query_one(AttentionGrid).set_maps(maps)
        if self.query_one("#tr-focus").display:
            self.focus_head(*self.query_one(AttentionGrid).cursor)

    def on_attention_grid_head_chosen(self, event: AttentionGrid.HeadChosen) -> None:
        self.focus_head(event.layer, event.head)

    def focus_head(self, layer: int, head: int) -> None:
        view = self.query_one("#tr-focus", MatrixView)
        view.display = True
        view.set_panel(Panel(f"layer {layer} head {head}", self.maps[layer][head], "unit", self.labels,
                             self.labels), show_sums=True)
        view.focus()
        self.call_after_refresh(view.scroll_visible)

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
        if action in ("edit_name", "choose_model", "glyphs") and isinstance(self.focused, Input):
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
            self.app.pop_screen()
