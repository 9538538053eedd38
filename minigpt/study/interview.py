"""Mock interviews: a timed set of mixed questions, weighted to the weakest lessons, and its report.

Kinds of question, as an interviewer asks them:

- ``define``: a term card's term; the learner says what it is, sees the definition, grades 0 or 1;
- ``explain``: a question card; the learner explains, then ticks the rubric's key points made
  (the card's checklist); the score is the share of points made, the others are "missed";
- ``compute``: a generative numeric card (``minigpt.study.templates``), drawn as the quiz's number
  format draws it (``minigpt.study.formats``), typed and graded by the one numeric parser;
- ``kata``: one short coding exercise at most, only where edited code may run (``minigpt serve``
  without ``--allow-code`` refuses it, so the plan leaves it out); passed or not;
- ``run``: a question about the learner's own runs with their numbers
  (:mod:`minigpt.study.run_questions`), graded as an explain question, on its rubric.

:func:`plan` picks the questions: each draws a lesson among those read with weight
``1 - readiness + FLOOR`` (the weakest come up most, none never), then a kind that lesson can be
asked in (each kind is one ``Kind`` entry of ``KINDS``: the cards it asks about and how it asks),
turning the kinds round so a session mixes them, never one concept twice in any form
(:func:`same_concept`) nor a lesson past its :func:`fair_share` while others have questions left.
The question count fits the length (``MINUTES_PER_QUESTION``). :class:`Report` sums a session up:
score per lesson and per kind, time per question, the missed rubric points and what to do next.
Reports are kept in the ``interview`` table (migration 5; their trend over time:
``minigpt.study.interview_trend``), with what was typed (``interview_answer``, migration 6); one
ended early is ``partial`` and out of the trend unless the learner keeps it; a paused one waits in
``minigpt.study.interview_pause``; and
every answer is rated through the study session (a miss is Again), so the flashcard schedule
learns from it.
"""

from __future__ import annotations

import functools
import json
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from minigpt.store import Store
from minigpt.study.distractors import is_related
from minigpt.study.formats import QUIZ_MODES
from minigpt.study.matching import normalize
from minigpt.study.review import MAX_LOGGED_ANSWER_CHARS

DEFAULT_MINUTES = 30
MINUTES_PER_QUESTION = 2.5   # an interviewer's pace: 30 minutes is twelve questions
FLOOR = 0.1                  # a lesson at full readiness still comes up now and then
RATING_FOR_SCORE = ((1.0, 3), (0.5, 2), (0.0, 1))  # score at least … → Good, Hard, Again


@dataclass(frozen=True)
class Question:
    kind: str
    lesson: str
    card_id: str = ""            # define, explain, compute
    kata: str = ""               # kata
    prompt: str = ""
    answer: str = ""             # the definition / model answer / worked solution
    rubric: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)  # compute: the inputs drawn for this instance
    note: str = ""               # compute: how exact the answer must be ("exact shape", "within 1%…")


def _define(deck, lesson: str, card, rng: random.Random) -> Question:
    return Question("define", lesson, card.id, prompt=f"Define “{card.term}”.", answer=card.definition)


def _explain(deck, lesson: str, card, rng: random.Random) -> Question:
    return Question("explain", lesson, card.id, prompt=card.front, answer=card.back, rubric=card.checklist)


def _compute(deck, lesson: str, card, rng: random.Random) -> Question:
    """The quiz's number format draws the instance (new inputs at every asking)."""
    asked = QUIZ_MODES["numeric"].build(deck, card, rng)
    item = asked.card.numeric
    return Question("compute", lesson, card.id, prompt=asked.prompt, answer=item.solution,
                    params=dict(item.params), note=asked.note)


def _kata(deck, lesson: str, name: str, rng: random.Random) -> Question:
    return Question("kata", lesson, kata=name, prompt=f"Write the kata {name!r}.")


def _run(deck, lesson: str, item, rng: random.Random) -> Question:
    return Question("run", lesson, prompt=item.prompt, answer=item.answer, rubric=item.rubric)


@dataclass(frozen=True)
class Kind:
    id: str
    title: str
    ask: Callable[..., Question]   # (deck, lesson, a card or a kata's name, rng) → the question
    suits: Callable[..., bool] | None = None  # the cards it asks about; None: it asks katas or runs
    once: bool = False             # one question of this kind at most (a kata takes minutes)
    source: str = "cards"          # what it asks about: "cards", "katas" or "runs"


