"""The new-run form: model, sizes, optimisation, budget, device, seed, dataset, with presets.

Validation is the library's (minigpt.control.workers.config_from_form → TrainConfig / load_words): an
impossible combination is refused here, with the reason and the field marked, before anything
starts. A valid form posts ``TrainingForm.Submitted`` with the TrainConfig.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from minigpt.control import form as run_form
from minigpt.control import workers as rc
from minigpt.training.options import TrainConfig

# (field, label, hint shown as placeholder)
TEXT_FIELDS = [
    ("d_model", "d_model", "width, e.g. 64"),
    ("n_heads", "heads", "divides d_model"),
    ("n_layers", "layers", "blocks"),
    ("block_size", "block size", "auto"),
    ("dropout", "dropout", "auto"),
    ("batch_size", "batch size", "names/step"),
    ("lr", "learning rate", "e.g. 5e-3"),
    ("warmup", "warmup", "<1 fraction, ≥1 steps"),
    ("budget", "budget", "steps or seconds"),
    ("eval_interval", "eval every", "steps"),
    ("seed", "seed", "whole number"),
]
MODELS = [("GPT (MiniGPT)", "gpt"), ("MLP (Day 2)", "mlp"), ("Bigram (counts)", "bigram")]
PRESET_NAMES = [("course: d=64, 4 heads, 4 layers", "course"), ("tiny: d=16, 1 layer", "tiny"),
                ("large: d=128, 8 heads, 6 layers", "large")]


class TrainingForm(Vertical):
    class Submitted(Message):
        def __init__(self, config: TrainConfig):
            super().__init__()
            self.config = config

    def __init__(self, settings: TrainConfig | None = None, **kwargs):
        super().__init__(**kwargs)
        self._initial = run_form.form_from_config(settings or run_form.preset_config("course"))

    def compose(self) -> ComposeResult:
        yield Static("[b]New training run[/b]  fill in, then [b]ctrl+s[/b] starts it in a background process",
                     id="form-title")
        with Grid(id="form-grid"):
            yield Label("preset")
            yield Select(PRESET_NAMES, prompt="apply a preset…", id="f-preset", compact=True)
            yield Label("model")
            yield Select(MODELS, allow_blank=False, id="f-model", compact=True)
            for name, label, hint in TEXT_FIELDS:
                if name == "budget":
                    yield Label("budget in")
                    yield Select([("steps", "steps"), ("seconds", "time")], allow_blank=False,
                                 id="f-budget_kind", compact=True)
                yield Label(label)
                yield Input(placeholder=hint, id=f"f-{name}", compact=True)
            yield Label("device")
            yield Select([(d, d) for d in run_form.available_devices()], allow_blank=False, id="f-device", compact=True)
        with Grid(id="form-data-row"):
            yield Label("dataset")
            yield Input(placeholder="embedded, or a path to a text file (one name per line)", id="f-data",
                        compact=True)
        yield Static(id="form-error")

    def on_mount(self) -> None:
        self.fill(self._initial)
        self.query_one("#form-error", Static).display = False

    def fill(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            widget = self.query_one(f"#f-{name}")
            widget.value = value
        self.clear_error()

    def values(self) -> dict[str, str]:
        out = {name: self.query_one(f"#f-{name}", Input).value for name, _, _ in TEXT_FIELDS}
        out["data"] = self.query_one("#f-data", Input).value
        for name in ("model", "budget_kind", "device"):
            out[name] = self.query_one(f"#f-{name}", Select).value
        return out

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "f-preset" and event.value is not Select.NULL:
            values = run_form.form_from_config(run_form.preset_config(event.value))
            values["device"] = self.query_one("#f-device", Select).value  # a preset keeps the device
            values["data"] = self.query_one("#f-data", Input).value or "embedded"
            self.fill(values)
            self.app.notify(f"Preset {event.value} applied")

    def validate(self) -> TrainConfig | None:
        """The config if the form is valid; otherwise show why and mark the field."""
        try:
            cfg = run_form.config_from_form(self.values())
        except run_form.FormError as e:
            self.show_error(e.field, str(e))
            return None
        self.clear_error()
        return cfg

    def submit(self) -> None:
        cfg = self.validate()
        if cfg is not None:
            self.post_message(self.Submitted(cfg))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.submit()

    def show_error(self, field: str, message: str) -> None:
        from rich.markup import escape

        for w in self.query(".-invalid"):
            w.remove_class("-invalid")
        widgets = list(self.query(f"#f-{field}"))
        if widgets:
            widgets[0].add_class("-invalid")
            widgets[0].focus()
        error = self.query_one("#form-error", Static)
        error.update(f"[b]✗ Not started:[/b] {escape(message)}")
        error.display = True

    def clear_error(self) -> None:
        for w in self.query(".-invalid"):
            w.remove_class("-invalid")
        error = self.query_one("#form-error", Static)
        error.update("")
        error.display = False

    @property
    def error_text(self) -> str:
        return str(self.query_one("#form-error", Static).render())
