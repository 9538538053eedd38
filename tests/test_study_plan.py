"""Study to a date (minigpt.study.plan): a simulated calendar of real study sessions on a real
SQLite file meets the target on the day; infeasible plans say so; local days across midnight and
the summer-time changes (Europe/Berlin, end of March and end of October)."""

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fsrs import Rating, Scheduler

from minigpt.errors import PlanError
from minigpt.store import Store
from minigpt.study import plan as planning
from minigpt.study.days import at_local, local_date, start_of_local_day, start_of_next_local_day
from minigpt.study.decks import load_decks
from minigpt.study.review import StudySession

ROOT = Path(__file__).resolve().parent.parent
BERLIN = ZoneInfo("Europe/Berlin")
SCOPE = ("training", "layer-norm")


@pytest.fixture(scope="module")
def deck():
    return load_decks(ROOT / "lessons" / "decks")


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "progress.sqlite3")
    yield s
    s.close()


def study_day(session: StudySession, start: datetime) -> int:
    """Answer Good to everything the session offers on the learner's day that ``start`` is in
    (a learning card is taken when it comes due); returns how many answers that was."""
    t, answers = start, 0
    end = start_of_next_local_day(start, session.tz)
    while answers < 2000:
        cid = session.next_card(t)
        if cid is None:
            later = session.next_due(t)
            if later is None or later >= end or later - t > timedelta(hours=1):
                return answers
            t = later
            continue
        session.rate(cid, 3, now=t)
        answers += 1
        t += timedelta(seconds=30)
    raise AssertionError("the queue never emptied")


@pytest.mark.parametrize("retention", [0.9, 0.7])
def test_a_simulated_calendar_meets_the_target_on_the_day(store, deck, retention):
    """Two weeks of study, one sitting a day at 09:00 in Berlin across the October change: every
    card in scope is last reviewed before the day and predicted ≥ 0.9 on it. At retention 0.7
    fsrs alone would leave cards staler than that: the plan brings them forward."""
    session = StudySession(store, deck, desired_retention=retention, tz=BERLIN)
    first = date(2026, 10, 19)
    interview = first + timedelta(days=14)
    planning.set_plan(store, interview, SCOPE)
    plan = session.plan(at_local(first, time(9), BERLIN))
    in_scope = [c.id for c in deck if c.lesson in SCOPE]
    assert plan is not None and plan.feasible and plan.in_scope == len(in_scope)
    assert sum(d.new for d in plan.days) == len(in_scope) and plan.days[-1].new == 0
    shares = [d.new for d in plan.days[:-1]]
    assert max(shares) - min(shares) <= 1                    # new cards spread evenly
    brought_forward = 0
    for i in range(14):
        morning = at_local(first + timedelta(days=i), time(9), BERLIN)
        today = session.plan(morning)
        brought_forward += len(today.ahead_ids_today)
        assert today.feasible, today.problems
        study_day(session, morning)
        assert session.plan(morning).new_left_today == 0
    judged = at_local(interview, time(12), BERLIN)
    fsrs = Scheduler(desired_retention=retention, enable_fuzzing=False)
    for cid in in_scope:
        card = session.status(cid).fsrs
        assert card is not None, cid
        assert local_date(card.last_review, BERLIN) < interview
        assert fsrs.get_card_retrievability(card, judged) >= 0.9, cid
    assert brought_forward > 0 or retention >= 0.9         # at 0.7 fsrs alone would miss the day
    assert session.plan(judged) is None                      # the day has come: study as usual