# The kinds, in the order a session turns them round.
KINDS: dict[str, Kind] = {k.id: k for k in (
    Kind("define", "Define", _define, suits=lambda card: card.kind == "term" and bool(card.definition)),
    Kind("explain", "Explain", _explain, suits=lambda card: card.kind == "question" and bool(card.checklist)),
    Kind("compute", "Compute", _compute, suits=lambda card: card.kind == "numeric" and bool(card.template)),
    Kind("kata", "Kata", _kata, once=True, source="katas"),
    Kind("run", "Your run", _run, source="runs"),
)}
RUBRIC_KINDS = ("explain", "run")  # answered in words, then scored by the rubric points ticked


def _is_card(item) -> bool:
    return hasattr(item, "note_id")


def _key(item) -> str:
    """What a question is about: a card's or a run question's id, or a kata's name (none is asked twice)."""
    return item if isinstance(item, str) else item.id


_normal = functools.lru_cache(maxsize=8192)(normalize)  # a plan compares each card many times


def _names(card) -> set[str]:
    """The normalised names a term or reverse card gives its concept (term and aliases)."""
    if card.kind not in ("term", "reverse") or not card.term:
        return set()
    return {_normal(name) for name in (card.term, *card.aliases) if name.strip()}


def same_concept(a, b) -> bool:
    """Two cards that ask about one concept: siblings (one note), declared related, one term
    under two cards, or a card whose question names the other's term ("What did the 2017 paper
    “Attention Is All You Need” contribute?" and "Define “Attention Is All You Need”")."""
    if a.note_id == b.note_id or is_related(a, b):
        return True
    for term_card, other in ((a, b), (b, a)):
        names = _names(term_card)
        if names & _names(other):
            return True
        words = f" {_normal(other.front)} "
        if any(f" {name} " in words for name in names):
            return True
    return False


@dataclass
class Answer:
    question: Question
    score: float                 # 0..1
    seconds: float
    skipped: bool = False
    missed: tuple[str, ...] = ()  # rubric points not made (explain)
    typed: str = ""              # what the learner typed (kept in the interview_answer table)


@dataclass
class Report:
    minutes: float
    answers: list[Answer] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    readiness: float | None = None  # the overall readiness it started from (the trend shows both)
    partial: bool = False        # ended early by the learner: out of the trend unless kept

    @property
    def score(self) -> float:
        return sum(a.score for a in self.answers) / len(self.answers) if self.answers else 0.0

    def by(self, key) -> dict[str, float]:
        groups: dict[str, list[float]] = {}
        for a in self.answers:
            groups.setdefault(key(a), []).append(a.score)
        return {k: sum(v) / len(v) for k, v in groups.items()}

    @property
    def per_lesson(self) -> dict[str, float]:
        return self.by(lambda a: a.question.lesson)

    @property
    def per_kind(self) -> dict[str, float]:
        return self.by(lambda a: a.question.kind)

    @property
    def missed_points(self) -> list[str]:
        return [p for a in self.answers for p in a.missed]

    def next_steps(self) -> list[str]:
        """The lessons scored lowest (below full marks), weakest first, with what to do."""
        low = sorted((s, lesson) for lesson, s in self.per_lesson.items() if s < 1.0)[:3]
        steps = []
        for s, lesson in low:  # one line in the report at 80 columns: a long title is clipped
            title = self.titles.get(lesson, lesson)
            title = title if len(title) <= 32 else title[:31] + "…"
            steps.append(f"reread {title} ({round(100 * s)}%), then its chapter quiz")
        if any(a.skipped for a in self.answers):
            steps.append("the skipped questions are due again in your flashcards")
        return steps or ["all right: try a longer interview, or one after a few days' gap"]

    def text(self) -> str:
        """The report as plain lines (the screen shows it; markup-free)."""
        n = len(self.answers)
        lines = [f"Score {round(100 * self.score)}% on {n} question{'s' * (n != 1)} "
                 f"in a {self.minutes:g}-minute interview{' (ended early)' * self.partial}", "", "By kind"]
        lines += [f"  {KINDS[k].title:<8} {round(100 * s):3d}%" for k, s in self.per_kind.items()]
        lines += ["", "By lesson"]
        lines += [f"  {round(100 * s):3d}% {self.titles.get(k, k)}" for k, s in self.per_lesson.items()]
        lines += ["", "Time per question"]
        lines += [f"  {i:2d}. {KINDS[a.question.kind].title:<8} {a.seconds:5.0f}s "
                  f"{'skipped' if a.skipped else f'{round(100 * a.score)}%':>4}"
                  for i, a in enumerate(self.answers, 1)]
        if self.missed_points:
            lines += ["", "Missed rubric points", *(f"  - {p}" for p in self.missed_points)]
        lines += ["", "Next", *(f"  - {s}" for s in self.next_steps())]
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({"minutes": self.minutes, "score": self.score, "readiness": self.readiness,
                           "per_lesson": self.per_lesson, "per_kind": self.per_kind,
                           "partial": self.partial,
                           "answers": [{k: v for k, v in asdict(a).items() if k != "typed"}
                                       for a in self.answers]})  # typed: interview_answer


