"""Quiz: pick a mode, answer a round of questions; each answer feeds the review log as quiz:<mode>.

Questions and grading come from minigpt.study.quiz; the rating each outcome maps to
(wrong → Again, typo or hint → Hard, right → Good) is recorded with StudySession.rate. The end of
a round lists what was missed with the right answers, and `v` reviews those cards at once.
"""

from __future__ import annotations

import random

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from minigpt.errors import DeckError, UndoError
from minigpt.study import quiz
from minigpt.study.decks import cached_decks
from minigpt.study.formats import QUIZ_MODES, RATING_NAMES
from minigpt.study.review import StudySession
from minigpt.text import markup_escape as escape
from tui import navigation
from tui.common.header import TutorHeader
from tui.saving import keeps_screen
from tui.study.study_quiz import QuestionView, TypedView, view_for

ROUND = 5


def lesson_titles() -> dict[str, tuple[int, str]]:
    """Lesson id → (order, title); empty when the lessons cannot be read (ids never shown)."""
    from minigpt.errors import LessonError
    from minigpt.lessons import load_lessons

    try:
        return {lesson.id: (lesson.order, lesson.title) for lesson in load_lessons()}
    except LessonError:
        return {}


def _short(text: str, width: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


class QuizScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="quiz.back"),
        Binding("ctrl+s", "submit", "Submit", show=True, id="quiz.submit"),
        Binding("f2", "hint", "Hint", id="quiz.hint"),
        Binding("n,enter", "next", "Next question", show=True, key_display="n", id="quiz.next"),
        Binding("r", "again", "Another round", show=True, id="quiz.again"),
        Binding("v", "review_missed", "Review missed", show=True, id="quiz.review_missed"),
        Binding("m", "modes", "Modes", show=True, id="quiz.modes"),
        Binding("ctrl+f", "flag", "Question wrong?", show=True, id="quiz.flag"),
    ]

    def __init__(self, lesson: str | None = None, *, seed: int | None = None) -> None:
        super().__init__()
        self.start_lesson = lesson
        self.rng = random.Random(seed)
        self.session: StudySession | None = None
        self.titles: dict[str, tuple[int, str]] = {}
        self.mode: str | None = None
        self.lesson: str | None = None
        self.questions: list[quiz.QuizQuestion] = []
        self.missed: list[tuple[quiz.QuizQuestion, quiz.QuizOutcome]] = []
        self.index = 0
        self.score = 0
        self.flagged: set[int] = set()   # questions flagged as wrong this round: out of the score
        self.state = "pick"  # pick | lesson | question | answered | done

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="quiz-status")
        yield VerticalScroll(id="quiz-body")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Quiz"
        self.titles = lesson_titles()
        try:
            self.session = StudySession(self.app.store, cached_decks())
        except DeckError as e:
            self.set_status(f"✗ A deck file could not be read: {escape(str(e))}")
            return
        if self.start_lesson:
            self.start_chapter(self.start_lesson)
        else:
            self.show_modes()

    def title_of(self, lesson_id: str) -> str:
        return self.titles.get(lesson_id, (0, "this lesson"))[1]

    # -- states -------------------------------------------------------------------------------
    def set_status(self, text: str) -> None:
        self.query_one("#quiz-status", Static).update(text)

    def _fill(self, *widgets) -> None:
        body = self.query_one("#quiz-body", VerticalScroll)
        body.remove_children()
        body.mount_all(widgets)
        body.scroll_home(animate=False)

    def show_modes(self) -> None:
        self.state, self.mode = "pick", None
        self.set_status(f"[b]Quiz[/b] · pick a mode (1-{len(QUIZ_MODES)} or enter) · "
                        "answers feed your flashcard schedule")
        options = OptionList(*[Option(f"{i}. [b]{m.title}[/b]\n   [dim]{escape(m.description)}[/dim]",
                                      id=m.id)
                               for i, m in enumerate(QUIZ_MODES.values(), 1)], id="quiz-modes")
        self._fill(options)
        self.call_after_refresh(options.focus)
        self.refresh_bindings()

    def show_lessons(self) -> None:
        self.state = "lesson"
        deck = self.session.deck_in_play()
        lessons = sorted(deck.lessons(), key=lambda l: (self.titles.get(l, (10**6, l)), l))
        self.set_status("[b]Chapter quiz[/b] · pick a lesson · escape: modes")
        options = OptionList(*[Option(f"{escape(self.title_of(l))}  "
                                      f"[dim]({len(quiz.chapter_notes(deck, l))} questions)[/dim]",
                                      id=l) for l in lessons if l in self.titles],
                             id="quiz-lessons")
        self._fill(options)
        self.call_after_refresh(options.focus)
        self.refresh_bindings()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "quiz-modes":
            event.stop()
            self.start_mode(event.option.id)
        elif event.option_list.id == "quiz-lessons":
            event.stop()
            self.start_chapter(event.option.id)

    def on_key(self, event) -> None:
        # Digits pick a mode on the picker (the question views use their own digits).
        keys = [str(i) for i in range(1, len(QUIZ_MODES) + 1)]
        if self.state == "pick" and event.key in keys:
            event.stop()
            self.start_mode(list(QUIZ_MODES)[int(event.key) - 1])

    def start_mode(self, mode: str) -> None:
        if not QUIZ_MODES[mode].is_format:  # the chapter quiz: pick a lesson first
            self.show_lessons()
            return
        due = set(self.session.queue())
        deck = self.session.deck_in_play()  # flagged and suspended cards are not asked
        cards = [c for c in deck if mode in quiz.formats_for(c)]
        self.rng.shuffle(cards)
        cards.sort(key=lambda c: c.id not in due)  # cards due now first, the rest at random
        picked, notes = [], set()
        for card in cards:  # one card per note: a round never asks the same fact twice
            if card.note_id not in notes:
                notes.add(card.note_id)
                picked.append(card)
        self.mode, self.lesson = mode, None
        self.begin([quiz.question_for(deck, c, self.rng, fmt=mode)
                    for c in picked[:ROUND]])

    def start_chapter(self, lesson_id: str) -> None:
        try:
            from minigpt.experiments.sweep_questions import learner_run_questions

            questions = quiz.chapter_quiz(lesson_id, seed=self.rng.randrange(2**31),
                                       deck=self.session.deck_in_play(), run_questions=learner_run_questions())
        except ValueError:
            self.show_modes()
            self.set_status(f"✗ No questions for “{escape(self.title_of(lesson_id))}” yet · "
                            "pick another mode")
            return
        self.mode, self.lesson = "chapter", lesson_id
        self.begin(questions)

    def begin(self, questions: list[quiz.QuizQuestion]) -> None:
        self.questions, self.index, self.score, self.missed = questions, 0, 0, []
        self.flagged = set()
        self.show_question()

    def show_question(self) -> None:
        self.state = "question"
        question = self.questions[self.index]
        view = view_for(question)
        self._fill(view)
        self.update_status()
        self.call_after_refresh(view.focus_answer)
        self.refresh_bindings()

    @property
    def mixes_formats(self) -> bool:
        """A round of the chapter quiz: its questions come in several formats."""
        return self.mode is not None and not QUIZ_MODES[self.mode].is_format

    def round_title(self) -> str:
        """The lesson's title in a chapter quiz (the header says "Chapter quiz"), else the mode."""
        if self.mixes_formats and self.lesson:
            return self.title_of(self.lesson)
        return QUIZ_MODES[self.mode].title

    def update_status(self) -> None:
        """One line at 80 columns: the round's title is shortened to make room for the rest."""
        self.sub_title = QUIZ_MODES[self.mode].title if self.mixes_formats else "Quiz"
        # What the question asks of the learner, while it waits for an answer (not after).
        fmt = (f" · {QUIZ_MODES[self.questions[self.index].format].asking}"
               if self.mixes_formats and self.state == "question" else "")
        out = f" · {len(self.flagged)} flagged" if self.flagged else ""
        rest = f" · {self.index + 1}/{len(self.questions)}{fmt} · score {self.score}{out}"
        room = max(20, (self.size.width or 80) - 4 - len(rest))
        self.set_status(f"[b]{escape(_short(self.round_title(), room))}[/b]{rest}")

    @property
    def view(self) -> QuestionView | None:
        views = self.query(QuestionView)
        return views.first() if views else None

    @keeps_screen
    def on_question_view_answered(self, event: QuestionView.Answered) -> None:
        out = event.outcome
        log_mode = QUIZ_MODES[self.mode].log_mode
        own_run = event.view.question.card_id.startswith("run:")  # not a deck card: nothing to schedule
        if not own_run:
            self.session.rate(event.view.question.card_id, out.rating, answer=event.answer[:2000],
                              mode=log_mode)
        self.score += int(out.correct)
        if not out.correct:
            self.missed.append((event.view.question, out))
        self.state = "answered"
        self.update_status()
        last = self.index + 1 >= len(self.questions)
        recorded = ("A question about your own run: scored here, not scheduled. " if own_run else
                    f"Recorded as [b]{RATING_NAMES[out.rating]} ({out.rating})[/b] in your review log. ")
        event.view.mount(Static(recorded + ("n: see the score" if last else "n: next question"),
                                classes="quiz-recorded"))
        self.query_one("#quiz-body").focus()
        self.refresh_bindings()

    def show_done(self) -> None:
        self.state = "done"
        total = len(self.questions) - len(self.flagged)  # flagged questions leave the score
        self.set_status(f"[b]{escape(self.round_title())}[/b] · finished · "
                        f"score {self.score}/{total}")
        lines = [f"[b]{self.score} of {total} right.[/b]"]
        if self.missed:
            lines += ["", f"[b]Missed ({len(self.missed)})[/b], with the right answers:"]
            for question, _outcome in self.missed:
                ask = question.prompt.splitlines()[-1] if question.card.kind in (
                    "reverse", "cloze") else question.prompt.splitlines()[0]
                # The question may be cut to one line; the right answer never is (Static wraps it).
                lines.append(f"✗ {escape(_short(ask))}\n  → [b]{escape(question.right_answer)}[/b]")
            lines += ["", "v: review these cards now (flashcards, schedule untouched)"]
        lines += ["", "r: another round · m: pick another mode · escape: back"]
        self._fill(Static("\n".join(lines), id="quiz-done"))
        self.query_one("#quiz-body").focus()
        self.refresh_bindings()

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "next":
            return self.state == "answered"
        if action == "submit":
            return self.state == "question"
        if action == "hint":
            view = self.view
            return isinstance(view, TypedView) and view.gives_hints and self.state == "question"
        if action == "again":
            return self.state == "done"
        if action == "review_missed":
            return self.state == "done" and bool(self.missed)
        if action == "modes":
            return self.state in ("answered", "done", "lesson")
        if action == "flag":
            return self.state in ("question", "answered") and self.index not in self.flagged
        return True

    def action_submit(self) -> None:
        if self.state == "question" and self.view is not None:
            self.view.submit()

    def action_hint(self) -> None:
        view = self.view
        if isinstance(view, TypedView) and not view.show_hint():
            self.notify("No hint for this question")

    def action_next(self) -> None:
        if self.state != "answered":
            return
        self.index += 1
        if self.index >= len(self.questions):
            self.show_done()
        else:
            self.show_question()

    def action_again(self) -> None:
        if self.mixes_formats and self.lesson:
            self.start_chapter(self.lesson)
        elif self.mode:
            self.start_mode(self.mode)

    def action_review_missed(self) -> None:
        ids = list(dict.fromkeys(question.card_id for question, _ in self.missed))
        if ids:
            navigation.open_screen(self.app, "flashcards", review=ids)

    def action_modes(self) -> None:
        self.show_modes()

    def action_flag(self) -> None:
        """This question is wrong: flag its card (with a note) and leave it out of the score."""
        if self.state not in ("question", "answered") or self.index in self.flagged:
            return
        question = self.questions[self.index]
        navigation.open_screen(self.app, "flag_note", question.card_id,
                               callback=lambda done: self._flagged(question, done))

    @keeps_screen
    def _flagged(self, question: quiz.QuizQuestion, done: bool | None) -> None:
        if not done or self.questions[self.index] is not question:
            return
        self.flagged.add(self.index)
        view = self.view
        if self.state == "answered" and view is not None and view.outcome is not None:
            try:
                self.session.undo()  # the answer leaves the schedule and the score
            except UndoError:  # answered again elsewhere since: the log keeps both
                pass
            self.score -= int(view.outcome.correct)
            self.missed = [(mq, o) for mq, o in self.missed if mq is not question]
        self.notify("Flagged: left out of your score until it is reviewed")
        if self.state == "question":  # nothing to answer: on to the next question
            self.state = "answered"
            self.action_next()
        else:
            self.update_status()
            self.refresh_bindings()

    def action_back(self) -> None:
        if self.state in ("pick",) or (self.start_lesson and self.state != "lesson"):
            self.app.pop_screen()
        else:  # leaving a round: answers already given are kept in the log
            self.show_modes()
