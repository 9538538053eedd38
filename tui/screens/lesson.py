"""One lesson, read top to bottom: prose, worked examples computed live, runnable snippets."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, Static

from minigpt.teaching.examples.catalog import render_example
from minigpt.lessons import Lesson, load_lessons
from tui.widgets.snippet import SnippetBlock
from tui import navigation


class ExampleBlock(Vertical):
    """A worked example: the numbers come from ``minigpt.teaching.examples.registry`` when the lesson opens."""

    def __init__(self, example_id: str):
        super().__init__(classes="example")
        self.example_id = example_id
        self.border_title = "worked example · computed by minigpt"

    def compose(self) -> ComposeResult:
        try:
            text = render_example(self.example_id)
        except Exception as e:  # never lose the lesson because one example broke
            yield Static(f"[red]Example {self.example_id!r} could not be computed: {e}[/red]")
            return
        yield Markdown(text)


class LessonScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("tab", "next_snippet", "Snippet", show=True),
        Binding("n", "next_lesson", "Next"),
        Binding("p", "previous_lesson", "Prev", show=False),
        Binding("z", "chapter_quiz", "Quiz"),
        Binding("o", "open_explorer", "Explore"),
        Binding("g", "top", "Top", show=False),
        Binding("G", "bottom", "End", show=False),
    ]

    def __init__(self, lesson: Lesson):
        super().__init__()
        self.lesson = lesson
        self._restoring = True

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="lesson-body"):
            if not self.lesson.body.lstrip().startswith("# "):  # the body's own H1 is the title
                yield Static(f"[b]{self.lesson.title}[/b]", classes="lesson-title")
            if self.lesson.objectives:
                yield Static(
                    "[b]You will learn to[/b]\n" + "\n".join(f" • {o}" for o in self.lesson.objectives),
                    classes="objectives",
                )
            n_snippets = 0
            for block in self.lesson.blocks():
                if block.kind == "markdown":
                    yield Markdown(block.text)
                elif block.kind == "example":
                    yield ExampleBlock(block.text)
                else:
                    yield SnippetBlock(block.text, n_snippets)
                    n_snippets += 1
            yield Static("[dim]— end of lesson —  n: next lesson · escape: back[/dim]", id="lesson-end")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.lesson.title
        body = self.query_one("#lesson-body", VerticalScroll)
        body.focus()
        self.watch(body, "scroll_y", self._on_scroll, init=False)
        self._saved_position = self.app.store.lesson_position(self.lesson.id)
        self._rendered: set[int] = set()
        # Markdown parses in a worker thread, so the lesson's height is only known once every
        # Markdown widget has reported (TableOfContentsUpdated); the timer is a safety net.
        self.set_timer(3.0, self._restore_if_pending)
        self._restore_when_rendered()

    @property
    def position_restored(self) -> bool:
        """True once the saved reading position has been applied (or given up on)."""
        return not self._restoring

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        self._rendered.add(id(event.markdown))
        self._restore_when_rendered()

    def _restore_when_rendered(self) -> None:
        if self._restoring and all(id(m) in self._rendered for m in self.query(Markdown)):
            self.call_after_refresh(self._restore, self._saved_position, 5)

    def _restore_if_pending(self) -> None:
        if self._restoring:
            self._restore(self._saved_position, 0)

    def _restore(self, fraction: float, retries: int) -> None:
        if not self._restoring:
            return
        body = self.query_one("#lesson-body", VerticalScroll)
        if body.max_scroll_y <= 0 and retries > 0:
            # Layout of the freshly mounted blocks lands on a later refresh.
            self.call_after_refresh(self._restore, fraction, retries - 1)
            return
        # If the learner already scrolled while the lesson rendered, their position wins.
        if fraction > 0 and body.max_scroll_y > 0 and body.scroll_y == 0:
            body.scroll_to(y=fraction * body.max_scroll_y, animate=False, immediate=True)
        self._restoring = False
        self._record()

    def _on_scroll(self, _old: float, _new: float) -> None:
        if not self._restoring:
            self._record()

    def _record(self) -> None:
        body = self.query_one("#lesson-body", VerticalScroll)
        maximum = body.max_scroll_y
        fraction = 1.0 if maximum <= 0 else body.scroll_y / maximum
        at_end = maximum <= 0 or body.scroll_y >= maximum - 1
        self.app.store.save_lesson_position(self.lesson.id, fraction, reached_end=at_end)
        if at_end and not getattr(self, "_announced", False):
            self._announced = True
            self.notify(f"Lesson “{self.lesson.title}” marked as read", timeout=3)

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "open_explorer":  # only lessons that name an explorer offer the key
            return bool(self.explorers)
        return True

    @property
    def explorers(self) -> list[str]:
        """Explorer ids from the lesson's front matter (``explorers = ["scaling"]``)."""
        value = self.lesson.extra.get("explorers", [])
        return [value] if isinstance(value, str) else list(value)

    # -- actions --------------------------------------------------------------------------------
    def action_open_explorer(self) -> None:
        for explorer_id in self.explorers[:1]:
            if explorer_id == "stepper":  # the attention stepper itself, not a side explorer
                self.app.open_area("attention")
            else:
                navigation.open_explorer(self.app, explorer_id)
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_top(self) -> None:
        self.query_one("#lesson-body", VerticalScroll).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one("#lesson-body", VerticalScroll).scroll_end(animate=False)

    def action_next_snippet(self) -> None:
        snippets = list(self.query(SnippetBlock))
        if not snippets:
            self.notify("This lesson has no runnable snippet")
            return
        current = self.focused
        idx = snippets.index(current) + 1 if current in snippets else 0
        if idx >= len(snippets):
            self.query_one("#lesson-body").focus()
            return
        snippets[idx].focus()
        snippets[idx].scroll_visible(top=True, animate=False)

    def _sibling(self, step: int) -> None:
        lessons = load_lessons()
        ids = [l.id for l in lessons]
        i = ids.index(self.lesson.id) + step if self.lesson.id in ids else -1
        if 0 <= i < len(ids):
            self.app.pop_screen()
            self.app.open_lesson(ids[i])
        else:
            self.notify("No more lessons in that direction")

    def action_chapter_quiz(self) -> None:
        navigation.open_screen(self.app, "quiz", lesson=self.lesson.id)

    def action_next_lesson(self) -> None:
        self._sibling(+1)

    def action_previous_lesson(self) -> None:
        self._sibling(-1)