def question_count(minutes: float) -> int:
    """Questions for a length: one per MINUTES_PER_QUESTION, three at least (the clock may end
    a short interview first)."""
    return max(3, round(minutes / MINUTES_PER_QUESTION))


def in_scope(read: list[str], scope: tuple[str, ...] | list[str]) -> list[str]:
    """The lessons read that an interview day's plan covers (``minigpt plan --lessons``); all those
    read when it names none of them or has no scope."""
    wanted = set(scope)
    return [lesson for lesson in read if lesson in wanted] or list(read)


def day_line(day, today) -> str:
    """The interview day set with ``minigpt plan`` (dates), in words; "" when there is none."""
    if day is None:
        return ""
    left = (day - today).days
    when = ("today" if left == 0 else "tomorrow" if left == 1 else f"in {left} days" if left > 0
            else f"{-left} day{'s' * (left != -1)} ago")
    return f"Interview day {day.isoformat()}, {when}"


def candidates(deck, lessons: list[str], katas_by_lesson: dict[str, list[str]],
               allow_code: bool, run_questions: list | None = None) -> dict[tuple[str, str], list]:
    """(lesson, kind) → what can be asked: cards for define/explain/compute, kata names for kata,
    questions about the learner's runs (:class:`minigpt.study.run_questions.RunQuestion`) for run."""
    out: dict[tuple[str, str], list] = {}
    wanted = set(lessons)
    for card in deck:
        if card.lesson not in wanted:
            continue
        for kind in KINDS.values():
            if kind.suits is not None and kind.suits(card):
                out.setdefault((card.lesson, kind.id), []).append(card)
                break
    if allow_code:
        for kind in (k for k in KINDS.values() if k.source == "katas"):
            for lesson in lessons:
                if katas_by_lesson.get(lesson):
                    out[(lesson, kind.id)] = list(katas_by_lesson[lesson])
    for kind in (k for k in KINDS.values() if k.source == "runs"):
        for item in run_questions or ():
            if item.lesson in wanted:
                out.setdefault((item.lesson, kind.id), []).append(item)
    return out


def lesson_weights(lessons: list[str], figures: dict[str, float]) -> dict[str, float]:
    """The draw weight of each lesson: ``1 - readiness + FLOOR``."""
    return {lesson: 1.0 - figures.get(lesson, 0.0) + FLOOR for lesson in lessons}


def fair_share(questions: int, lessons: int) -> int:
    """The most questions one lesson may take while others in scope still have some to ask:
    an even share and one more (so the weakest still come up most), never over half."""
    if lessons <= 1:
        return questions
    return max(1, min(math.ceil(questions / lessons) + 1, math.ceil(questions / 2)))


