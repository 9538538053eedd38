"""The minigpt-tutor Textual app: home screen, navigation, palette, themes, the too-small guard."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from minigpt import paths, serving_policy, settings
from minigpt.errors import StoreError, TutorError
from minigpt.store import Store
from minigpt.text import markup_escape
from tui import keymap, navigation
from tui.areas import AREAS, PLACES
from tui.common.screen_commands import ScreenCommands
from tui.terminal_input import tolerate_non_utf8_input
from tui.workers import GiveWay, Result, background

MIN_WIDTH, MIN_HEIGHT = 80, 24
_WARM_LOCK = threading.Lock()
PREWARM_AFTER_S = 1.0  # after the first frame, while the learner reads the home screen
PREWARM = ("torch", "textual_plotext", "tui.common.plot_theme", "minigpt.teaching.attention",
           "minigpt.teaching.stepper", "minigpt.playground.generation")
DEFAULT_THEME = "textual-dark"
TUI = Path(__file__).resolve().parent
# The UI waits this long for another instance's write lock, then says so (the library waits 10 s).
BUSY_TIMEOUT_S = 3.0


class TutorApp(App):
    """Keyboard-first; every action has a key in the footer and an entry in the palette."""

    TITLE = "minigpt-tutor"
    # app.tcss, then each area package's own .tcss file: a new area adds its file, no code change.
    # app.tcss holds all the first screen uses; the others are read once it is drawn (parsing them
    # took ~70 ms of the first frame). Absolute paths, so subclasses (tests) resolve them too.
    CSS_PATH = [TUI / "app.tcss"]
    LATER_CSS_PATHS = sorted(TUI.glob("*/*.tcss"))
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        # F1 opens the keys from a text field too, where "?" is a character of the answer.
        Binding("f1", "help", "Help (also from a text field)", show=False, priority=True, id="app.help_anywhere"),
        Binding("ctrl+t", "change_theme", "Theme", show=False, id="app.theme"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit"),
        # Declared here (Textual adds one without an id otherwise) so the palette's key can be remapped.
        Binding(App.COMMAND_PALETTE_BINDING, "command_palette", "palette", show=False, priority=True,
                key_display=App.COMMAND_PALETTE_DISPLAY, tooltip="Open the command palette", id="app.palette"),
    ]
    ENABLE_COMMAND_PALETTE = True
    # System commands (areas, lessons, explorers, themes) plus the current screen's own actions.
    COMMANDS = App.COMMANDS | {ScreenCommands}

    def __init__(self, store: Store | None = None, initial: str | None = None, **kwargs):
        tolerate_non_utf8_input()  # a byte that is not UTF-8 (0xE9 pasted) ended the app
        super().__init__(**kwargs)
        self.store = store or Store(paths.database_path(), busy_timeout_s=BUSY_TIMEOUT_S)
        self._initial = initial  # "lesson:<id>", "area:<id>", "run:<folder>", "experiment:<folder>" or None
        self._too_small_shown = False
        self._home_opened = False
        self._theme_applied = False  # the startup choice is not the learner's: don't store it
        self._warm_parts: set[str] = set()  # "imports", "decks": in memory, the heap is frozen
        self.crash: BaseException | None = None  # the error that closed the app, if one did
        self._stored_keymap: dict[str, str] = {}  # the learner's keys applied (tui.keymap)
        self.give_way = GiveWay()  # the warm-ups' imports pause while keys come (tui.workers)

    # -- an unexpected error --------------------------------------------------------------------
    def _handle_exception(self, error: Exception) -> None:
        """An exception no handler caught closes the app (Textual's rule): its traceback goes to
        ``app.log`` first, and ``tui.launch.run_app`` names the log in one line once the terminal is back."""
        from tui.workers import log_failure

        if self.crash is None:
            self.crash = error
            self._crash_logged = log_failure("The app", error)
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        # The traceback is in app.log; the terminal gets one line from tui.launch.run_app, not a screenful
        # of locals. `textual run --dev` (the "debug" feature) still prints it.
        if self.crash is not None and getattr(self, "_crash_logged", False) and "debug" not in self.features:
            self._exit_renderables.clear()
        super()._print_error_renderables()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.Paste)):
            self.give_way.input_seen()
        await super().on_event(event)

    # -- lifecycle ------------------------------------------------------------------------------
    def on_mount(self) -> None:
        saved = settings.get(self.store, settings.THEME)
        if saved and saved in self.available_themes:
            self.theme = saved
        elif os.environ.get("TERM", "").endswith("-16color") or os.environ.get("COLORTERM") == "16":
            self.theme = "ansi-dark"
        else:
            self.theme = DEFAULT_THEME
        self._theme_applied = True
        self._apply_keymap()
        # In a terminal too small, the home screen waits under nothing: it is pushed once the
        # terminal is large enough (laid out 10 columns wide, Textual's wrapping raised).
        self._check_size()
        if not self._too_small_shown:
            self._open_home()
        if self.store.notice:  # a damaged file moved aside, a read-only database
            self.notify(markup_escape(self.store.notice), title="Progress", severity="warning", timeout=20)
        self.call_after_refresh(self._after_first_frame)
        if self._initial:
            self.call_after_refresh(self._open_initial)
        self.call_after_refresh(self._check_size)

    def _after_first_frame(self) -> None:
        """What the first screen does not show waits until it is drawn: the other screens' styles
        (before any of them opens), and a moment later the warm-ups (torch, the decks' numeric
        cards, the reviews' count): a thread started earlier took the GIL from the first frame half
        the time, and one started with it from the first key."""
        self.stylesheet.read_all(self.LATER_CSS_PATHS)
        self.css_path.extend(self.LATER_CSS_PATHS)  # watched too under `textual run --dev`
        self.stylesheet.update(self, animate=False)  # parses the new files only (the rest is cached)
        self.set_timer(PREWARM_AFTER_S, self._prewarm)

    def _prewarm(self) -> None:
        if not serving_policy.is_served():  # a browser's guest is not told of the owner's cards
            from tui.training import run_alerts

            run_alerts.watch_reviews(self)
        self._warm_decks()
        self._warm_imports()

    # -- the learner's keys -----------------------------------------------------------------------
    def _apply_keymap(self) -> None:
        """The keys stored in the settings (``keys.<binding id>``), before the first frame; in a
        browser tab, keys the browser keeps are replaced. Entries the app cannot use are reported
        in one notification and left out, never a crash; a full check (unknown ids, clashes) needs
        every screen imported, so it runs in the background."""
        try:
            stored, lines = keymap.startup_keymap(self.store)
        except StoreError as e:
            stored, lines = {}, [str(e)]
        self._stored_keymap = stored
        self._set_keys(stored)
        if lines:
            self._keymap_notice(lines)
        if stored:
            self._check_keymap(stored)

    def _set_keys(self, keys: dict[str, str]) -> None:
        keys = keymap.served_keymap(keys) if serving_policy.is_served() else keys
        # The footer finds the palette's key by this name: the learner's key, so it stays shown.
        self.COMMAND_PALETTE_BINDING = keys.get("app.palette", App.COMMAND_PALETTE_BINDING).split(",")[0]
        self.set_keymap(keys)

    def _keymap_notice(self, lines: list[str]) -> None:
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        self.notify(markup_escape(lines[0] + more), title="Keys left at their defaults", severity="warning", timeout=20)

    @dataclass
    class KeymapChecked(Result):
        usable: dict
        dropped: list

    @background(group="keymap", what="Checking your keys")
    def _check_keymap(self, stored: dict[str, str]) -> KeymapChecked:
        usable, dropped = keymap.usable_keymap(stored, type(self))
        return self.KeymapChecked(usable, dropped)

    @on(KeymapChecked)
    def _keymap_checked(self, message: KeymapChecked) -> None:
        if message.dropped:
            self._stored_keymap = message.usable
            self._set_keys(message.usable)
            self._keymap_notice(message.dropped)

    @dataclass
    class DecksRead(Result):
        deck: object

    @background(group="decks", what="Reading the decks")
    def _warm_decks(self) -> DecksRead | None:
        """Read the decks once, off the event loop (every study screen then shares the cache),
        then move per-case schedules of generative cards to their note and re-grade what an older
        grader marked wrong, if migration 3 asked for it."""
        from minigpt.study.decks import cached_decks

        try:
            self.give_way.wait_for_quiet()
            deck = cached_decks()
        except (TutorError, OSError):  # the study screens say what is wrong with a deck file
            return None
        finally:
            self._warmed("decks")
        return self.DecksRead(deck)

    @on(DecksRead)
    def _repair_grades(self, message: DecksRead) -> None:
        from minigpt.study import repair, templates

        deck = message.deck
        try:  # schedules kept per case before a note became generative move to the note first
            templates.merge_case_state(self.store, templates.templated_notes(deck))
            repair.regrade_pending(self.store, deck)
            notice = repair.take_notice(self.store)
        except StoreError as e:
            self.notify(markup_escape(e), title="Not saved", severity="warning")
            return
        if notice:  # told once: take_notice removed it
            self.notify(markup_escape(notice), title="Grading fixed", timeout=20)

    def _warm_imports(self) -> None:
        """Import what the heavier screens need (torch, the charts) in a thread once the home
        screen is up, so the first visit to a lesson, the stepper, the playground or training does
        not freeze the event loop for the second or two that importing torch takes; each import
        waits while the learner is pressing keys (``GiveWay``), so it does not slow them down."""
        def load() -> None:
            for module in PREWARM:
                self.give_way.wait_for_quiet()  # pausing while the learner presses keys
                try:
                    import_module(module)
                except Exception:
                    pass
            self._warmed("imports")

        self.run_worker(load, thread=True, group="prewarm", exclusive=True)

    def _warmed(self, part: str) -> None:
        """Once the imports and the decks are in memory, set them aside from the garbage
        collector: its full passes walked those ~270k long-lived objects, 0.1–0.8 s each, a few
        times a minute, and a key pressed during one waited for it (help's p95 in
        bench_latency.py). One collection first, then everything alive is frozen. Not in a headless
        test app: a test process runs hundreds of apps, and frozen garbage is never collected."""
        with _WARM_LOCK:
            self._warm_parts.add(part)
            if self._warm_parts != {"decks", "imports"} or self.is_headless:
                return
        gc.collect()
        gc.freeze()

    def watch_theme(self, theme: str) -> None:
        # Remember the learner's choice (the palette's "Change theme" sets it too), but not the
        # automatic one at startup, so a 16-colour terminal keeps getting ansi-dark by default.
        if getattr(self, "_theme_applied", False):
            try:
                settings.set(self.store, settings.THEME, theme)
            except StoreError as e:  # the theme still changes, for this session
                self.notify(markup_escape(e), title="Not saved", severity="warning")

    def on_resize(self, event) -> None:
        self._check_size(event.size)  # self.size is updated only after this handler

    def _check_size(self, size=None) -> None:
        size = size or self.size
        small = size.width < MIN_WIDTH or size.height < MIN_HEIGHT
        if small and not self._too_small_shown:
            self._too_small_shown = True
            navigation.open_screen(self, "too_small", MIN_WIDTH, MIN_HEIGHT)
        elif not small and self._too_small_shown:
            self._too_small_shown = False
            if navigation.is_screen(self.screen, "too_small"):
                self.pop_screen()
            if not self._home_opened:
                self._open_home()
            self._open_initial()

    def _open_home(self) -> None:
        self._home_opened = True
        navigation.open_screen(self, "home")

    def opening_text(self) -> str | None:
        """What the screen asked for on the command line is, while it is still on its way
        ("opening run NAME …"); None when nothing was asked for or it is open."""
        if not self._initial:
            return None
        kind, _, ident = self._initial.partition(":")
        name = Path(ident).name if kind in ("run", "experiment") else ident
        return f"opening {kind} {name} …"

    def _open_initial(self) -> None:
        """The screen asked for on the command line, once the terminal is large enough to lay it out."""
        if self._initial and not self._too_small_shown:
            target, self._initial = self._initial, None
            self.open_target(target)

    # -- navigation -----------------------------------------------------------------------------
    def open_target(self, target: str) -> None:
        kind, _, ident = target.partition(":")
        if kind == "lesson":
            self.open_lesson(ident)
        elif kind == "area":
            self.open_area(ident)
        elif kind == "run":  # a training run folder (minigpt watch)
            navigation.open_screen(self, "training", run_dir=Path(ident))
        elif kind == "experiment":  # an experiment folder (minigpt watch NAME)
            navigation.open_screen(self, "experiment", Path(ident))

    def open_area(self, area_id: str) -> None:
        for a in AREAS:
            if a.id == area_id:
                navigation.open_screen(self, a.screen)
                return
        self.notify(f"No area called {area_id!r}", severity="error")

    def open_lesson(self, lesson_id: str) -> None:
        from minigpt.errors import LessonError
        from minigpt.lessons import lesson_by_id
        try:
            lesson = lesson_by_id(lesson_id)
        except (KeyError, LessonError) as e:
            self.notify(markup_escape(e), severity="error")
            return
        navigation.open_screen(self, "lesson", lesson)

    def go_home(self) -> None:
        while len(self.screen_stack) > 1 and not navigation.is_screen(self.screen, "home"):
            self.pop_screen()

    def action_help(self) -> None:
        if not navigation.is_screen(self.screen, "help"):
            navigation.open_screen(self, "help", self.screen)

    # -- command palette ------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Home", "Go back to the home screen", self.go_home)
        yield SystemCommand("Help: keys", "Every key of this screen and the app", self.action_help)
        for a in AREAS:
            yield SystemCommand(f"Open {a.title}", a.description, lambda a=a: self.open_area(a.id))
        for p in PLACES:
            yield SystemCommand(p.title, p.description,
                                lambda p=p: navigation.open_screen(self, p.screen, **dict(p.options)))
        for e in navigation.EXPLORERS:
            yield SystemCommand(f"Explorer: {e.title}", e.description,
                                lambda e=e: navigation.open_explorer(self, e.id))
        try:
            from minigpt.lessons import load_lessons

            lessons = load_lessons()
        except Exception:  # a broken lesson file is reported on the lessons screen instead
            lessons = []
        try:
            from minigpt.katas.catalogue import load_katas

            katas = load_katas()
        except Exception:  # a broken kata folder is reported on the katas screen instead
            katas = []
        for kata in katas:
            yield SystemCommand(f"Kata: {kata.name}", kata.title,
                                lambda kata=kata: navigation.open_screen(self, "kata", kata))
        yield from self._lab_job_commands(lessons)
        for number, lesson in enumerate(lessons, start=1):
            yield SystemCommand(
                f"Lesson {number}: {lesson.title}",
                " · ".join(lesson.objectives[:2]) or "Open this lesson",  # each objective a sentence
                lambda lid=lesson.id: self.open_lesson(lid),
            )


    def _lab_job_commands(self, lessons) -> Iterable[SystemCommand]:
        """Each lab job by its title: it opens the lesson that runs it (x there starts it, and its
        result shows in that lesson)."""
        from minigpt.runs.lab import JOBS

        for lesson in lessons:
            jobs = lesson.extra.get("lab", [])
            for job in [jobs] if isinstance(jobs, str) else jobs:
                if job in JOBS:
                    yield SystemCommand(f"Lab job: {JOBS[job].title}",
                                        f"In “{lesson.title}”: x starts it, its result shows there",
                                        lambda lid=lesson.id: self.open_lesson(lid))
