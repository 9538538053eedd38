"""The lesson track: every chapter with the learner's progress, reopening where they left off."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from minigpt.errors import LessonError
from minigpt.lessons import load_lessons
from minigpt.text import markup_escape as escape
from tui.common.glance import lesson_to_continue
from tui.common.header import TutorHeader
from tui.keymap import shown_key_of


def _kata_counts(store) -> dict[str, tuple[int, int]]:
    """(katas passed, katas) per lesson: a passed kata counts toward the lessons it practises."""
    from minigpt.errors import KataError
    from minigpt.katas.catalogue import load_katas
    from minigpt.katas.history import lesson_katas

    try:
        return lesson_katas(store, load_katas(), after_reading=False)  # every pass, as the katas screen
    except KataError:  # reported on the katas screen
        return {}


class LessonsScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="lessons.back"),
        Binding("enter", "open", "Open", show=True, id="lessons.open"),
        Binding("c", "continue", "Continue", id="lessons.continue"),
    ]

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="lessons-summary")
        yield OptionList(id="lesson-list")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one(OptionList).focus()

    def on_screen_resume(self) -> None:
        self.reload()

    def reload(self) -> None:
        summary = self.query_one("#lessons-summary", Static)
        try:
            self.lessons = load_lessons()
        except LessonError as e:
            self.lessons = []
            summary.update(f"[b red]A lesson file could not be read:[/b red] {e}")
            return
        store = self.app.store
        read = store.lessons_read()
        katas = _kata_counts(store)
        last = lesson_to_continue(store, [l.id for l in self.lessons])  # what c opens, marked
        ol = self.query_one(OptionList)
        keep = ol.highlighted
        ol.clear_options()
        # The learner's keys, where the settings remap them.
        open_key, continue_key = (escape(shown_key_of(self.app, i, k)) for i, k in
                                  (("lessons.open", "enter"), ("lessons.continue", "c")))
        for number, lesson in enumerate(self.lessons, start=1):
            pos = store.lesson_position(lesson.id)
            if lesson.id in read:
                mark = "[green]✓[/green]"
            elif pos > 0:
                mark = f"[yellow]{int(pos * 100):>2}%[/yellow]"
            else:
                mark = " ·"
            here = f"  [dim]← continue ({continue_key})[/dim]" if lesson.id == last else ""
            passed, total = katas.get(lesson.id, (0, 0))
            code = (f"  [green]katas {passed}/{total}[/green]" if passed == total else f"  [dim]katas {passed}/{total}[/dim]") if total else ""
            ol.add_option(Option(f"{mark:>3} {number:>2}. {lesson.title}{code}{here}", id=lesson.id))
        summary.update(
            f"[b]Lessons[/b]  {len(read & {l.id for l in self.lessons})} of {len(self.lessons)} read"
            f"   [dim]{open_key}: open · {continue_key}: continue where you left off[/dim]"
        )
        if keep is not None and keep < len(self.lessons):
            ol.highlighted = keep
        else:  # where the learner left off, or the first lesson (so enter opens it at once)
            ids = [l.id for l in self.lessons]
            ol.highlighted = ids.index(last) if last in ids else (0 if ids else None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.app.open_lesson(event.option.id)

    def action_open(self) -> None:
        ol = self.query_one(OptionList)
        if ol.highlighted is not None:
            self.app.open_lesson(ol.get_option_at_index(ol.highlighted).id)

    def action_continue(self) -> None:
        target = lesson_to_continue(self.app.store, [l.id for l in self.lessons])
        if target:
            self.app.open_lesson(target)