def plan(deck, lessons: list[str], figures: dict[str, float], *, minutes: float = DEFAULT_MINUTES,
         katas_by_lesson: dict[str, list[str]] | None = None, allow_code: bool = False,
         run_questions: list | None = None, seed: int | None = None) -> list[Question]:
    """The interview's questions: lessons drawn by weakness, kinds turned round, no concept twice
    (:func:`same_concept`), no lesson past its :func:`fair_share` while the others have questions
    left, one kata at most. ``lessons``: the lessons read (course order); ``figures``: readiness;
    ``run_questions``: questions about the learner's runs, asked in the lessons they practise."""
    rng = random.Random(seed)
    pool = candidates(deck, lessons, katas_by_lesson or {}, allow_code, run_questions)
    # The turn goes round the kinds there can be: without runs, plans stay what they were.
    order = [k for k in KINDS if KINDS[k].source != "runs" or any(key[1] == k for key in pool)]
    usable = [lesson for lesson in lessons if any((lesson, k) in pool for k in KINDS)]
    if not usable:
        return []
    count = question_count(minutes)
    share = fair_share(count, len(usable))
    weights = lesson_weights(usable, figures)
    used: set[str] = set()
    asked_cards: list = []
    out: list[Question] = []
    turn = 0

    def left_for(lesson: str) -> dict[str, list]:
        kinds = [k for k in KINDS if pool.get((lesson, k))
                 and not (KINDS[k].once and any(q.kind == k for q in out))]
        left = {k: [c for c in pool[(lesson, k)] if _key(c) not in used
                    and (not _is_card(c) or not any(same_concept(c, a) for a in asked_cards))]
                for k in kinds}
        return {k: v for k, v in left.items() if v}

    dry: set[str] = set()  # lessons with nothing left to ask (asking more never refills one)
    for capped in (True, False):  # past the fair share only when the other lessons run dry
        while len(out) < count:
            asked = Counter(q.lesson for q in out)
            drawable = [x for x in usable if x not in dry and not (capped and asked[x] >= share)]
            if not drawable:
                break
            lesson = rng.choices(drawable, weights=[weights[x] for x in drawable])[0]
            left = left_for(lesson)
            if not left:
                dry.add(lesson)
                continue
            kind = min(left, key=lambda k: ((order.index(k) - turn) % len(order), k))
            turn += 1
            choice = rng.choice(left[kind])
            used.add(_key(choice))
            if _is_card(choice):
                asked_cards.append(choice)
            out.append(KINDS[kind].ask(deck, lesson, choice, rng))
    return out


def grade_compute(deck, question: Question, text: str):
    """A compute answer checked by the one numeric parser against the instance asked."""
    from minigpt.study import numeric

    card = deck[question.card_id]
    item = numeric.generate(card.numeric.generator, question.params or card.numeric.params,
                            tolerance=card.numeric.tolerance, abs_tolerance=card.numeric.abs_tolerance)
    return numeric.check(item, text)


def rating_for(score: float) -> int:
    for least, rating in RATING_FOR_SCORE:
        if score >= least:
            return rating
    return 1


def feed_schedule(session, answer: Answer) -> None:
    """Rate the card through the study session (mode "interview"): a miss or a skip is Again."""
    if not answer.question.card_id or session.deck.get(answer.question.card_id) is None:
        return
    rating = 1 if answer.skipped else rating_for(answer.score)
    session.rate(answer.question.card_id, rating, duration_ms=int(answer.seconds * 1000), mode="interview")


def save(store: Store, report: Report, started_at: str, finished_at: str, *,
         in_trend: bool | None = None) -> int:
    """Keep a finished interview, and what was typed for each question (migration 6). A partial
    one (ended early) stays out of the trend unless ``in_trend`` says to keep it there."""
    keep = not report.partial if in_trend is None else in_trend
    with store.transaction() as conn:
        cur = conn.execute("INSERT INTO interview(started_at, finished_at, minutes, questions, score, report,"
                           " partial, in_trend) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (started_at, finished_at, report.minutes, len(report.answers), report.score,
                            report.to_json(), int(report.partial), int(keep)))
        conn.executemany("INSERT INTO interview_answer(interview_id, number, card_id, kata, typed)"
                         " VALUES (?, ?, ?, ?, ?)",
                         [(cur.lastrowid, n, a.question.card_id, a.question.kata, a.typed[:MAX_LOGGED_ANSWER_CHARS])
                          for n, a in enumerate(report.answers, 1) if a.typed])
    return cur.lastrowid


def keep_in_trend(store: Store, interview_id: int, keep: bool = True) -> None:
    """Put an interview ended early into the trend after all (or take it out)."""
    with store.transaction() as conn:
        conn.execute("UPDATE interview SET in_trend = ? WHERE id = ?", (int(keep), interview_id))


def typed_answers(store: Store, interview_id: int) -> dict[int, str]:
    """Question number → what the learner typed for it, in one kept interview."""
    rows = store.conn.execute("SELECT number, typed FROM interview_answer WHERE interview_id = ?",
                              (interview_id,))
    return {int(n): typed for n, typed in rows}
