"""The attention stepper: every stage of self-attention on a small example, every number explained.

The screen only displays: ``minigpt.teaching.stepper.StepperState`` holds the inputs, ``compute`` runs
``minigpt.teaching.attention``, ``stage_panels`` says what each stage shows and ``explain_cell`` writes the
selected cell out term by term. The current stage sits beside the previous one (stacked, with
2-decimal cells, when the terminal is too narrow). c loads one layer of a trained model instead
(the shipped MiniGPT, a run's checkpoint or one of its snapshots) on a typed name: that part is
the mix-in ``tui.attention.attention_trained_model``.
"""

from __future__ import annotations

import random

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from minigpt import paths
from minigpt.numbers import parse_number
from minigpt.outputs import write_output
from minigpt.teaching.attention import BUGS, check_trace
from minigpt.teaching.stepper import (
    BUG_ORDER,
    STAGE,
    check_answer,
    explain_cell,
    export_csv,
    export_markdown,
    make_question,
    preset_state,
    stage_note,
    stage_panels,
    stages_for,
)
from minigpt.teaching.trained_stepper import parse_shape
from minigpt.text import markup_escape
from tui import navigation
from tui.attention.attention_trained_model import TrainedModelStepping
from tui.common.header import TutorHeader
from tui.common.matrix_view import MatrixView

PRESET_NAMES = ("the cat sat down", "five tokens, d=4", "random")
CHECK_GLYPH = {"ok": "[b $success]✓[/]", "fail": "[b $error]✗[/]", "skipped": "[$text-muted]–[/]"}


