"""Parameter counter: pick a MiniGPT shape, see each component's count, the real model's
``sum(p.numel())`` and the 12·L·d² rule of thumb beside it. ctrl+l loads a checkpoint's shape (the
shipped model, a run's, a snapshot's) and says how many numbers its weights file really holds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Input, Label, Static

from minigpt.errors import ConfigError
from minigpt.models.config import GPTConfig
from minigpt.teaching.explorers import checkpoint_numbers, real_param_count
from minigpt.teaching.params import gpt_breakdown, gpt_total, rule_of_thumb
from minigpt.text import markup_escape
from tui.common.checkpoint_picker import LoadsCheckpoint
from tui.common.header import TutorHeader
from tui.workers import Result, background

FIELDS = (("d", "d_model", "64"), ("L", "n_layers", "4"), ("heads", "n_heads", "4"),
          ("vocab", "vocab_size", "27"), ("context", "block_size", "16"))


class ParamsExplorerScreen(LoadsCheckpoint, Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True, id="explorer_params.back"),
                Binding("g", "gpt2", "GPT-2 small", show=True, id="explorer_params.gpt2"),
                LoadsCheckpoint.MODEL_BINDING,
                Binding("ctrl+r", "count", "Recount", show=True, id="explorer_params.count")]

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Vertical(classes="explorer-body"):
            yield Static("[b]Parameter counter[/b]  edit a field (tab moves), the count updates at once",
                         classes="explorer-text")
            with Horizontal(classes="explorer-row"):
                for label, name, default in FIELDS:
                    yield Label(label)
                    yield Input(default, id=f"p-{name}", type="integer")
            with Horizontal(classes="explorer-row"):
                yield Checkbox("tied embedding/head", id="p-tie")
                yield Checkbox("biases", True, id="p-bias")
            yield Static(id="p-error", classes="explorer-error")
            yield DataTable(id="p-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="p-total", classes="explorer-text")
        yield Footer()

    loaded = None  # (config, numbers in its weights file, folder) of the checkpoint loaded with c

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("component", "formula", "count")
        self._label_checkboxes()
        self.action_count()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.action_count()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self._label_checkboxes()
        self.action_count()

    def _label_checkboxes(self) -> None:
        # The box's glyph looks the same on and off without colour: the label says yes/no.
        for wid, text in (("#p-tie", "tied embedding/head"), ("#p-bias", "biases")):
            box = self.query_one(wid, Checkbox)
            box.label = f"{text}: {'yes' if box.value else 'no'}"

    def config(self) -> GPTConfig:
        values = {}
        for label, name, _ in FIELDS:
            text = self.query_one(f"#p-{name}", Input).value.strip()
            if not text.isdigit():
                raise ConfigError(f"{label} must be a positive whole number, got {text!r}")
            values[name] = int(text)
        values.update(tie_weights=self.query_one("#p-tie", Checkbox).value, bias=self.query_one("#p-bias", Checkbox).value)
        if self.loaded is not None:  # a checkpoint's other options (norm, GQA, FFN, positions) stay
            return dataclasses.replace(self.loaded[0], **values)
        return GPTConfig(**values)

    refusal_at = "#p-error"
    picker_title = "Count a trained model's parameters"

    def model_view(self, path) -> tuple[GPTConfig, int]:
        return checkpoint_numbers(path)  # read from the weights file's header: nothing loaded

    def show_model(self, path, view: tuple[GPTConfig, int]) -> None:
        cfg, numbers = view
        self.loaded = (cfg, numbers, path)
        with self.prevent(Input.Changed, Checkbox.Changed):
            for _, name, _ in FIELDS:
                self.query_one(f"#p-{name}", Input).value = str(getattr(cfg, name))
            self.query_one("#p-tie", Checkbox).value = cfg.tie_weights
            self.query_one("#p-bias", Checkbox).value = cfg.bias
        self._label_checkboxes()
        self.action_count()

    def action_gpt2(self) -> None:
        self.loaded = None
        for (_, name, _), v in zip(FIELDS, ("768", "12", "12", "50257", "1024")):
            self.query_one(f"#p-{name}", Input).value = v
        self.query_one("#p-tie", Checkbox).value = True
        self.query_one("#p-bias", Checkbox).value = True

    def action_count(self) -> None:
        table = self.query_one(DataTable)
        try:
            cfg = self.config()
        except ConfigError as e:
            self.query_one("#p-error", Static).update(f"✗ {e}")  # the old table stays readable
            return
        self.query_one("#p-error", Static).update("")
        table.clear()
        for c in gpt_breakdown(cfg):
            table.add_row(c.name, c.formula, f"{c.count:,}")
        self.total = gpt_total(cfg)
        self.thumb = rule_of_thumb(cfg.n_layers, cfg.d_model)
        self.real = None
        self._show(cfg)
        self.count_real(cfg)

    def _show(self, cfg: GPTConfig) -> None:
        real = "counting…" if self.real is None else f"{self.real:,}"
        same = "" if self.real is None else ("  ✓ equal" if self.real == self.total else "  ✗ differ")
        self.query_one("#p-total", Static).update(
            f"[b]total (by hand)[/b] {self.total:,}   [b]sum(p.numel()) of the real model[/b] {real}{same}\n"
            f"12·L·d² = 12·{cfg.n_layers}·{cfg.d_model}² = {self.thumb:,} "
            f"({self.thumb / self.total:.0%} of the total: it leaves out embeddings, norms and biases)"
            + self._file_line(cfg))

    def _file_line(self, cfg: GPTConfig) -> str:
        """What the loaded checkpoint's file holds, while the fields still describe it."""
        if self.loaded is None or cfg != self.loaded[0]:
            return ""
        numbers, path = self.loaded[1], markup_escape(self.loaded[2])
        same = "✓ equal" if numbers == self.total else "✗ differ"
        return f"\n[b]{path}[/b] holds {numbers:,} learned numbers  {same}"

    @dataclass
    class Counted(Result):
        """``sum(p.numel())`` of a real model built from ``config``."""
        config: GPTConfig
        real: int

    @background(thread=True, exclusive=True, group="count")
    def count_real(self, cfg: GPTConfig) -> Counted:
        return self.Counted(cfg, real_param_count(cfg))

    @on(Counted)
    def _real_done(self, message: Counted) -> None:
        cfg = message.config
        try:
            if cfg != self.config():
                return  # the learner typed on (a newer count, if any, supersedes this one)
        except ConfigError:
            return
        self.real = message.real
        self._show(cfg)