def test_the_plan_s_own_answers_replayed_by_fsrs_meet_the_target(store, deck):
    """The simulated answers, replayed by a fresh fsrs scheduler, leave every card ≥ 0.9 on the day."""
    now = datetime(2026, 3, 20, 8, tzinfo=UTC)            # across the March change in Berlin
    interview = date(2026, 4, 2)
    plan = planning.make_plan(store, deck, interview, lessons=SCOPE, new_per_day=20, tz=BERLIN,
                              scheduler=Scheduler(enable_fuzzing=False), lesson_order={}, now=now)
    fsrs = Scheduler(enable_fuzzing=False)
    cards = {}
    from minigpt.study.scheduler import new_card

    for cid, when in plan.answers:
        cards[cid], _ = fsrs.review_card(cards.get(cid) or new_card(cid, when), Rating.Good, when)
    judged = at_local(interview, time(12), BERLIN)
    assert set(cards) == set(plan.retrievability)
    assert all(local_date(c.last_review, BERLIN) < interview for c in cards.values())
    assert min(fsrs.get_card_retrievability(c, judged) for c in cards.values()) >= 0.9
    assert [d.day for d in plan.days][:2] == [date(2026, 3, 20), date(2026, 3, 21)] and len(plan.days) == 13


def test_an_infeasible_plan_says_so_and_is_still_the_best_it_can_make(store, deck):
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    plan = planning.make_plan(store, deck, date(2026, 12, 15), new_per_day=20, tz=BERLIN,
                              scheduler=Scheduler(enable_fuzzing=False), lesson_order={}, now=now)
    total = len(deck.cards)
    days = -(-total // 20)
    assert not plan.feasible
    assert f"{total} new cards at 20 a day take {days} days" in plan.problems[0]
    assert [d.new for d in plan.days] == [20] * 13 + [0]      # the cap every day, the eve for reviews
    assert len(plan.below_target) == total - 13 * 20           # the unseen ones
    enough = -(-total // 13)  # the whole deck over the 13 days before the eve
    plan = planning.make_plan(store, deck, date(2026, 12, 15), new_per_day=enough, tz=BERLIN,
                              scheduler=Scheduler(enable_fuzzing=False), lesson_order={}, now=now)
    assert plan.feasible and plan.new_share_today == enough


def test_dates_and_lessons_refused_in_words(store, deck):
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    kw = dict(new_per_day=20, scheduler=Scheduler(), lesson_order={}, now=now, tz=BERLIN)
    with pytest.raises(PlanError, match="has passed"):
        planning.make_plan(store, deck, date(2026, 11, 30), **kw)
    with pytest.raises(PlanError, match="no cards of lesson nope"):
        planning.make_plan(store, deck, date(2026, 12, 9), lessons=("nope",), **kw)
    with pytest.raises(PlanError, match="not a date"):
        planning.parse_date("17/12/2026")
    today = planning.make_plan(store, deck, date(2026, 12, 1), **kw)
    assert today.days == [] and "today" in today.problems[0]


def test_without_a_date_nothing_changes(store, deck):
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    session = StudySession(store, deck, tz=BERLIN)
    before = session.queue(now)
    assert session.plan(now) is None and len(before) == 20
    planning.set_plan(store, date(2026, 12, 9), ("layer-norm",))
    planned = session.queue(now)
    assert {deck[c].lesson for c in planned} == {"layer-norm"} and session.plan(now).new_left_today == len(planned)
    planning.set_plan(store, None)
    assert session.queue(now) == before


def test_local_days_around_midnight_and_the_summer_time_changes():
    # The last Sunday of March: Berlin's day is 23 hours long; of October, 25 hours.
    march = datetime(2026, 3, 29, 12, tzinfo=UTC)
    assert start_of_local_day(march, BERLIN) == datetime(2026, 3, 28, 23, tzinfo=UTC)
    assert start_of_next_local_day(march, BERLIN) == datetime(2026, 3, 29, 22, tzinfo=UTC)
    october = datetime(2026, 10, 25, 12, tzinfo=UTC)
    assert start_of_next_local_day(october, BERLIN) - start_of_local_day(october, BERLIN) == timedelta(hours=25)
    # 23:30 UTC is already tomorrow in Berlin, still today in New York.
    late = datetime(2026, 12, 1, 23, 30, tzinfo=UTC)
    assert local_date(late, BERLIN) == date(2026, 12, 2)
    assert local_date(late, ZoneInfo("America/New_York")) == date(2026, 12, 1)
    assert at_local(date(2026, 3, 29), time(12), BERLIN) == datetime(2026, 3, 29, 10, tzinfo=UTC)


def test_new_cards_a_day_count_the_learner_s_day_not_utc(store, deck):
    """Three new cards at 23:30 UTC (00:30 in Berlin) belong to the Berlin day just begun: at
    22:00 UTC the same evening (23:00 in Berlin) the allowance is whole again."""
    session = StudySession(store, deck, tz=BERLIN)
    session.set_new_per_day(3)
    late = datetime(2026, 3, 28, 23, 30, tzinfo=UTC)      # 00:30 on the 29th, the short day
    for cid in session.queue(late)[:3]:
        session.rate(cid, 3, now=late)
    assert session.new_introduced_today(late) == 3
    assert session.new_introduced_today(datetime(2026, 3, 29, 21, 59, tzinfo=UTC)) == 3   # 23:59 CEST
    assert session.new_introduced_today(datetime(2026, 3, 29, 22, 0, tzinfo=UTC)) == 0    # midnight
    until = session.bury(session.queue(late)[0], now=late)
    assert until == datetime(2026, 3, 29, 22, tzinfo=UTC)    # the next local midnight, summer time


def test_the_dashboard_counts_the_learner_s_days(store, deck):
    from minigpt.study import stats

    new_york = ZoneInfo("America/New_York")
    session = StudySession(store, deck, tz=new_york)
    evening = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)          # 20:00 on Dec 1 in New York
    for cid in session.queue(evening)[:4]:
        session.rate(cid, 3, now=evening)
    activity = stats.reviews_per_day(store, days=7, now=evening, tz=new_york)
    assert activity.per_day == {date(2026, 12, 1): 4} and activity.streak == 1
    forecast = stats.due_forecast(store, days=3, now=evening, tz=new_york)
    assert forecast[0][0] == date(2026, 12, 1) and sum(n for _, n in forecast) == 4


def test_the_headline_says_the_day_the_pace_needed_and_today_s_work(store, deck):
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    kw = dict(tz=BERLIN, scheduler=Scheduler(enable_fuzzing=False), lesson_order={}, now=now)
    plan = planning.make_plan(store, deck, date(2026, 12, 15), new_per_day=20, **kw)
    needed = -(-len(deck.cards) // 13)  # 13 days for new cards: the eve is for reviews
    assert plan.needed_per_day == needed and plan.new_per_day == 20
    assert planning.headline(plan) == ["Interview in 14 d", f"off pace: {needed} new a day needed (now 20)",
                                       f"today: 20 new + {plan.days[0].reviews} reviews"]
    plan = planning.make_plan(store, deck, date(2026, 12, 15), new_per_day=needed, **kw)
    assert planning.headline(plan)[1] == "on pace"


def test_the_ahead_column_shows_only_when_a_day_has_reviews_brought_forward(store, deck):
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    plan = planning.make_plan(store, deck, date(2026, 12, 4), lessons=SCOPE, new_per_day=99, tz=BERLIN,
                              scheduler=Scheduler(enable_fuzzing=False), lesson_order={}, now=now)
    table = "\n".join(planning.describe(plan))
    assert ("(ahead)" in table) == any(d.ahead for d in plan.days)
    plan.days = [planning.PlanDay(d.day, d.new, d.reviews, 0) for d in plan.days]
    assert "(ahead)" not in "\n".join(planning.describe(plan))  # nothing brought forward: no column
    plan.days[1] = planning.PlanDay(plan.days[1].day, 0, 5, 2)
    lines = planning.describe(plan)
    assert lines[3].split() == ["day", "new", "reviews", "(ahead)", "total"]
    assert lines[5].split()[-2:] == ["(2)", "5"] and any(line.startswith("(ahead): ") for line in lines)
    assert planning.scope_change(("training",), ()) == "Lessons in scope: every lesson (replacing training)"
    assert planning.scope_change(SCOPE, SCOPE) == ""