class AttentionStepperScreen(TrainedModelStepping, Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", show=False, id="attention.back"),
        Binding("n", "stage(1)", "Next", show=True, id="attention.next_stage"),
        Binding("p", "stage(-1)", "Prev", show=True, id="attention.previous_stage"),
        Binding("tab", "next_matrix", "Matrix", show=True, id="attention.next_matrix"),
        Binding("m", "toggle_mask", "Mask", show=False, id="attention.toggle_mask"),
        Binding("e", "edit", "Edit", show=True, id="attention.edit"),
        Binding("1", "bug(0)", "Bug: " + BUGS[BUG_ORDER[0]], show=False, id="attention.bug_1"),
        Binding("2", "bug(1)", "Bug: " + BUGS[BUG_ORDER[1]], show=False, id="attention.bug_2"),
        Binding("3", "bug(2)", "Bug: " + BUGS[BUG_ORDER[2]], show=False, id="attention.bug_3"),
        Binding("4", "bug(3)", "Bug: " + BUGS[BUG_ORDER[3]], show=False, id="attention.bug_4"),
        Binding("5", "bug(4)", "Bug: " + BUGS[BUG_ORDER[4]], show=False, id="attention.bug_5"),
        Binding("h", "next_head", "Next head", show=False, id="attention.next_head"),
        Binding("k", "toggle_predict", "Predict", show=True, id="attention.toggle_predict"),
        Binding("x", "export", "Export", show=False, id="attention.export"),
        Binding("o", "explorers", "Explore", show=False, id="attention.explorers"),  # (help and the palette list it: c Model took its room)
        Binding("c", "model", "Model", show=True, id="attention.model"),
        Binding("left_square_bracket", "preset(-1)", "Prev preset", show=False, key_display="[", id="attention.previous_preset"),
        Binding("right_square_bracket", "preset(1)", "Next preset", show=False, key_display="]", id="attention.next_preset"),
        Binding("r", "reseed", "New random seed", show=False, id="attention.reseed"),
        Binding("s", "shape", "Random shape (T d heads)", show=False, id="attention.shape"),
        Binding("g", "glyphs", "Glyph ramp on/off", show=False, id="attention.glyphs"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.preset_index = 0
        self.seed = 0
        self.shape = (5, 4, 2)
        self.state = preset_state(0)
        self.stage_index = 0
        self.panel_index = 0
        self.head = 0
        self.predict = False
        self.revealed: set[tuple] = set()  # (preset, stage, head) already shown in predict mode
        self.question = None
        self.input_mode = ""  # "" | "edit" | "predict" | "shape"
        self._shown: dict[str, str] = {}  # what each line shows (see _show)
        self.mh = self.state.compute()

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Vertical(id="att-body"):
            yield Static(id="att-status")
            yield Static(id="att-path")
            with ScrollableContainer(id="att-matrices"):
                yield MatrixView(id="att-prev", show_cursor=False)
                yield MatrixView(id="att-current")
            yield Static(id="att-explain")
            with Horizontal(id="att-checks-row"):  # the label in its own column: wrapped checks stay indented
                yield Static("[b]Checks[/b]", id="att-checks-label")
                yield Static(id="att-checks")
            yield Input(id="att-input")
            yield Static(id="att-message")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#att-input").display = False
        self.query_one("#att-current").focus()
        self.refresh_all()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    # -- model ------------------------------------------------------------------------------------
    @property
    def stages(self) -> list[str]:
        return stages_for(self.state)

    @property
    def stage(self) -> str:
        return self.stages[self.stage_index]

    def recompute(self) -> None:
        self.mh = self.state.compute()
        self.head = min(self.head, self.state.n_heads - 1)
        self.refresh_all()

    def current_panels(self):
        return stage_panels(self.state, self.mh, self.stage, self.head)

    # -- drawing ----------------------------------------------------------------------------------
    def refresh_all(self) -> None:
        st = self.state
        # A random preset's name carries its seed; a trained model's layer is not a preset.
        seed = "" if st.seed is not None or st.dim_labels else " (fixed)"
        bugs = ", ".join(str(BUG_ORDER.index(b) + 1) for b in BUG_ORDER if b in st.bugs) or "none"
        head = f" · head {self.head + 1}/{st.n_heads} (h)" if st.multi_head else ""
        self._show("#att-status",
            f"[b]{st.name}[/b]{seed} · T={len(st.tokens)} d={len(st.X[0])}{head} · "
            f"mask {'ON' if st.causal else 'off'} (m) · bugs: {bugs}"
            f"{' · PREDICT' if self.predict else ''}")
        path = []
        for k, s in enumerate(self.stages):
            label = STAGE[s].label
            path.append(f"[reverse b] {label} [/]" if k == self.stage_index else label)
        self._show("#att-path",
            f"{self.stage_index + 1}/{len(self.stages)} " + " → ".join(path)
            + f"  [dim]{STAGE[self.stage].title}[/dim]")
        panels = self.current_panels()
        self.panel_index %= len(panels)
        panel = panels[self.panel_index]
        prev = self.query_one("#att-prev", MatrixView)
        cur = self.query_one("#att-current", MatrixView)
        # The first stage keeps the previous stage's slot, the size of what the second stage shows
        # there: the timed step into the second stage then fills it in place (showing it took a
        # full-screen layout, most of the step's cost).
        earlier = self.stages[max(self.stage_index - 1, 0)]
        before = stage_panels(self.state, self.mh, earlier, self.head)
        prev.set_panel(before[min(self.panel_index if self.stage_index else 0, len(before) - 1)],
                       title="(previous)", show_sums=STAGE[earlier].row_sums,
                       placeholder="" if self.stage_index else "(no previous stage)")
        tr = self.mh.heads[self.head]
        error = tr.error if STAGE[self.stage].uses_scores else ""
        names = [p.name for p in panels]
        title = f"[{self.panel_index + 1}/{len(panels)} tab]" if len(panels) > 1 else ""
        key = (self.preset_key(), self.stage, self.head)
        hidden = self.predict and key not in self.revealed and self.stage != "input"
        cur.set_panel(panel, title=title, show_sums=STAGE[self.stage].row_sums, hidden=hidden,
                      error=error and f"✗ {error}")
        cur.border_title = " · ".join(names)
        self.render_checks()
        self.render_explain()
        if self.query_one("#att-matrices").size.width:  # laid out: fit in the same layout as the panels
            self._fit()
        else:  # (fitting after the next layout cost the next stage a second one)
            self.call_after_refresh(self._fit)
        if hidden and self.input_mode != "predict":
            self.ask_prediction(panel)

    def _show(self, selector: str, content: str) -> None:
        """Update a line only when its text changes, and lay the screen out again only when its
        height does: a layout reflows and redraws every widget of the screen (most of the next
        stage's cost), while most stages change a line's words, not its height."""
        if self._shown.get(selector) == content:
            return
        self._shown[selector] = content
        line = self.query_one(selector, Static)
        height, width = line.size.height, line.size.width
        line.update(content, layout=False)
        if not width or line.get_content_height(line.size, self.app.size, width) != height:
            line.refresh(layout=True)

    def preset_key(self) -> tuple:
        st = self.state
        return (st.name, st.causal, tuple(sorted(st.bugs)), str(st.X), str(st.W_Q), str(st.W_K),
                str(st.W_V), str(st.W_O))

    def render_checks(self) -> None:
        trace = self.mh.heads[self.head]
        if getattr(self, "_checked", (None,))[0] is not trace:  # the same trace on every stage: check once
            self._checked = (trace, check_trace(trace))
        checks = self._checked[1]
        self._show("#att-checks",
            "  ".join(f"{CHECK_GLYPH[c.status]} {c.name}" for c in checks))

    def render_explain(self) -> None:
        cur = self.query_one("#att-current", MatrixView)
        if cur.panel is None:
            return
        i, j = cur.cursor
        if cur.hidden:
            text = "Predict first: answer below, or press escape to reveal."
        else:
            text = explain_cell(self.state, self.mh, self.stage, cur.panel.name, i, j, self.head)
        note = stage_note(self.state, self.stage)
        self._show("#att-explain",
            text.replace("[", "\\[") + (f"\n[dim]{note}[/dim]" if note else ""))

    def _fit(self) -> None:
        """Side by side when both fit; else stacked, current on top (3 decimals, then 2)."""
        box = self.query_one("#att-matrices")
        prev = self.query_one("#att-prev", MatrixView)
        cur = self.query_one("#att-current", MatrixView)
        avail = box.size.width - 2
        was = (box.has_class("-stacked"), cur.compact)
        prev.compact = cur.compact = False
        width = cur.get_content_width(None, None) + 2
        side = width + prev.get_content_width(None, None) + 2
        stacked = side > avail
        if stacked and width > avail:
            prev.compact = cur.compact = True
        box.set_class(stacked, "-stacked")
        if stacked != (box.children[0] is cur):
            box.move_child(cur, before=prev) if stacked else box.move_child(prev, before=cur)
        if (stacked, cur.compact) != was:  # only a changed arrangement needs a new layout
            prev.refresh(layout=True)
            cur.refresh(layout=True)

    def on_matrix_view_cursor_moved(self, event: MatrixView.CursorMoved) -> None:
        if event.view.id == "att-current":
            self.render_explain()

    def message(self, text: str, error: bool = False) -> None:
        self._show("#att-message",
            f"[b $error]✗ {markup_escape(text)}[/]" if error else markup_escape(text))

    # -- actions ----------------------------------------------------------------------------------
    def action_back(self) -> None:
        if self.input_mode:
            self.close_input(reveal=True)
        else:
            self.app.pop_screen()

    def action_stage(self, step: int) -> None:
        self.close_input(reveal=False)
        self.stage_index = max(0, min(len(self.stages) - 1, self.stage_index + step))
        self.panel_index = 0
        self.message("")
        self.refresh_all()

    def action_next_matrix(self) -> None:
        self.panel_index += 1
        self.refresh_all()

    def action_next_head(self) -> None:
        self.head = (self.head + 1) % self.state.n_heads
        self.refresh_all()

    def action_toggle_mask(self) -> None:
        self.state.causal = not self.state.causal
        self.message(f"Causal mask {'on: future keys get −∞ before the softmax' if self.state.causal else 'off'}")
        self.recompute()

    def action_bug(self, k: int) -> None:
        bug = BUG_ORDER[k]
        self.state.bugs ^= {bug}
        on = bug in self.state.bugs
        self.message(f"Bug {k + 1} {'ON' if on else 'off'}: {BUGS[bug]}"
                     + (" (turn the mask on with m to see it)" if on and "mask" in bug and not self.state.causal else ""))
        self.recompute()

    def action_glyphs(self) -> None:
        for v in self.query(MatrixView):
            v.glyphs = not v.glyphs
        self.call_after_refresh(self._fit)

    def load_preset(self) -> None:
        causal, bugs = self.state.causal, self.state.bugs
        self.state = preset_state(self.preset_index, self.seed, self.shape)
        self.state.causal, self.state.bugs = causal, bugs
        self.stage_index = min(self.stage_index, len(self.stages) - 1)
        self.head = 0
        self.message(f"Preset: {self.state.name}")
        self.recompute()

    def action_preset(self, step: int) -> None:
        self.close_input(reveal=False)
        self.preset_index = (self.preset_index + step) % len(PRESET_NAMES)
        self.load_preset()

    def action_reseed(self) -> None:
        self.close_input(reveal=False)
        self.seed = random.randrange(10_000)
        self.preset_index = 2
        self.load_preset()

    def action_shape(self) -> None:
        self.open_input("shape", "T d heads, e.g. 6 4 2 (T ≤ 8, d ≤ 8, heads divide d)",
                        " ".join(map(str, self.shape)))

    def action_edit(self) -> None:
        cur = self.query_one("#att-current", MatrixView)
        if not cur.panel.editable:
            self.message(f"{cur.panel.name} is computed from the stages before it: press p to go back "
                         f"to stage 1 and edit X or a weight matrix", error=True)
            return
        i, j = cur.cursor
        self.open_input("edit", f"new value for {cur.panel.name}[{i},{j}]", f"{cur.value(i, j):g}")

    def action_toggle_predict(self) -> None:
        self.predict = not self.predict
        self.revealed.add((self.preset_key(), self.stage, self.head))  # never hide what is on screen
        self.message("Predict mode ON: each new stage asks before it shows" if self.predict
                     else "Predict mode off")
        if not self.predict:
            self.close_input(reveal=True)
        self.refresh_all()

    def ask_prediction(self, panel) -> None:
        cur = self.query_one("#att-current", MatrixView)
        self.question = make_question(panel, *cur.cursor)
        self.open_input("predict", self.question.prompt, "")
        self.message(self.question.prompt + "  (escape reveals)")

    def action_export(self) -> None:
        cur = self.query_one("#att-current", MatrixView)
        if cur.hidden:
            self.message("Predict (or escape) first: the stage is not revealed yet", error=True)
            return
        md, csv = export_markdown(cur.panel, self.stage), export_csv(cur.panel)
        folder = paths.user_data_dir() / "exports"
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"attention-{self.stage}-{cur.panel.name.replace('/', '').replace('√', 'sqrt')}"
        try:
            write_output(folder / f"{stem}.md", md)
            write_output(folder / f"{stem}.csv", csv)
        except OSError as e:
            self.message(f"could not save the export: {e}", error=True)
            return
        self.app.copy_to_clipboard(md)  # OSC 52: terminals that support it get the Markdown
        self.last_export = folder / stem
        self.message(f"Saved {folder / stem}.md and .csv; Markdown copied (OSC 52, where supported)")

    def action_explorers(self) -> None:
        navigation.open_screen(self.app, "explorer_menu")

    # -- the input line ---------------------------------------------------------------------------
    def open_input(self, mode: str, placeholder: str, value: str, title: str = "") -> None:
        self.input_mode = mode
        box = self.query_one("#att-input", Input)
        box.placeholder, box.value, box.display = placeholder, value, True
        box.border_title = title or {"edit": "edit (enter saves, escape cancels)", "shape": "random shape",
                                     "predict": "your prediction", "model": "name and layer"}[mode]
        box.focus()

    def close_input(self, reveal: bool) -> None:
        if self.input_mode == "predict" and reveal:
            self.revealed.add((self.preset_key(), self.stage, self.head))
        was = self.input_mode
        self.input_mode = ""
        box = self.query_one("#att-input", Input)
        box.display = False
        self.query_one("#att-current").focus()
        if was == "predict" and reveal:
            self.refresh_all()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        mode, text = self.input_mode, event.value
        try:
            if mode == "edit":
                cur = self.query_one("#att-current", MatrixView)
                i, j = cur.cursor
                self.state.set_entry(cur.panel.name, i, j, parse_number(text))
                self.close_input(reveal=False)
                self.message(f"{cur.panel.name}[{i},{j}] = {parse_number(text):g}: every later stage recomputed")
                self.recompute()
            elif mode == "shape":
                shape = parse_shape(text)
                self.shape, self.preset_index = shape, 2
                self.close_input(reveal=False)
                self.load_preset()
            elif mode == "model":
                self.submit_model_text(text)
            elif mode == "predict":
                labels = self.query_one("#att-current", MatrixView).panel.col_labels
                ok, verdict = check_answer(self.question, text, labels)
                self.close_input(reveal=True)
                self.message(("✓ " if ok else "✗ ") + verdict)
        except ValueError as e:
            self.message(str(e), error=True)  # the input stays open with the text kept
