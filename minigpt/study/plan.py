"""Study to a date: the daily queue planned so every card in scope is fresh on an interview day.

The learner sets a date (a local date, setting ``plan.date``) and the lessons in scope
(``plan.lessons``, comma-separated; empty means every lesson). The plan is a day-by-day
simulation with the learner's own fsrs scheduler (its parameters and desired retention), in
which every answer is Good (the expected path; a card forgotten in reality is re-planned the
next day, since the plan is recomputed from the progress database every time it is read):

- new cards are spread evenly over the days before the last one (the last day before the
  interview is for reviews), never more a day than the learner's new-cards-a-day setting;
- a card is reviewed when fsrs makes it due;
- after each review, a card whose next due day falls on or after the interview and whose
  retrievability on the day would be below ``TARGET`` (0.9) is brought forward: its desired
  retention is, in effect, raised so it is seen once more before the day. The day chosen is one
  after which it is fresh enough on the day, and among those the least loaded (ties: the later),
  which spreads the load instead of piling it on the eve.

When the plan cannot be met (too many new cards for the days and the daily cap, or a card that
cannot reach the target) it says why, and is still the best plan it can make.
Retrievability "on the day" is fsrs's, at local noon of the interview day. Simulated reviews
happen now for today and at local noon on later days (``minigpt.study.days`` handles DST).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo

from fsrs import Card, Rating, Scheduler, State

from minigpt import settings
from minigpt.errors import PlanError
from minigpt.store import Store
from minigpt.study import rows
from minigpt.study import scheduler as sch
from minigpt.study.cards import Deck
from minigpt.study.days import at_local, local_date, start_of_local_day
from minigpt.study.flags import left_out
from minigpt.study.order import new_card_order

TARGET = 0.9            # the retrievability every card in scope must have on the day
REVIEW_CLOCK = time(12)  # simulated reviews of a coming day, and the moment judged on the day
TOP_UP_WINDOW = 21       # a card brought forward is placed among the last this many days
MAX_DAYS = 3 * 365


@dataclass(frozen=True)
class PlanDay:
    day: date
    new: int        # new cards introduced that day
    reviews: int    # cards reviewed that day (due ones and ones brought forward)
    ahead: int      # of the reviews, those brought forward for the interview

    @property
    def load(self) -> int:
        return self.new + self.reviews


@dataclass
class Plan:
    interview: date
    today: date
    lessons: tuple[str, ...]        # in scope; empty = every lesson
    in_scope: int                   # cards in scope (not suspended, not flagged)
    days: list[PlanDay]
    new_share_today: int            # today's share of new cards (those done today included)
    new_done_today: int             # new cards of the scope introduced today
    new_ids_today: list[str]        # the new cards still to introduce today, in study order
    ahead_ids_today: list[str]      # cards to review today for the interview although not due
    retrievability: dict[str, float]   # each card's predicted retrievability on the day
    answers: list[tuple[str, datetime]] = field(default_factory=list)  # the simulated Goods, in order
    problems: list[str] = field(default_factory=list)
    new_per_day: int = 0            # the learner's new-cards-a-day setting the plan kept to
    needed_per_day: int = 0         # new cards a day the scope needs to be introduced in time
    katas_due: list[tuple[date, str]] = field(default_factory=list)  # (day, kata): re-solves before the day

    @property
    def feasible(self) -> bool:
        return not self.problems

    @property
    def days_left(self) -> int:
        return (self.interview - self.today).days

    @property
    def below_target(self) -> list[str]:
        return sorted(c for c, r in self.retrievability.items() if r < TARGET)

    @property
    def new_left_today(self) -> int:
        return len(self.new_ids_today)


# -- settings ------------------------------------------------------------------------------------
def parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise PlanError(f"{text!r} is not a date: write it as YYYY-MM-DD, e.g. 2026-12-17") from None


def set_plan(store: Store, interview: date | None, lessons: list[str] | tuple[str, ...] = ()) -> None:
    """Keep the interview date and the lessons in scope (None: no date, studying as usual)."""
    with store.transaction() as conn:  # the date and its scope together
        settings.write(conn, settings.PLAN_DATE, interview)
        settings.write(conn, settings.PLAN_LESSONS, tuple(lessons))


def plan_settings(store: Store) -> tuple[date | None, tuple[str, ...]]:
    """The interview date (None: none, or one hand-edited past reading) and the lessons in scope."""
    return settings.get(store, settings.PLAN_DATE), settings.get(store, settings.PLAN_LESSONS)


class PlanCache:
    """A study session's plan, made again only when something it reads has changed (an answer,
    a suspension, a setting, the day): the queue asks for it at every card."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._plan: Plan | None = None

    def get(self, store: Store, deck: Deck, *, now: datetime | None, tz: tzinfo | None, new_per_day: int,
            scheduler: Scheduler, lesson_order: Callable[[], dict[str, int]]) -> Plan | None:
        now = sch.as_utc(now)
        day, lessons = plan_settings(store)
        marks = store.conn.execute("SELECT (SELECT MAX(id) FROM review_log), (SELECT MAX(updated_at) FROM card_state), "
                                   "(SELECT COUNT(*) FROM card_state), (SELECT COUNT(*) FROM card_flag)").fetchone()
        key = (day, lessons, tuple(marks), local_date(now, tz), new_per_day, len(deck.cards))
        if key != self._key:
            try:
                made = make_plan(store, deck, day, lessons=lessons, now=now, tz=tz, new_per_day=new_per_day,
                                 scheduler=scheduler, lesson_order=lesson_order()) if day else None
            except PlanError:  # the date has passed, a lesson is gone: study as usual
                made = None
            self._key, self._plan = key, (made if made is not None and made.days else None)
        return self._plan


