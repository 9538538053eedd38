"""One lesson, read top to bottom: prose, worked examples computed live, runnable snippets.

Read like a pager (space / b a page, j / k a line). A lesson counts as read once its end has been
on screen *and* most of it has been: every view the learner rests on for a moment is remembered
(across visits, in the settings table), so jumping to the end on arrival does not mark it read.

The reading position (restored on arrival, remembered per view, "read" once most of it was seen)
lives in :mod:`tui.lessons.lesson_reading`, whose guard (``is_shown``) every deferred callback here uses
too; it also drops a worker's result that arrives once the learner is leaving (tui.workers.Result).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import MountError
from textual.widgets import Footer, Markdown, Static

from minigpt.lessons import Lesson, load_lessons
from tui import navigation
from tui.common.header import TutorHeader
from tui.lessons.lesson_blocks import FIRST_BLOCKS, ExampleBlock, LessonBody, split_first_screen
from tui.lessons.lesson_reading import ReadingPosition
from tui.lessons.snippet import SnippetBlock
from tui.workers import Result, background, post_result

SAY_WAITING_S = 0.3  # an action that has not answered by then says what it is doing


class LessonScreen(ReadingPosition, Screen):
    BINDINGS = [
        # Not in the footer: a lesson with a snippet, quiz, explorer, experiments and katas needs every
        # column at 80 (the list before taught escape; the end of the lesson and help say it too).
        Binding("escape", "back", "Back", show=False, id="lesson.back"),
        Binding("space", "page_down", "Page", show=True, key_display="space", id="lesson.page_down"),
        Binding("b", "page_up", "Page up", show=False, id="lesson.page_up"),
        Binding("j", "line_down", "Line down", show=False, id="lesson.line_down"),
        Binding("k", "line_up", "Line up", show=False, id="lesson.line_up"),
        Binding("tab", "next_snippet", "Snippet", show=True, id="lesson.next_snippet"),
        Binding("n", "next_lesson", "Next", show=False, id="lesson.next_lesson"),  # 80 columns: the end of the lesson says n
        Binding("p", "previous_lesson", "Prev", show=False, id="lesson.previous_lesson"),
        Binding("z", "chapter_quiz", "Quiz", id="lesson.chapter_quiz"),
        Binding("o", "open_explorer", "Explore", id="lesson.open_explorer"),
        Binding("x", "open_experiments", "Experiments", id="lesson.open_experiments"),
        Binding("x", "start_lab", "Lab job", id="lesson.start_lab"),  # a lesson with lab jobs: x starts one (check_action picks)
        Binding("c", "open_katas", "Code", id="lesson.open_katas"),  # the lesson's katas; short: this footer is the fullest
        Binding("g", "top", "Top", show=False, id="lesson.top"),
        Binding("G", "bottom", "End", show=False, id="lesson.bottom"),
    ]

    def __init__(self, lesson: Lesson):
        super().__init__()
        self.lesson = lesson
        self.has_quiz = False  # until the decks say otherwise (_check_quiz)
        self._rest: list = []
        self._all_mounted = False
        self.has_snippets = bool(lesson.snippets())
        self._snippet_wanted = False  # tab pressed before the snippets were mounted and laid out
        self._leaving = False  # set by the first key that leaves (escape, n, p): later ones do nothing
        self._examples_child = None  # the process computing the examples not in the cache
        self._init_reading()

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with LessonBody(id="lesson-body"):
            if not self.lesson.body.lstrip().startswith("# "):  # the body's own H1 is the title
                yield Static(f"[b]{self.lesson.title}[/b]", classes="lesson-title")
            if self.lesson.objectives:
                yield Static(
                    "[b]You will learn to[/b]\n" + "\n".join(f" • {o}" for o in self.lesson.objectives),
                    classes="objectives",
                )
            blocks = self._block_widgets()
            # The first screenful comes with the screen; the rest (more Markdown to build, worked
            # examples to compute) is mounted right after the first frame (_mount_rest), so the
            # key that opened the lesson shows it at once.
            yield from blocks[:FIRST_BLOCKS]
            self._rest = blocks[FIRST_BLOCKS:]
            code = " · c: code it" if self.katas else ""
            yield Static(f"[dim]— end of lesson —  n: next lesson{code} · escape: back[/dim]", id="lesson-end")
        yield Footer()

    def _block_widgets(self) -> list:
        widgets, n_snippets = [], 0
        for block in self.lesson.blocks():
            if block.kind == "markdown":
                # The first block is often most of the lesson: its first screenful comes first.
                parts = split_first_screen(block.text) if not widgets else [block.text]
                widgets.extend(Markdown(part) for part in parts)
            elif block.kind == "example":
                widgets.append(ExampleBlock(block.text))
            else:
                widgets.append(SnippetBlock(block.text, n_snippets))
                n_snippets += 1
        return widgets

    async def _mount_rest(self) -> None:
        rest, self._rest = self._rest, []
        if not self.is_shown:  # left before its first frame was drawn
            return
        if rest:
            try:
                await self.query_one("#lesson-body", VerticalScroll).mount_all(rest, before="#lesson-end")
            except (NoMatches, MountError):  # the screen closed while the rest was mounting
                return
        if not self.is_shown:  # left while the rest was mounting
            return
        self._all_mounted = True
        self._layout_changed()
        self.refresh_bindings()  # the snippet key depends on blocks mounted just now
        self._restore_when_rendered()
        missing = sorted({b.example_id for b in self.query(ExampleBlock) if not b.filled})
        if missing:
            self._compute_examples(missing)

    @property
    def examples_filled(self) -> bool:
        """Every worked example shows its text (or why it has none): none says "computing…"."""
        return self._all_mounted and all(block.filled for block in self.query(ExampleBlock))

    @dataclass
    class ExampleComputed(Result):
        """One worked example's text from the child (or why there is none)."""
        example_id: str
        text: str | None
        error: str | None

    @background(thread=True, group="lesson-examples", what="Computing the lesson's worked examples")
    def _compute_examples(self, example_ids: list[str]) -> None:
        """The examples not in the cache, from a child process (pure-Python maths such as BPE would
        hold the event loop's GIL in a thread: this thread only waits on the child's answers); each
        block fills as its example arrives. Leaving the lesson kills the child (on_unmount)."""
        from minigpt.teaching.examples.cache import ChildComputation

        self._examples_child = child = ChildComputation(example_ids)
        if not self.is_shown:  # left while the child was starting
            child.stop()
        for example_id, text, error in child.answers():
            post_result(self, self.ExampleComputed(example_id, text, error))

    @on(ExampleComputed)
    async def _example_computed(self, message: ExampleComputed) -> None:
        for block in self.query(ExampleBlock):
            if block.example_id == message.example_id and not block.filled:
                await block.fill(message.text, message.error)

    @on(ExampleBlock.Filled)
    def _example_filled(self) -> None:
        self._layout_changed()
        self._restore_when_rendered()  # the saved place waits for the last example (its height)

    def _blocks_final(self) -> bool:
        return self.examples_filled

    def on_mount(self) -> None:
        if not self.is_shown:  # popped again before it was mounted (n pressed twice in a burst)
            return
        self.sub_title = self.lesson.title
        self._check_quiz()
        self.query_one("#lesson-body", VerticalScroll).focus()
        self._start_reading()
        self.call_after_refresh(self._mount_rest)
        if self.lab_jobs:  # a job's result shows as soon as it is saved, while the lesson is open
            from tui.lessons.lab_start import LabFollower

            self._lab_follower = LabFollower(self, self.lab_jobs)

    def on_unmount(self) -> None:
        self._stop_timers()
        if self._examples_child is not None:
            self._examples_child.stop()

    def _leave(self) -> bool:
        """Mark the screen as leaving (its deferred work stops); False if it already was."""
        if self._leaving:
            return False
        self._leaving = True
        self._stop_timers()
        return True

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "open_explorer":  # only lessons that name an explorer offer the key
            return bool(self.explorers)
        if action == "next_snippet":  # only lessons with a runnable snippet (mounted or still to come)
            return self.has_snippets
        if action == "chapter_quiz":  # only lessons that have quiz questions
            return self.has_quiz
        if action == "open_experiments":  # front matter: experiments = [...]
            return bool(self.lesson.extra.get("experiments")) and not self.lab_jobs
        if action == "start_lab":  # front matter: lab = ["lora", ...]
            return bool(self.lab_jobs)
        if action == "open_katas":  # only lessons a kata practises (lessons/katas/*/meta.toml)
            return bool(self.katas)
        return True

    @property
    def katas(self) -> list:
        if not hasattr(self, "_katas"):
            from minigpt.errors import KataError
            from minigpt.katas.catalogue import katas_for_lesson

            try:
                self._katas = katas_for_lesson(self.lesson.id)
            except KataError:  # reported on the katas screen
                self._katas = []
        return self._katas

    @dataclass
    class QuizChecked(Result):
        """Whether a card is tagged with the lesson (dropped once the lesson is leaving: is_shown)."""
        found: bool

    @background(thread=True, exclusive=True, group="quiz-check")
    def _check_quiz(self) -> QuizChecked:
        """Whether any card is tagged with this lesson (reading the decks takes a second: not on
        the event loop)."""
        from minigpt.errors import DeckError
        from minigpt.study.decks import cached_decks

        try:
            found = self.lesson.id in cached_decks().lessons()
        except (DeckError, OSError):
            found = False
        return self.QuizChecked(found)

    @on(QuizChecked)
    def _quiz_checked(self, message: QuizChecked) -> None:
        self.has_quiz = message.found
        self.refresh_bindings()

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
            else:  # front matter explorer_options = {...}: what it opens on (e.g. a model, an input)
                options = self.lesson.extra.get("explorer_options", {})
                navigation.open_explorer(self.app, explorer_id, **(options if isinstance(options, dict) else {}))
    @property
    def lab_jobs(self) -> list[str]:
        """The lesson's own background jobs (front matter ``lab = [...]``, minigpt.control.lab_jobs)."""
        value = self.lesson.extra.get("lab", [])
        return [value] if isinstance(value, str) else list(value)

    def action_open_experiments(self) -> None:
        value = self.lesson.extra.get("experiments", [])
        navigation.open_screen(self.app, "experiments", presets_first=[value] if isinstance(value, str) else list(value))

    def action_start_lab(self) -> None:
        from tui.lessons.lab_start import job_choices, run_choices

        runs = run_choices(self.lab_jobs)  # a job's kept run: opened in the explorer or compare
        if len(self.lab_jobs) == 1 and not runs:
            self.start_lab_job(self.lab_jobs[0])
        elif self.lab_jobs:  # one key press starts one job: ask which
            navigation.open_screen(self.app, "lab_menu", job_choices(self.lab_jobs) + runs,
                                   callback=self._lab_job_chosen)

    def _lab_job_chosen(self, job: str | None) -> None:
        from tui.lessons.lab_start import kept_run

        if job is None:  # the menu was closed
            return
        if ":" not in job:
            self.start_lab_job(job)
        elif (opened := kept_run(job)) is None:
            self.notify("That run is no longer in the lab folder.", severity="warning", title="Lab")
        elif opened[0] == "explore":
            navigation.open_screen(self.app, "explorer.trained", run_dir=opened[1])
        else:
            navigation.open_screen(self.app, "compare_runs", run=opened[1])

    @background(thread=False, group="lab-jobs", what="Starting a lab job")
    async def start_lab_job(self, job: str) -> None:
        from tui.lessons.lab_start import start_lab_job

        # Said at once when the answer is not: starting a job can take seconds on a busy machine.
        saying = self.set_timer(SAY_WAITING_S, lambda: self.notify(f"{job}: starting the lab job …", title="Lab"))
        try:
            answer = await start_lab_job(job)
        finally:
            saying.stop()
        self.notify(answer, title="Lab", timeout=8)

    def action_open_katas(self) -> None:
        """The lesson's kata, or the list of them when it has several."""
        if len(self.katas) == 1:
            navigation.open_screen(self.app, "kata", self.katas[0])
        else:
            navigation.open_screen(self.app, "katas", lesson=self.lesson.id)

    def action_back(self) -> None:
        if self._leave():
            self.app.pop_screen()

    def action_top(self) -> None:
        self.query_one("#lesson-body", VerticalScroll).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one("#lesson-body", VerticalScroll).scroll_end(animate=False)

    def action_page_down(self) -> None:
        body = self.query_one("#lesson-body", VerticalScroll)
        # Like a pager: a page less two lines, so the last lines read stay in view.
        body.scroll_relative(y=max(1, body.scrollable_content_region.height - 2), animate=False)

    def action_page_up(self) -> None:
        body = self.query_one("#lesson-body", VerticalScroll)
        body.scroll_relative(y=-max(1, body.scrollable_content_region.height - 2), animate=False)

    def action_line_down(self) -> None:
        self.query_one("#lesson-body", VerticalScroll).scroll_relative(y=1, animate=False)

    def action_line_up(self) -> None:
        self.query_one("#lesson-body", VerticalScroll).scroll_relative(y=-1, animate=False)

    def action_next_snippet(self) -> None:
        if not self.position_restored:
            # Pressed on arrival: the snippets may not be mounted yet, and the place restored
            # next would scroll away from one. Focus it once the lesson has settled.
            self._snippet_wanted = True
            return
        snippets = list(self.query(SnippetBlock))
        if not snippets:
            self.notify("This lesson has no runnable snippet")
            return
        current = self.focused
        idx = snippets.index(current) + 1 if current in snippets else 0
        if idx >= len(snippets):
            self.query_one("#lesson-body").focus()
            return
        self.release_restored_place()
        snippets[idx].focus(scroll_visible=False)
        snippets[idx].scroll_visible(top=True, animate=False)

    def position_settled(self) -> None:
        """The saved place is restored (ReadingPosition): a snippet asked for on arrival now."""
        if self._snippet_wanted:
            self._snippet_wanted = False
            # After the refresh that applies the restored scroll: scrolled to the snippet before
            # it, the snippet's region was measured at the old offset and the restore then won.
            self.call_after_refresh(self.action_next_snippet)

    def open_sibling(self, step: int) -> None:
        """Open the next (+1) or previous (-1) lesson in place of this one."""
        if self._leaving:
            # The second key of a burst (nn, np) reached this screen after it had already opened
            # the next lesson: that lesson takes the step, as if it had been on screen.
            current = self.app.screen
            if isinstance(current, LessonScreen) and current is not self:
                current.open_sibling(step)
            return
        lessons = load_lessons()
        ids = [l.id for l in lessons]
        i = ids.index(self.lesson.id) + step if self.lesson.id in ids else -1
        if 0 <= i < len(ids):
            if self._leave():  # a second n or p in the same burst belongs to the next lesson
                self.app.pop_screen()
                self.app.open_lesson(ids[i])
        else:
            self.notify("No more lessons in that direction")

    def action_chapter_quiz(self) -> None:
        navigation.open_screen(self.app, "quiz", lesson=self.lesson.id)

    def action_next_lesson(self) -> None:
        self.open_sibling(+1)

    def action_previous_lesson(self) -> None:
        self.open_sibling(-1)
