"""Training: the new-run form and the live panel of one run, on one screen.

The form starts ``minigpt train`` as a background process (minigpt.control.run_processes.start_run); the
panel then follows that run folder. Quitting the app leaves the worker training: reopening the
area (or ``minigpt watch``) attaches to it again.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer

from minigpt import serving_policy
from minigpt.control import form as run_form
from minigpt.control import run_processes
from minigpt.errors import ConfigError, DatasetError, PolicyRefusal, RunControlError
from minigpt.runs import listing
from minigpt.runs.schema import RunState
from minigpt.text import markup_escape
from minigpt.training.options import TrainConfig
from tui import navigation
from tui.common.confirm import StartRunScreen
from tui.common.header import TutorHeader
from tui.training.training_form import TrainingForm
from tui.training.training_panel import RunPanel
from tui.workers import run_guarded

FORM_ACTIONS = {"start", "runs_from_form", "back", "fill"}
# Single letters that work on the form too while no field has the cursor (the screen opens so):
# in a field they are typed.
UNFOCUSED_FORM_ACTIONS = {"runs", "compare"}
PANEL_ACTIONS = {"stop", "resume", "new_run", "duplicate", "runs", "compare", "back", "inside", "cursor", "scrub",
                 "attention", "diagnosis_lesson"}


class TrainingScreen(Screen):
    AUTO_FOCUS = ""  # nothing focused at first (None would mean the app's "*": the form's scroll area)
    BINDINGS = [
        Binding("ctrl+s", "start", "Start training", show=True, priority=True, id="training.start"),
        Binding("s", "stop", "Stop", show=True, id="training.stop"),
        Binding("r", "resume", "Resume", show=True, id="training.resume"),
        Binding("n", "new_run", "New", show=True, id="training.new_run"),
        Binding("c", "duplicate", "Copy settings", show=False, id="training.duplicate"),  # in the palette: the footer is full
        Binding("l", "runs", "Runs", show=True, id="training.runs"),
        Binding("ctrl+o", "runs_from_form", "Runs", show=True, id="training.runs_from_form"),
        # The form opens with no field focused, so l and v work; enter (or tab) starts filling it in.
        Binding("enter", "fill", "Fill in", show=True, id="training.fill"),
        # In the palette and the runs list (l): with s Stop a running run's footer cut "? Help" at 80.
        Binding("v", "compare", "Compare", show=False, id="training.compare"),
        Binding("i", "inside", "Inside", show=True, id="training.inside"),
        Binding("[", "scrub(-1)", "Step", show=True, key_display="[ ]", id="training.earlier"),
        Binding("]", "scrub(1)", "Later", show=False, id="training.later"),
        # The trained heads at the step shown (the scrubbed snapshot, or the latest): the units
        # line names the key while scrubbing; the footer has no room left at 80 columns.
        Binding("a", "attention", "Attention", show=False, id="training.attention"),
        Binding("d", "diagnosis_lesson", "Lesson", show=True, id="training.diagnosis_lesson"),
        Binding("left", "cursor(0, -1)", "Char", show=False, id="training.left"),
        Binding("right", "cursor(0, 1)", "Char", show=False, id="training.right"),
        Binding("up", "cursor(-1, 0)", "Item", show=False, id="training.up"),
        Binding("down", "cursor(1, 0)", "Item", show=False, id="training.down"),
        Binding("escape", "back", "Back", show=True, id="training.back"),
    ]

    def __init__(self, run_dir: Path | str | None = None, settings: TrainConfig | None = None,
                 new: bool = False):
        """Watch ``run_dir``, or fill the form with ``settings``; with neither (the area opened
        from home), watch the run in progress if there is one, unless ``new`` asks for the form."""
        super().__init__()
        if run_dir is None and settings is None and not new:
            running = next((r for r in listing.list_runs() if r.status == RunState.RUNNING), None)
            run_dir = running.path if running else None
        self._run_dir = Path(run_dir) if run_dir is not None else None
        self._settings = settings
        self.mode = "panel" if self._run_dir is not None else "form"

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with ContentSwitcher(initial=self.mode, id="training-switcher"):
            with Container(id="form"):
                yield TrainingForm(self._settings, id="training-form")
            yield RunPanel(self._run_dir, id="panel")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Training"  # no field focused (AUTO_FOCUS): letters are keys until enter or tab

    @property
    def form(self) -> TrainingForm:
        return self.query_one(TrainingForm)

    @property
    def panel(self) -> RunPanel:
        return self.query_one(RunPanel)

    # -- modes ----------------------------------------------------------------------------------
    def _set_mode(self, mode: str) -> None:
        self.mode = mode
        self.query_one(ContentSwitcher).current = mode
        if mode == "form":
            self.form.focus_first()
        else:
            self.set_focus(None)
        self.refresh_bindings()

    def show_form(self, settings: TrainConfig | None = None) -> None:
        """Open the new-run form, filled with ``settings`` when given (from the runs list, a copy)."""
        if settings is not None:
            self.form.fill(run_form.form_from_config(settings))
        self._set_mode("form")

    def show_run(self, run_dir: Path) -> None:
        """Follow ``run_dir`` in the panel (from the runs list, a launch, or ``minigpt watch``)."""
        self.panel.follow(Path(run_dir))
        self._set_mode("panel")

    def check_action(self, action: str, parameters) -> bool | None:
        allowed = FORM_ACTIONS if self.mode == "form" else PANEL_ACTIONS
        if self.mode == "form" and (action in UNFOCUSED_FORM_ACTIONS or action == "fill"):
            return self.focused is None
        if self.mode == "form" and action == "runs_from_form":
            return self.focused is not None  # unfocused, l does it
        if action not in allowed and action in FORM_ACTIONS | PANEL_ACTIONS:
            return False
        if self.mode == "panel" and action == "cursor":
            return self.panel.view == "surprise"
        if self.mode == "panel" and action == "diagnosis_lesson":
            return bool(self.panel.symptoms)  # shown only while there is a symptom to read about
        if self.mode == "panel" and action in ("stop", "resume", "duplicate"):
            state, run_dir = self.panel.state, self.panel.run_dir
            if run_dir is None:
                return False
            if state is None:
                return action == "duplicate"
            return getattr(run_processes.run_actions(state.status, run_dir), action) and not (
                action == "stop" and self.panel.stopping)
        return True

    def on_screen_resume(self) -> None:
        self.refresh_bindings()

    # -- actions --------------------------------------------------------------------------------
    def action_start(self) -> None:
        self.form.submit()

    def action_fill(self) -> None:
        """Put the cursor in the form's first field."""
        self.form.focus_first()
        self.refresh_bindings()

    def on_training_form_submitted(self, event: TrainingForm.Submitted) -> None:
        """A valid form: say what will start (steps, estimated time, device) and start it on y."""
        config = event.config

        def answered(start: bool | None) -> None:
            if start:  # (no: back in the form, focus where it was)
                run_guarded(self, self.start_run(config), what="Starting the run", group="start-run",
                            exclusive=True)

        self.app.push_screen(StartRunScreen(config), answered)

    async def start_run(self, config: TrainConfig) -> None:
        try:
            run_dir = await serving_policy.start_run(config)  # rc.start_run, within a served limit
        except PolicyRefusal as e:
            self.form.show_error(None, str(e))
            return
        except (ConfigError, DatasetError, OSError) as e:
            self.form.show_error("data" if isinstance(e, DatasetError) else getattr(e, "field", None), str(e))
            return
        self.notify(f"Training started in the background: {markup_escape(run_processes.expected_name(config, run_dir))}")
        self.show_run(run_dir)

    def action_stop(self) -> None:
        try:
            run_processes.stop_run(self.panel.run_dir)
        except RunControlError as e:
            self.notify(markup_escape(e), severity="warning")
            return
        self.panel.stop_requested()
        self.notify("Stop requested: the worker finishes its step, saves a checkpoint and stops")

    async def action_resume(self) -> None:
        try:
            await serving_policy.resume_run(self.panel.run_dir)
        except (RunControlError, PolicyRefusal) as e:
            self.notify(markup_escape(e), severity="warning")
            return
        self.notify("Resuming from the last checkpoint")
        self.panel.poll()
        self.refresh_bindings()

    def action_new_run(self) -> None:
        self._set_mode("form")

    def action_duplicate(self) -> None:
        try:
            settings = run_processes.run_settings(self.panel.run_dir)
        except ConfigError as e:
            self.notify(markup_escape(e), severity="error")
            return
        self.show_form(settings)
        self.notify("Settings copied into the form: change what you like, then ctrl+s")

    def action_runs(self) -> None:
        navigation.open_screen(self.app, "runs")

    def action_runs_from_form(self) -> None:
        self.action_runs()  # ctrl+o: letters type into the form's fields

    def action_inside(self) -> None:
        """Cycle the side column: samples, surprise per character, layer health."""
        self.panel.next_view()
        self.refresh_bindings()

    def action_scrub(self, direction: int) -> None:
        """Move every view (samples, surprise, layer health, the charts' marker) to an earlier
        or later snapshot's step; past the newest, back to live."""
        self.panel.scrub(direction)

    def action_attention(self) -> None:
        """The trained-heads view of this run at the step every view shows; scrubbing there
        moves this panel too (the step comes back when the view closes)."""
        run_dir = self.panel.run_dir
        if run_dir is None or (self.panel.scrub_step is None and not run_processes.has_checkpoint(run_dir)):
            self.notify("No checkpoint yet: the first evaluation saves one", severity="warning")
            return

        def returned(step) -> None:
            if step != self.panel.scrub_step and self.panel.run_dir == run_dir:
                self.panel.scrub_to(step)

        navigation.open_screen(self.app, "explorer.trained", run_dir=run_dir, step=self.panel.scrub_step,
                               callback=returned)

    def action_cursor(self, d_item: int, d_pos: int) -> None:
        self.panel.move_cursor(d_item, d_pos)

    def action_diagnosis_lesson(self) -> None:
        """Open the lesson that explains the first symptom the diagnosis names."""
        if self.panel.symptoms:
            self.app.open_lesson(self.panel.symptoms[0].lesson)

    def action_compare(self) -> None:
        navigation.open_screen(self.app, "compare_runs")

    def action_back(self) -> None:
        if self.mode == "form" and self.panel.run_dir is not None:
            self._set_mode("panel")  # back from "new run" to the run being watched
        else:
            self.app.pop_screen()

    def palette_commands(self):
        labels = {
            "start": ("Training: start", "Start the run described by the form"),
            "stop": ("Training: stop this run", "Clean stop with a checkpoint"),
            "resume": ("Training: resume this run", "Continue from its last checkpoint"),
            "new_run": ("Training: new run", "Open the form"),
            "duplicate": ("Training: copy settings", "A new run with this run's settings"),
            "runs": ("Training: list runs", "Every run, with its status"),
            "compare": ("Training: compare runs", "Val-loss curves and the bigram/MLP/GPT table"),
        }
        for action, (title, help_text) in labels.items():
            if self.check_action(action, ()):
                yield title, help_text, getattr(self, f"action_{action}")
        if self.mode == "panel":
            yield ("Training: inside view", "Cycle samples, per-character surprise and layer health",
                   self.action_inside)
            yield "Training: earlier step", "Every view at the previous snapshot's step", lambda: self.action_scrub(-1)
            yield "Training: later step", "Every view at the next snapshot's step (then live)", lambda: self.action_scrub(1)
            yield ("Training: attention at this step", "The trained heads of this run at the step shown",
                   self.action_attention)