# -- the simulation --------------------------------------------------------------------------------
def even_split(total: int, days: int, cap: int) -> list[int]:
    """``total`` new cards over ``days`` days, as evenly as can be (the larger shares first),
    never more than ``cap`` a day."""
    if days <= 0:
        return []
    base, extra = divmod(total, days)
    return [min(cap, base + (i < extra)) for i in range(days)]


def _answer_good(scheduler: Scheduler, card: Card, when: datetime,
                 answers: list[tuple[str, datetime]], card_id: str) -> Card:
    """One study of a card on a day: Good, and again Good at each learning step until it has
    graduated (a new card takes two answers, 10 minutes apart, with the default steps)."""
    card, _ = scheduler.review_card(card, Rating.Good, when)
    answers.append((card_id, when))
    while card.state != State.Review:
        when = max(when, card.due)
        card, _ = scheduler.review_card(card, Rating.Good, when)
        answers.append((card_id, when))
    return card


def make_plan(store: Store, deck: Deck, interview: date, *, lessons: tuple[str, ...] = (),
              new_per_day: int, scheduler: Scheduler, lesson_order: dict[str, int],
              now: datetime | None = None, tz: tzinfo | None = None) -> Plan:
    """The plan from the progress database as it is now (see the module's docstring)."""
    now = sch.as_utc(now)
    today = local_date(now, tz)
    n = (interview - today).days
    if n < 0:
        raise PlanError(f"the date {interview.isoformat()} has passed (today is {today.isoformat()})")
    if n > MAX_DAYS:
        raise PlanError(f"the date {interview.isoformat()} is more than {MAX_DAYS // 365} years away")
    known = {c.lesson for c in deck}
    unknown = [x for x in lessons if x not in known]
    if unknown:
        raise PlanError(f"no cards of lesson {', '.join(unknown)} (lesson ids: {', '.join(sorted(filter(None, known)))})")
    out = left_out(store)  # flagged or suspended
    states, unreadable = rows.card_states(store)  # a card whose row cannot be read is left out
    scope = [c.id for c in deck if (not lessons or c.lesson in lessons) and c.id not in out
             and c.id not in unreadable]
    cards: dict[str, Card] = {}
    new: list[str] = []
    for cid in scope:
        row = states.get(cid)
        if row is None or row["reps"] == 0:
            new.append(cid)
        else:
            cards[cid] = sch.card_from_json(row["fsrs_json"])
    new = new_card_order(deck, new, lesson_order)
    in_scope = set(scope)
    done_ids = {r[0] for r in store.conn.execute(
        "SELECT card_id FROM review_log WHERE was_new = 1 AND mode = 'review' AND reviewed_at >= ?",
        (sch.iso(start_of_local_day(now, tz)),))} & in_scope
    judged_at = at_local(interview, REVIEW_CLOCK, tz)
    days = [today + timedelta(days=i) for i in range(n)]
    moments = [now] + [at_local(d, REVIEW_CLOCK, tz) for d in days[1:]]
    problems: list[str] = []

    # New cards: the days before the last one (the eve is for reviews), evenly, at most the cap.
    window = max(1, n - 1) if n >= 2 else n
    cap = max(0, new_per_day)
    shares = even_split(len(new) + len(done_ids), window, cap)
    today_share = shares[0] if shares else 0
    left_today = max(0, today_share - len(done_ids)) if shares else 0
    shares = ([left_today] + even_split(len(new) - left_today, window - 1, cap)) if shares else []
    shares += [0] * (n - len(shares))
    unseen = len(new) - sum(shares)
    total = len(new) + len(done_ids)
    needed = math.ceil(total / window) if window else 0
    if unseen > 0 and n:
        if cap == 0:
            problems.append(f"{len(new)} new cards and new cards a day is 0: raise it to introduce them")
        else:
            need = math.ceil(total / cap)
            problems.append(
                f"{total} new cards at {cap} a day take {need} days to introduce; there "
                f"{'is' if window == 1 else 'are'} {window} before the interview (the eve is for reviews): "
                f"{unseen} stay unseen. Raise new cards a day to {needed}, "
                f"or move the date to {(today + timedelta(days=need + 1)).isoformat()} or later")

    load = list(shares)            # cards planned per day so far, for placing top-ups
    due_on: dict[int, list[str]] = {}
    answers: list[tuple[str, datetime]] = []
    reviews = [0] * n
    ahead = [0] * n
    ahead_today: list[str] = []

    def retr(card: Card) -> float:
        return float(scheduler.get_card_retrievability(card, judged_at))

    def place(cid: str, card: Card, after: int) -> None:
        """Where a card goes next: its due day before the interview, or a day brought forward,
        or nowhere (fresh enough on the day, or no day left that would make it so)."""
        due_day = (local_date(card.due, tz) - today).days
        if due_day < n:
            i = max(due_day, after + 1)
            if i < n:
                due_on.setdefault(i, []).append(cid)
                load[i] += 1
            return
        if retr(card) >= TARGET:
            return
        best = None
        for i in range(n - 1, max(after, n - 1 - TOP_UP_WINDOW), -1):
            trial, _ = scheduler.review_card(card, Rating.Good, moments[i])
            if retr(trial) >= TARGET and (best is None or load[i] < load[best]):
                best = i
        if best is not None:
            due_on.setdefault(best, []).append(cid)
            load[best] += 1
            ahead[best] += 1
            if best == 0:
                ahead_today.append(cid)

    for cid, card in cards.items() if n else ():
        if local_date(card.due, tz) <= today:
            due_on.setdefault(0, []).append(cid)
            load[0] += 1
        else:
            place(cid, card, -1)
    queue_new = iter(new)
    new_today: list[str] = []
    for i in range(n):
        for cid in dict.fromkeys(due_on.get(i, [])):
            cards[cid] = _answer_good(scheduler, cards[cid], moments[i], answers, cid)
            reviews[i] += 1
            place(cid, cards[cid], i)
        for _ in range(shares[i]):
            cid = next(queue_new)
            if i == 0:
                new_today.append(cid)
            cards[cid] = _answer_good(scheduler, sch.new_card(cid, moments[i]), moments[i], answers, cid)
            place(cid, cards[cid], i)

    final = {cid: (retr(c) if cid in cards else 0.0) for cid, c in cards.items()}
    final.update({cid: 0.0 for cid in new if cid not in cards})
    weak = [c for c in final if c in cards and final[c] < TARGET]
    if weak and n:
        problems.append(f"{len(weak)} card{'s' * (len(weak) != 1)} cannot reach {TARGET:.0%} on the day "
                        f"even when reviewed the day before")
    if n == 0:
        problems.append("the interview is today: nothing is left to plan")
    plan_days = [PlanDay(d, shares[i], reviews[i], ahead[i]) for i, d in enumerate(days)]
    return Plan(interview, today, tuple(lessons), len(scope), plan_days, today_share,
                len(done_ids), new_today, ahead_today, final, answers, problems, cap, needed,
                kata_days(store, scheduler, days, moments, tz))


