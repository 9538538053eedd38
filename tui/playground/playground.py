"""Playground: sample names from any trained model, steer them with the sampling controls, and
open the inspectors (step mode, scoring, temperature sweep, model comparison).

Every control is a compact field (type a value, enter applies) and has a pair of nudge keys that
change it and regenerate at once. Loading and sampling run in thread workers so keys answer at
once; the result of a batch that a newer request has overtaken is dropped (tui.workers.Result).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Label, Select, Static

from minigpt import paths
from minigpt.errors import CheckpointError, DatasetError, SamplingError
from minigpt.playground.checkpoint_choices import find_checkpoints
from minigpt.playground.generation import (
    Settings,
    load_for_playground,
    parse_settings,
    run_batch,
    save_names,
)
from minigpt.playground.inspection import is_pretrained, refuse_text_model
from minigpt.text import markup_escape, printable
from tui import navigation
from tui.common.dropdown import Dropdown
from tui.common.header import TutorHeader
from tui.workers import Result, background

WHERE = {"train": "● train", "val": "◐ val", "test": "◑ test", "new": "★ new"}
TEMPERATURE_STEP, TOP_P_STEP = 0.1, 0.05
COUNTS = (1, 5, 10, 20, 50, 100, 200)
PRETRAINED_COUNTS = ("1", "4", "8", "16")  # continuations of a pretrained model at once (its bound: 16)


class PlaygroundScreen(Screen):
    PALETTE_PREFIX = "Playground"
    BINDINGS = [
        Binding("escape", "back", "Back", show=False, id="playground.back"),
        Binding("r", "regenerate", "Regenerate", show=True, id="playground.regenerate"),
        Binding("i", "step", "Step", show=True, id="playground.step"),
        Binding("o", "score", "Score", show=True, id="playground.score"),
        Binding("w", "sweep", "Sweep", show=True, id="playground.sweep"),
        Binding("c", "compare", "Compare", show=True, id="playground.compare"),
        Binding("y", "copy", "Copy", show=False, id="playground.copy"),
        Binding("e", "save", "Save", show=False, id="playground.save"),
        Binding("t", "nudge('temperature', -1)", "Temperature −0.1", show=False, id="playground.temperature_down"),
        Binding("T", "nudge('temperature', 1)", "Temperature +0.1", show=False, id="playground.temperature_up"),
        Binding("k", "nudge('top_k', -1)", "Top-k −1 (2 → off)", show=False, id="playground.top_k_down"),
        Binding("K", "nudge('top_k', 1)", "Top-k +1 (off → 2)", show=False, id="playground.top_k_up"),
        Binding("p", "nudge('top_p', -1)", "Top-p −0.05", show=False, id="playground.top_p_down"),
        Binding("P", "nudge('top_p', 1)", "Top-p +0.05 (1 → off)", show=False, id="playground.top_p_up"),
        Binding("n", "nudge('n', -1)", "Fewer names", show=False, id="playground.n_down"),
        Binding("N", "nudge('n', 1)", "More names", show=False, id="playground.n_up"),
        Binding("s", "nudge('seed', -1)", "Seed −1", show=False, id="playground.seed_down"),
        Binding("S", "nudge('seed', 1)", "Seed +1", show=False, id="playground.seed_up"),
        Binding("l", "nudge('max_len', -1)", "Max length −1", show=False, id="playground.max_len_down"),
        Binding("L", "nudge('max_len', 1)", "Max length +1 (limit → off)", show=False, id="playground.max_len_up"),
        Binding("m", "models", "Choose the model", show=False, id="playground.models"),
        Binding("f", "focus_prefix", "Edit the prefix", show=False, id="playground.focus_prefix"),
    ]

    def __init__(self, checkpoints_dir=None, runs_root=None):
        super().__init__()
        self.choices = find_checkpoints(checkpoints_dir, runs_root, pretrained=True)
        self.settings = Settings()
        self.loaded = None
        self.batch = None
        # Start on the shipped model, else the first MiniGPT: the model the course is about.
        gpts = [i for i, c in enumerate(self.choices) if c.kind == "gpt"]
        self.current = None  # index of the checkpoint loaded (or loading)
        self.initial = 0 if not self.choices or self.choices[0].source == "bundled" or not gpts else gpts[0]

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        s = self.settings
        yield TutorHeader()
        with Horizontal(classes="pg-row"):
            yield Label("model", classes="pg-label")
            yield Dropdown([(markup_escape(c.label), i) for i, c in enumerate(self.choices)], prompt="no checkpoint",
                         allow_blank=not self.choices, value=self.initial if self.choices else Select.NULL,
                         compact=True, id="pg-model")
            yield Label("names", classes="pg-label")
            yield Input(str(s.n), compact=True, id="pg-n", classes="pg-num")
            yield Label("T", classes="pg-label")
            yield Input(f"{s.temperature:g}", compact=True, id="pg-temperature", classes="pg-num")
        with Horizontal(classes="pg-row"):
            yield Label("top-k", classes="pg-label")
            yield Input("off", compact=True, id="pg-top_k", classes="pg-num")
            yield Label("top-p", classes="pg-label")
            yield Input("off", compact=True, id="pg-top_p", classes="pg-num")
            yield Label("prefix", classes="pg-label")
            yield Input("", placeholder="none", compact=True, id="pg-prefix")
            yield Label("seed", classes="pg-label")
            yield Input(str(s.seed), compact=True, id="pg-seed", classes="pg-num")
            yield Label("max", classes="pg-label")
            yield Input("off", compact=True, id="pg-max_len", classes="pg-num")
        # One line at 80 columns; enter (apply a typed value), y (copy) and e (save) are in ? help.
        yield Static("[b]−/+[/b]: [b]t/T[/b] temp [b]k/K[/b] top-k [b]p/P[/b] top-p [b]n/N[/b] count "
                     "[b]s/S[/b] seed [b]l/L[/b] max · [b]m[/b] models", id="pg-hint")
        yield Static("", id="pg-message")
        yield DataTable(id="pg-names", cursor_type="row", zebra_stripes=True)
        yield Static("", id="pg-summary")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#pg-names", DataTable)
        table.add_columns(*self.COLUMNS)
        table.focus()
        if not self.choices:
            self.show_message(
                f"⚠ No checkpoint found. The shipped model belongs in {paths.default_checkpoint()}; "
                "train one with `minigpt train` and it appears here.", error=True)
            return
        self.load_choice(self.initial)

    # -- messages -------------------------------------------------------------------------------
    def show_message(self, text: str, error: bool = False) -> None:
        msg = self.query_one("#pg-message", Static)
        msg.update(text)
        msg.set_class(error, "-error")

    # -- loading and generating -----------------------------------------------------------------
    def load_choice(self, index: int) -> None:
        self.current = index
        self.loaded = None
        self.show_message(f"Loading {markup_escape(self.choices[index].label)}…")
        self._load(index)

    @dataclass
    class Loaded(Result):
        """The model loaded for the playground, or why it could not be (``error``)."""
        loaded: object = None
        error: str = ""

    @dataclass
    class Sampled(Result):
        """A batch of names, or why sampling refused the settings (``error``)."""
        batch: object = None
        settings: Settings | None = None
        error: str = ""

    @background(thread=True, exclusive=True, group="load")
    def _load(self, index: int) -> Loaded:
        choice = self.choices[index]
        try:
            return self.Loaded(load_for_playground(choice.path))
        except (CheckpointError, DatasetError, OSError) as e:
            return self.Loaded(error=f"⚠ Cannot load {markup_escape(choice.label)}: {markup_escape(e)}")

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.error:
            self.show_message(message.error, error=True)
            return
        self.loaded = loaded = message.loaded
        self.refresh_bindings()  # step and score leave the footer for a text model
        count = self.query_one("#pg-n", Input)
        if loaded.kind == "gpt" and hasattr(loaded.checkpoint, "check_continuation") and count.value.strip() not in PRETRAINED_COUNTS:
            count.value = PRETRAINED_COUNTS[1]  # GPT-2 on a CPU: a few continuations, not fifty names
        self.show_message(markup_escape(loaded.dataset_note or ""), error=bool(loaded.dataset_note))
        # Use what the fields say; if one is invalid its message stays and the last valid
        # settings sample the new model, so the table never mixes two models.
        if not self.apply_fields():
            self.regenerate()

    def regenerate(self) -> None:
        if self.loaded is None:
            return
        self._generate(self.loaded, replace(self.settings))

    @background(thread=True, exclusive=True, group="generate")
    def _generate(self, loaded, settings: Settings) -> Sampled:
        try:
            return self.Sampled(run_batch(loaded, settings), settings)
        except SamplingError as e:
            return self.Sampled(error=markup_escape(e))

    @on(Sampled)
    def _show_batch(self, message: Sampled) -> None:
        """A newer request's batch replaces the table; an older one never arrives (Result.is_stale)."""
        if message.error:
            self.show_message(f"⚠ {message.error}", error=True)
            return
        batch, settings = message.batch, message.settings
        self.batch = batch
        table = self.query_one("#pg-names", DataTable)
        row = table.cursor_row
        # log p is the model's own (T = 1, nothing filtered); when the settings reshape the
        # distribution, a second column gives it as sampled (top-k 1: 0.00 for every name).
        filtered = batch.summary.filtered
        unit = "token" if is_pretrained(self.loaded) else "char"  # GPT-2's log p is per BPE token
        columns = (*self.COLUMNS[:-1], f"per {unit}") + (("as sampled",) if filtered else ())
        if [str(c.label) for c in table.columns.values()] != list(columns):
            table.clear(columns=True)
            table.add_columns(*columns)
        else:
            table.clear()
        model_lp = batch.model_logprob or [s.logprob for s in batch.samples]
        for i, (s, lp) in enumerate(zip(batch.samples, model_lp), start=1):
            name = s.text if s.finished else f"{s.text}…"
            where = WHERE.get(s.membership, s.membership) if self.loaded.dataset is not None else "?"
            cells = [str(i), Text(printable(name or "(empty)")), where, f"{lp:.2f}", f"{lp / max(s.n_tokens, 1):.2f}"]
            if filtered:
                cells.append(f"{s.logprob:.2f}")
            table.add_row(*cells, key=str(i))
        if batch.samples:
            table.move_cursor(row=min(row, len(batch.samples) - 1))
        self.query_one("#pg-summary", Static).update(
            f"{batch.summary.line(unit)} · {batch.seconds * 1000:.0f} ms\n"
            f"[$text-muted]{markup_escape(settings.describe())}[/]")
        if not self.loaded.dataset_note and not self.query(".-invalid"):
            self.show_message("")

    # -- controls -------------------------------------------------------------------------------
    FIELDS = ("n", "temperature", "top_k", "top_p", "prefix", "seed", "max_len")
    COLUMNS = ("#", "name", "where", "log p", "per char")

    def _fields(self) -> dict[str, str]:
        return {f: self.query_one(f"#pg-{f}", Input).value for f in self.FIELDS}

    def _write_fields(self, s: Settings) -> None:
        values = {"n": str(s.n), "temperature": f"{s.temperature:g}",
                  "top_k": "off" if s.top_k is None else str(s.top_k),
                  "top_p": "off" if s.top_p is None else f"{s.top_p:g}", "prefix": s.prefix,
                  "seed": str(s.seed), "max_len": "off" if s.max_len is None else str(s.max_len)}
        for f, v in values.items():
            inp = self.query_one(f"#pg-{f}", Input)
            inp.value = v
            inp.remove_class("-invalid")

    def apply_fields(self) -> bool:
        """Read every field; on a bad value show why, mark nothing lost, keep the old names."""
        for inp in self.query(Input):
            inp.remove_class("-invalid")
        try:
            self.settings = parse_settings(self._fields(), self.loaded.vocab if self.loaded else None)
        except SamplingError as e:
            text = str(e)
            for f in self.FIELDS:
                label = {"n": "names", "top_k": "top-k", "top_p": "top-p", "max_len": "max length"}.get(f, f)
                if text.startswith(label):
                    self.query_one(f"#pg-{f}", Input).add_class("-invalid")
            self.show_message(f"⚠ {markup_escape(text)}", error=True)
            return False
        self.regenerate()
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.apply_fields():
            self.query_one("#pg-names", DataTable).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, int) and self.choices and event.value != self.current:
            self.load_choice(event.value)

    def action_nudge(self, field: str, direction: int) -> None:
        s = replace(self.settings)
        block = self.loaded.model.config.block_size - 1 if self.loaded else 15
        if field == "temperature":
            s.temperature = max(0.1, round(s.temperature + direction * TEMPERATURE_STEP, 2))
        elif field == "top_k":
            # off → 2 → 3 …: top-k 1 is greedy (every name the same), a jump no nudge should make;
            # typing 1 in the field still gives it. The whole vocabulary is off again.
            vocab = self.loaded.vocab.size if self.loaded else 27
            k = (s.top_k or 1) + direction
            s.top_k = None if k < 2 or k >= vocab else k
        elif field == "top_p":
            p = round((s.top_p or 1.0) + direction * TOP_P_STEP, 2)
            s.top_p = None if p >= 1 else max(TOP_P_STEP, p)
        elif field == "n":
            bigger = [c for c in COUNTS if c > s.n]
            smaller = [c for c in COUNTS if c < s.n]
            s.n = (bigger[0] if bigger else s.n) if direction > 0 else (smaller[-1] if smaller else s.n)
        elif field == "seed":
            s.seed += direction
        elif field == "max_len":
            m = (s.max_len if s.max_len is not None else block) + direction
            s.max_len = None if m >= block else max(1, len(s.prefix), m)  # the model's limit = off
        self.settings = s
        self._write_fields(s)
        self.regenerate()

    def action_models(self) -> None:
        """Open the list of models (trained runs and the shipped one); enter loads the chosen one."""
        if not self.choices:
            self.notify("No model to choose from: finished training runs appear here.")
            return
        select = self.query_one("#pg-model", Dropdown)
        select.focus()
        select.action_show_overlay()

    def action_focus_prefix(self) -> None:
        self.query_one("#pg-prefix", Input).focus()

    def action_regenerate(self) -> None:
        self.apply_fields()

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#pg-names", DataTable).focus()
        else:
            self.app.pop_screen()

    # -- inspectors -----------------------------------------------------------------------------
    def _ready(self, what: str | None = None) -> bool:
        """A model is loaded (and, for ``what`` = step mode or scoring, one that makes names)."""
        if self.loaded is None:
            self.notify("The model is still loading (or could not be loaded).", severity="warning")
            return False
        if what is not None:
            try:
                refuse_text_model(self.loaded, what)
            except SamplingError as e:
                self.notify(markup_escape(e), severity="warning")
                return False
        return True

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # A text model has no names to step through or score: those keys leave the footer, help and
        # palette (dimmed ones did nothing when pressed, with nothing said); the model line explains.
        if action == "score" and self.loaded is not None and is_pretrained(self.loaded):
            return True  # GPT-2 scores a typed text token by token (its per-token surprise)
        if action in ("step", "score") and self.loaded is not None and self.loaded.is_text:
            return False
        return True

    def highlighted_name(self) -> str:
        if not self.batch or not self.batch.samples:
            return ""
        row = self.query_one("#pg-names", DataTable).cursor_row
        return self.batch.samples[min(max(row, 0), len(self.batch.samples) - 1)].text

    def action_step(self) -> None:
        if self._ready("Step mode"):
            navigation.open_screen(self.app, "playground.step", self.loaded, replace(self.settings))

    def action_score(self) -> None:
        if self._ready(None if self.loaded is not None and is_pretrained(self.loaded) else "Scoring"):
            navigation.open_screen(self.app, "playground.score", self.loaded, self.highlighted_name())

    def action_sweep(self) -> None:
        if self._ready():
            navigation.open_screen(self.app, "playground.sweep", self.loaded, replace(self.settings))

    def action_compare(self) -> None:
        if self._ready():
            current = self.choices[self.current] if self.current is not None else None
            navigation.open_screen(self.app, "playground.compare", self.choices, self.loaded, replace(self.settings),
                                   current=current)

    def action_copy(self) -> None:
        if not self.batch:
            self.notify("Nothing to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard("\n".join(s.text for s in self.batch.samples))
        self.notify(f"Copied {len(self.batch.samples)} names to the clipboard (OSC 52; if your "
                    "terminal blocks it, press e to save them to a file).")

    def action_save(self) -> None:
        if not self.batch:
            self.notify("Nothing to save yet.", severity="warning")
            return
        select = self.query_one("#pg-model", Select)
        source = self.choices[select.value].label if isinstance(select.value, int) else "?"
        try:
            path = save_names(self.batch.samples, self.settings, source)
        except OSError as e:
            self.notify(f"Could not save the names: {markup_escape(e)}", severity="error")
            return
        self.notify(f"Saved {len(self.batch.samples)} names to {markup_escape(path)}", timeout=8)
