"""Positional encoding: the sinusoidal table as a heatmap, one position's values, and the RoPE
identity ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩ checked numerically. ctrl+l loads a trained model's
position table instead (the shipped model, a run's, a snapshot's): how alike its positions are."""

from __future__ import annotations

import torch
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static

from minigpt.teaching.model_views import PositionView, position_view
from minigpt.teaching.positions import rope_identity, sinusoidal_pe
from minigpt.teaching.stepper import Panel, fmt
from minigpt.text import markup_escape
from tui.common.checkpoint_picker import LoadsCheckpoint
from tui.common.header import TutorHeader
from tui.common.matrix_view import MatrixView

SINUSOIDAL_TITLE = ("[b]Sinusoidal positions[/b]  even column 2i: sin(pos · 10000^(−2i/d)); "
                    "odd column 2i+1: cos of the same angle")

# Fixed example vectors for the RoPE check (d = 8), so the numbers are reproducible.
_g = torch.Generator().manual_seed(7)
ROPE_Q = torch.randn(8, generator=_g, dtype=torch.float64).round(decimals=2)
ROPE_K = torch.randn(8, generator=_g, dtype=torch.float64).round(decimals=2)


def _ints(text: str, names: str, lo: int, hi: int) -> list[int]:
    parts = text.replace(",", " ").split()
    if len(parts) != len(names.split()) or not all(p.lstrip("-").isdigit() for p in parts):
        raise ValueError(f"type {len(names.split())} whole numbers: {names}")
    vals = [int(p) for p in parts]
    if not all(lo <= v <= hi for v in vals):
        raise ValueError(f"{names}: each must be between {lo} and {hi}")
    return vals


class PositionsExplorerScreen(LoadsCheckpoint, Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True, id="explorer_positions.back"),
                Binding("f6", "focus_table", "Table (↑↓ picks a position)", show=True, id="explorer_positions.focus_table"),
                LoadsCheckpoint.MODEL_BINDING]
    view_of = staticmethod(position_view)
    refusal_at = "#pe-error"
    picker_title = "Show a trained model's position table"
    lists_pretrained = True  # GPT-2's 1,024 learned positions, sampled
    model: PositionView | None = None  # the loaded model's table; None: the sinusoidal one typed

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with VerticalScroll(classes="explorer-body", id="pe-body"):
            yield Static(SINUSOIDAL_TITLE, id="pe-title", classes="explorer-text")
            with Horizontal(classes="explorer-row"):
                yield Label("T d")
                yield Input("8 8", id="pe-shape")
                yield Label("RoPE m n")
                yield Input("2 5", id="pe-mn")
            yield Static(id="pe-error", classes="explorer-error")
            yield MatrixView(id="pe-table", auto_fit=True)
            yield Static(id="pe-row", classes="explorer-text")
            yield Static(id="pe-rope", classes="explorer-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#pe-table").focus()
        self.recompute()

    def action_focus_table(self) -> None:
        self.query_one("#pe-table").focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "pe-shape":
            self.model = None  # a typed shape: back to the sinusoidal table
        self.recompute()

    def show_model(self, path, view: PositionView) -> None:
        self.model = view
        self.recompute()

    def on_matrix_view_cursor_moved(self, event: MatrixView.CursorMoved) -> None:
        self.show_row()

    def recompute(self) -> None:
        err = self.query_one("#pe-error", Static)
        try:
            T, d = _ints(self.query_one("#pe-shape", Input).value, "T d", 1, 32)
            if d > 16:
                raise ValueError("d ≤ 16 keeps the table readable")
            if d % 2:
                raise ValueError("d must be even: sin and cos come in pairs")
            m, n = _ints(self.query_one("#pe-mn", Input).value, "m n", -1000, 1000)
        except ValueError as e:
            err.update(f"✗ {e}")
            return
        err.update("")
        if self.model is not None:
            self.show_table_of_model()
        else:
            self.query_one("#pe-title", Static).update(SINUSOIDAL_TITLE)
            pe = sinusoidal_pe(T, d).tolist()
            self.query_one("#pe-table", MatrixView).set_panel(
                Panel("PE", pe, "diverging", [f"p{i}" for i in range(T)], [f"d{j}" for j in range(d)]),
                title="positions × dimensions")
        self.show_row()
        lhs, rhs = rope_identity(ROPE_Q, ROPE_K, m, n)
        ok = abs(lhs - rhs) < 1e-9
        vec = lambda t: "[" + " ".join(f"{v:.2f}" for v in t.tolist()) + "]"  # noqa: E731
        self.query_one("#pe-rope", Static).update(
            f"[b]RoPE[/b] q = {vec(ROPE_Q)}\n     k = {vec(ROPE_K)}\n"
            f"⟨R_{m} q, R_{n} k⟩ = {lhs:.6f}\n⟨q, R_{n - m} k⟩   = {rhs:.6f}\n"
            f"{'✓ equal' if ok else '✗ differ'} (|difference| = {abs(lhs - rhs):.1e}): the score depends "
            f"only on n − m = {n - m}")

    def show_table_of_model(self) -> None:
        m = self.model
        what = "learned position table (wpe)" if m.learned else "fixed sinusoidal table (not learned)"
        d = len(m.table[0])
        apart = " · ".join(f"{k} apart {c:+.2f}" for k, c in m.by_distance)
        sampled = (f" (shown: {len(m.positions)} of them, evenly spaced; the means use all)"
                   if len(m.positions) < m.total else "")
        self.query_one("#pe-title", Static).update(
            f"[b]{markup_escape(m.label)}[/b]: its {what}, {m.total:,} positions × {d} dimensions{sampled}; "
            f"the grid is the cosine similarity of each pair of positions. Mean cosine: {apart}. "
            f"Type T d for sinusoids.")
        labels = [f"p{i}" for i in m.positions]
        self.query_one("#pe-table", MatrixView).set_panel(
            Panel("cos", m.similarity, "diverging", labels, labels), title="cosine(p_i, p_j)")

    def show_row(self) -> None:
        view = self.query_one("#pe-table", MatrixView)
        if view.panel is None:
            return
        i = view.cursor[0]
        if self.model is not None:
            m = self.model
            p = m.positions[i]
            sims = sorted(((c, m.positions[j]) for j, c in enumerate(m.similarity[i]) if j != i), reverse=True)[:3]
            self.query_one("#pe-row", Static).update(
                f"[b]position {p}[/b]: ‖p{p}‖ = {m.norms[i]:.3f}; most alike (of those shown) "
                + ", ".join(f"p{j} ({c:+.2f})" for c, j in sims) + "; first values "
                + "  ".join(fmt(v) for v in m.table[i][:6]) + " …")
            return
        self.query_one("#pe-row", Static).update(
            f"[b]position {i}[/b]: " + "  ".join(fmt(v) for v in view.panel.values[i]))
