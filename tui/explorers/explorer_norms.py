"""LayerNorm step by step on an editable vector, with BatchNorm and RMSNorm on a small batch.
ctrl+l loads a trained model's norms: each one's learned gain γ and shift β, and the spread of what
it receives and gives on a few names."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static

from minigpt.teaching.explorers import layer_norm_steps, parse_vector, rms_norm_steps
from minigpt.teaching.model_views import NORM_COLUMNS, NormView, norm_view
from minigpt.teaching.norms import batch_norm, layer_norm, rms_norm
from minigpt.teaching.stepper import Panel
from minigpt.text import markup_escape
from tui.common.checkpoint_picker import LoadsCheckpoint
from tui.common.header import TutorHeader
from tui.common.matrix_view import MatrixView

COURSE_VECTOR = "2 4 6 8"
EXTRA_ROWS = "1 3 5 7; 0 0 4 4"


class NormsExplorerScreen(LoadsCheckpoint, Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True, id="explorer_norms.back"),
                Binding("ctrl+r", "reset", "Course example", show=True, id="explorer_norms.reset"),
                LoadsCheckpoint.MODEL_BINDING]
    view_of = staticmethod(norm_view)
    refusal_at = "#n-error"
    lists_pretrained = True  # GPT-2 folders too: its LayerNorms measured as ours are
    picker_title = "Show a trained model's norms"
    model: NormView | None = None

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with VerticalScroll(classes="explorer-body"):
            yield Static("[b]Normalisation[/b]  LayerNorm: each row on its own · BatchNorm: each column "
                         "across the batch · RMSNorm: no mean", classes="explorer-text")
            with Horizontal(classes="explorer-row"):
                yield Label("x")
                yield Input(COURSE_VECTOR, id="n-x")
                yield Label("batch rows")
                yield Input(EXTRA_ROWS, id="n-rows")
            yield Static(id="n-error", classes="explorer-error")
            yield Static(id="n-model", classes="explorer-text")
            yield MatrixView(id="n-model-table", show_cursor=False, auto_fit=True)
            yield Static(id="n-steps", classes="explorer-text")
            with Horizontal(classes="explorer-row"):
                yield MatrixView(id="n-batch", show_cursor=False, auto_fit=True, classes="half")
                yield MatrixView(id="n-ln", show_cursor=False, auto_fit=True, classes="half")
            with Horizontal(classes="explorer-row"):
                yield MatrixView(id="n-bn", show_cursor=False, auto_fit=True, classes="half")
                yield MatrixView(id="n-rms", show_cursor=False, auto_fit=True, classes="half")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#n-model-table").display = False  # until a model is loaded
        self.query_one("#n-x").focus()
        self.recompute()

    def show_model(self, path, view: NormView) -> None:
        self.model = view
        self.query_one("#n-error", Static).update("")
        spread = "RMS" if view.kind == "rmsnorm" else "std"
        self.query_one("#n-model", Static).update(
            f"[b]{markup_escape(view.label)}[/b]'s {view.kind}s (block.norm): learned gain γ, shift β; "
            f"in/out: mean {spread} of a token's numbers before/after the norm, on {view.names} names")
        self.query_one("#n-model-table", MatrixView).set_panel(
            Panel("norms", view.values, "diverging", view.rows, list(NORM_COLUMNS)))
        self.query_one("#n-model-table").display = True

    def on_input_changed(self, event: Input.Changed) -> None:
        self.recompute()

    def action_reset(self) -> None:
        self.query_one("#n-x", Input).value = COURSE_VECTOR
        self.query_one("#n-rows", Input).value = EXTRA_ROWS

    def batch(self) -> list[list[float]]:
        x = parse_vector(self.query_one("#n-x", Input).value)
        rows = [x]
        for k, part in enumerate(p for p in self.query_one("#n-rows", Input).value.split(";") if p.strip()):
            row = parse_vector(part)
            if len(row) != len(x):
                raise ValueError(f"batch row {k + 1} has {len(row)} numbers; x has {len(x)}")
            rows.append(row)
        return rows

    def recompute(self) -> None:
        try:
            rows = self.batch()
        except ValueError as e:
            self.query_one("#n-error", Static).update(f"✗ {e}")  # the last good result stays
            return
        self.query_one("#n-error", Static).update("")
        x = rows[0]
        self.query_one("#n-steps", Static).update(
            "[b]LayerNorm of x[/b] (ε = 0, γ = 1, β = 0)\n" + "\n".join(layer_norm_steps(x))
            + "\n[b]RMSNorm of x[/b]\n" + "\n".join(rms_norm_steps(x)))
        labels_r = ["x"] + [f"row{k}" for k in range(1, len(rows))]
        labels_c = [f"f{j}" for j in range(len(x))]
        for wid, name, m in (("#n-batch", "batch", rows), ("#n-ln", "LayerNorm (rows)", layer_norm(rows)),
                             ("#n-bn", "BatchNorm (columns)", batch_norm(rows)),
                             ("#n-rms", "RMSNorm (rows)", rms_norm(rows))):
            values = [[float(v) for v in r] for r in (m.tolist() if hasattr(m, "tolist") else m)]
            self.query_one(wid, MatrixView).set_panel(Panel(name, values, "diverging", labels_r, labels_c))