def kata_days(store: Store, scheduler: Scheduler, days: list[date], moments: list[datetime],
              tz: tzinfo | None) -> list[tuple[date, str]]:
    """(day, kata) for each re-solve of a passed kata that falls due before the interview (an
    overdue one today), each solved cleanly (Good) as the plan assumes of cards."""
    from minigpt.study import kata_cards

    out = []
    for kata in kata_cards.cards(store).values():
        card = kata.card
        for day, moment in zip(days, moments):
            if local_date(card.due, tz) <= day:
                out.append((day, kata.kata))
                card, _ = scheduler.review_card(card, Rating.Good, moment)
    return sorted(out)


def headline(plan: Plan) -> list[str]:
    """The plan in three short parts for the home screen: when, on pace or what pace it needs,
    and today's work ("Interview in 14 d", "off pace: 39 new a day needed (now 20)",
    "today: 6 new + 25 reviews")."""
    when = "Interview today" if plan.days_left == 0 else f"Interview in {plan.days_left} d"
    if plan.feasible:
        pace = "on pace"
    elif plan.needed_per_day > plan.new_per_day:
        pace = f"off pace: {plan.needed_per_day} new a day needed (now {plan.new_per_day})"
    else:
        weak = len(plan.below_target)
        pace = f"off pace: {weak} card{'s' * (weak != 1)} below {TARGET:.0%} on the day"
    if not plan.days:
        return [when, pace]
    return [when, pace, f"today: {plan.new_left_today} new + {plan.days[0].reviews} reviews"]


