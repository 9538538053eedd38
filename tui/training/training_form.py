"""The new-run form, generated from the training options (``minigpt.training.options.OPTIONS``).

One field per option, common ones first and the rest under an "advanced" fold; options that do
not apply to the chosen model kind are hidden; the focused field's help and default show under
the form. Alternatives (the budget: steps or seconds) share one field with a chooser. Text in and
out and every check are the headless form's (``minigpt.control.form``): an impossible value is
refused with the reason and its field marked (the error's ``field``), before anything starts.

Enter moves to the next field; only ctrl+s or the Start button submit, and a valid form posts
``TrainingForm.Submitted`` with the TrainConfig (the screen then asks for confirmation).
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Input, Label, Select, Static
from textual.widgets._select import SelectOverlay  # its UpdateSelection: an option was chosen

from minigpt import serving_policy
from minigpt.control import form
from minigpt.errors import ConfigError, PolicyRefusal
from minigpt.text import markup_escape as escape
from minigpt.training.options import OPTIONS_BY_NAME, Option, TrainConfig
from tui.common.dropdown import Dropdown

PRESET_NAMES = [("course: d=64, 4 heads, 4 layers", "course"), ("tiny: d=16, 1 layer", "tiny"),
                ("large: d=128, 8 heads, 6 layers", "large"),
                ("induction: 2 attention-only layers", "induction")]


class FormSelect(Dropdown):
    """The form's dropdown: enter or space opens the list (the footer says so); a choice made
    there moves on to the next field, as enter does in a text field."""

    @on(SelectOverlay.UpdateSelection)
    def _chosen(self, _event) -> None:
        """Enter on an option (chosen, changed or not): on to the next field once Select has put
        the focus back here. Escape closes the list and stays."""
        self.call_after_refresh(self.screen.focus_next)


class AdvancedFold(Collapsible, inherit_css=False):
    """The advanced options' fold: Textual's Collapsible, tinted while the focus is inside it.

    Collapsible tints itself with a ``:focus-within`` rule, and Textual restyles every widget
    under a ``:focus-within`` node on each focus move inside it: with ~180 widgets in this fold,
    every Enter between advanced fields restyled all of them (most of a keypress's time). Here the
    same tint comes from a class set only when the focus enters or leaves the fold.
    ``inherit_css=False`` keeps Collapsible's own rules (the one with ``:focus-within``) off it;
    the rest of them are repeated below."""

    DEFAULT_CSS = """
    AdvancedFold {
        width: 1fr;
        height: auto;
        background: $surface;
        border-top: hkey $background;
        padding-bottom: 1;
        padding-left: 1;

        &.-focus-inside {
            background-tint: $foreground 5%;
        }

        &.-collapsed > Contents {
            display: none;
        }
        &:ansi {
            border-top: hkey ansi_blue;
            background: $panel;
        }
    }
    """

    def on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        self.add_class("-focus-inside")

    def on_descendant_blur(self, _event: events.DescendantBlur) -> None:
        focused = self.screen.focused
        if focused is None or self not in focused.ancestors:
            self.remove_class("-focus-inside")


def field_key(opt: Option) -> str:
    """The form field an option is edited in: its own, or its group's (alternatives share one)."""
    return opt.one_of or opt.name


def _wide(opt: Option) -> bool:
    return opt.kind is str and opt.choices is None  # free text (a path) gets a row of its own


class TrainingForm(Vertical):
    class Submitted(Message):
        def __init__(self, config: TrainConfig):
            super().__init__()
            self.config = config

    def __init__(self, settings: TrainConfig | None = None, **kwargs):
        super().__init__(**kwargs)
        self._initial = form.form_from_config(settings or form.preset_config("course"))
        self._devices = form.available_devices()

    # -- building ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("[b]New training run[/b]   [b]enter[/b] next field · [b]ctrl+s[/b] start (asks first)",
                     id="form-title")
        common, advanced = form.COMMON_OPTIONS, form.ADVANCED_OPTIONS
        with VerticalScroll(id="form-fields"):
            yield from self._sections(common, advanced)
        yield Static(id="form-help")  # under the scrolling fields: always in view
        yield Static(id="form-error")

    def _sections(self, common: tuple[Option, ...], advanced: tuple[Option, ...]) -> ComposeResult:
        with Grid(classes="form-grid", id="form-common"):
            yield Label("preset", id="l-preset")
            yield FormSelect(PRESET_NAMES, prompt="apply a preset…", id="f-preset", compact=True)
            yield from self._fields([o for o in common if not _wide(o)])
        with Grid(classes="form-wide"):
            yield from self._fields([o for o in common if _wide(o)])
        labels = ", ".join(o.label for o in advanced)
        with AdvancedFold(title=f"advanced: {labels[:56]}…" if len(labels) > 57 else f"advanced: {labels}",
                         id="form-advanced"):
            with Grid(classes="form-grid"):
                yield from self._fields([o for o in advanced if not _wide(o)])
            with Grid(classes="form-wide"):
                yield from self._fields([o for o in advanced if _wide(o)])
        with Horizontal(id="form-buttons"):
            yield Button("Start… (ctrl+s)", id="form-start", compact=True)

    def _fields(self, options: list[Option]) -> ComposeResult:
        done: set[str] = set()
        for opt in options:
            key = field_key(opt)
            if key in done:
                continue
            done.add(key)
            yield Label(key.replace("_", " ") if opt.one_of else opt.label, id=f"l-{key}")
            if opt.one_of:
                members = [o for o in options if o.one_of == opt.one_of]
                with Horizontal(id=f"f-{key}-row", classes="form-pair"):
                    yield FormSelect([(o.label, o.name) for o in members], allow_blank=False,
                                     id=f"f-{key}-kind", compact=True,
                                     tooltip=" / ".join(o.help for o in members))
                    yield Input(id=f"f-{key}", compact=True, tooltip=opt.help)
            elif opt.kind is bool or opt.choices is not None:
                choices = ("on", "off") if opt.kind is bool else opt.choices
                yield FormSelect([(self._choice_label(opt, c), c) for c in choices],
                                 allow_blank=opt.optional, id=f"f-{key}", compact=True, tooltip=opt.help)
            else:
                yield Input(placeholder=opt.placeholder, id=f"f-{key}", compact=True, tooltip=opt.help)

    def _choice_label(self, opt: Option, choice: str) -> str:
        if opt.name == "device" and choice not in self._devices:
            return f"{choice} (not here)"
        return choice

    def on_mount(self) -> None:
        self.fill(self._initial)

    # -- values in and out ---------------------------------------------------------------------
    def fill(self, values: dict[str, str]) -> None:
        """Show ``values`` (texts keyed by option name, as ``minigpt.control.form`` writes them)."""
        for name, text in values.items():
            opt = OPTIONS_BY_NAME[name]
            if opt.one_of:
                members = [o.name for o in OPTIONS_BY_NAME.values() if o.one_of == opt.one_of]
                chosen = next((m for m in members if values.get(m)), members[0])
                if name == chosen:
                    self.query_one(f"#f-{opt.one_of}-kind", Select).value = name
                    self.query_one(f"#f-{opt.one_of}", Input).value = text
                continue
            widget = self.query_one(f"#f-{name}")
            if isinstance(widget, Select):
                widget.value = text if text else Select.NULL
            else:
                widget.value = text
        self._show_applicable()
        self.clear_error()

    def values(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for opt in form.FORM_OPTIONS:
            if opt.one_of:
                chosen = self.query_one(f"#f-{opt.one_of}-kind", Select).value
                out[opt.name] = self.query_one(f"#f-{opt.one_of}", Input).value if chosen == opt.name else ""
                continue
            widget = self.query_one(f"#f-{opt.name}")
            value = widget.value
            out[opt.name] = "" if value is Select.NULL else str(value)
        return out

    def _show_applicable(self) -> None:
        """Hide the fields of options that do nothing for the chosen model kind."""
        model = self.query_one("#f-model", Select).value
        for opt in form.FORM_OPTIONS:
            shown = opt.applies_to(model) if isinstance(model, str) else True
            key = field_key(opt)
            for selector in (f"#l-{key}", f"#f-{key}-row" if opt.one_of else f"#f-{key}"):
                self.query_one(selector).display = shown

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "f-preset" and event.value is not Select.NULL:
            self.fill(form.apply_preset(self.values(), str(event.value)))
            self.app.notify(f"Preset {event.value} applied")
        elif event.select.id == "f-model":
            self._show_applicable()

    # -- keys ----------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.focus_next()  # Enter never starts a run: it moves on, as in any form

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "form-start":
            event.stop()
            self.submit()

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        """Opening the fold from the keyboard goes on to its first field (Enter keeps moving on)."""
        if self.app.focused is not None and event.collapsible in self.app.focused.ancestors:
            first = next((w for w in event.collapsible.query("Input, Select") if w.display), None)
            if first is not None:
                self.call_after_refresh(first.focus)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        key = self._key_of(event.widget)
        for label in self.query("Label.-focused"):
            label.remove_class("-focused")
        help_line = self.query_one("#form-help", Static)
        if key is not None:
            self.query_one(f"#l-{key}").add_class("-focused")
            help_line.update(self._help_for(key))
        elif event.widget.id == "form-start":
            help_line.update("Checks every field, then shows what will start and asks before it starts.")
        else:
            help_line.update("The other options: positions, weight tying, the optimiser, the weight average, "
                             "packing, … (enter opens them)")

    def _key_of(self, widget: Widget | None) -> str | None:
        """The field key of a form widget (or of the widget inside it that has focus)."""
        while widget is not None and widget is not self:
            wid = widget.id or ""
            if wid.startswith("f-"):
                key = wid[2:].removesuffix("-kind").removesuffix("-row")
                return key if self.query(f"#l-{key}") else None
            widget = widget.parent
        return None

    def _help_for(self, key: str) -> str:
        if key == "preset":
            return "A preset fills every field (device and dataset stay as they are)."
        members = [o for o in form.FORM_OPTIONS if field_key(o) == key]
        if len(members) > 1:
            chosen = self.query_one(f"#f-{key}-kind", Select).value
            members = [o for o in members if o.name == chosen] or members
        opt = members[0]
        kinds = "" if len(opt.models) == 3 else f" ({', '.join(opt.models)} only)"
        return escape(f"{opt.label}: {opt.help}{kinds} Default: {opt.default_text}.")

    # -- validation ----------------------------------------------------------------------------
    def validate(self) -> TrainConfig | None:
        """The config if the form is valid; otherwise show why and mark the field."""
        values = self.values()
        try:
            data = values.get("data", "").strip()
            if data and data != form.EMBEDDED:
                serving_policy.check_path(data)  # served to a browser: before the form reads the file
        except PolicyRefusal as e:
            self.show_error("data", str(e))
            return None
        try:
            cfg = form.config_from_form(values)
        except ConfigError as e:
            self.show_error(e.field, str(e))
            return None
        self.clear_error()
        return cfg

    def submit(self) -> None:
        cfg = self.validate()
        if cfg is not None:
            self.post_message(self.Submitted(cfg))

    def field_widget(self, field: str | None) -> Widget | None:
        """The widget that edits option ``field`` (None if there is none)."""
        opt = OPTIONS_BY_NAME.get(field or "")
        if opt is None:
            return None
        found = list(self.query(f"#f-{field_key(opt)}"))
        return found[0] if found else None

    def show_error(self, field: str | None, message: str) -> None:
        for w in self.query(".-invalid"):
            w.remove_class("-invalid")
        widget = self.field_widget(field)
        if widget is not None:
            widget.add_class("-invalid")
            if OPTIONS_BY_NAME[field].advanced:
                self.query_one("#form-advanced", Collapsible).collapsed = False
            if widget.display:
                self.call_after_refresh(widget.focus)
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

    def focus_first(self) -> None:
        """Focus the first field a learner types into (d_model for MiniGPT)."""
        first = next((w for w in self.query(Input) if w.display and w.parent.display), None)
        if first is not None:
            first.focus()