def scope_change(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    """What a new scope replaced, in words ("" when it is the same)."""
    if tuple(before) == tuple(after):
        return ""
    words = lambda lessons: ", ".join(lessons) if lessons else "every lesson"  # noqa: E731
    return f"Lessons in scope: {words(after)} (replacing {words(before)})"


def describe(plan: Plan) -> list[str]:
    """The plan as plain lines of text (the CLI and the plan screen): a summary, what cannot be met, then one line a day."""
    scope = ", ".join(plan.lessons) if plan.lessons else "every lesson"
    lines = [f"Interview on {plan.interview:%a %Y-%m-%d}, in {plan.days_left} day{'s' * (plan.days_left != 1)}: "
             f"{plan.in_scope} cards ({scope})",
             "On track: every card ≥ 90% on the day, if you study each day's share." if plan.feasible
             else "Not on track: " + " ".join(plan.problems)]
    if plan.days:
        # The (ahead) column only when some day has reviews brought forward: empty, it read as broken.
        shows_ahead = any(d.ahead for d in plan.days)
        ahead_head = f" {'(ahead)':>8}" if shows_ahead else ""
        lines += ["", f"{'day':<15} {'new':>4} {'reviews':>8}{ahead_head} {'total':>6}"]
        for i, d in enumerate(plan.days):
            label = "today" if i == 0 else f"{d.day:%a %Y-%m-%d}"
            ahead = f" {f'({d.ahead})' if d.ahead else '':>8}" if shows_ahead else ""
            lines.append(f"{label:<15} {d.new:>4} {d.reviews:>8}{ahead} {d.load:>6}")
        lines += [""]
        if shows_ahead:
            lines += ["(ahead): of the reviews, those brought forward so the card is fresh on the day"]
        lines += [f"New cards a day: {plan.new_per_day} (today {plan.new_done_today} of "
                  f"{plan.new_share_today} done)"]
    if plan.katas_due:
        by_day: dict[date, list[str]] = {}
        for day, kata in plan.katas_due:
            by_day.setdefault(day, []).append(kata)
        lines += ["", "Katas to re-solve from the stub (minigpt kata due):"]
        lines += [f"  {'today' if day == plan.today else f'{day:%a %Y-%m-%d}':<15} {', '.join(names)}"
                  for day, names in by_day.items()]
    return lines
