"""A valid progress database with rows the tutor never wrote (issue 44 item 7): bad JSON in a card's
FSRS state, a due time that is not a time, interview minutes of 1e308, a review at "yesterday"
used to end `progress`, `fsrs status`, `fsrs fit` and `plan` in a traceback. Every reader now
leaves such a row out and the command says in one line how many rows it left out."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt.cli import main
from minigpt.skipped_rows import take_skipped_note
from minigpt.store import Store
from minigpt.study import rows
from minigpt.study import scheduler as sch

CARDS = ["term.lower-triangular-matrix", "term.masked-softmax", "term.causal-average"]
BAD = CARDS[1]

# (table, what is wrong, the UPDATE that makes it so): each a row the tutor never writes
CASES = [
    ("card_state", "fsrs_json not JSON", f"UPDATE card_state SET fsrs_json = '{{not json' WHERE card_id = '{BAD}'"),
    ("card_state", "fsrs_json a list", f"UPDATE card_state SET fsrs_json = '[]' WHERE card_id = '{BAD}'"),
    ("card_state", "fsrs_json state 9", f"UPDATE card_state SET fsrs_json = json_set(fsrs_json, '$.state', 9) "
                                        f"WHERE card_id = '{BAD}'"),
    ("card_state", "stability NaN", f"UPDATE card_state SET fsrs_json = replace(fsrs_json, '\"stability\": ', "
                                    f"'\"stability\": NaN, \"x\": ') WHERE card_id = '{BAD}'"),
    ("card_state", "stability 1e999", f"UPDATE card_state SET fsrs_json = replace(fsrs_json, '\"stability\": ', "
                                      f"'\"stability\": 1e999, \"x\": ') WHERE card_id = '{BAD}'"),
    ("card_state", "due not a date", f"UPDATE card_state SET due = 'not-a-date' WHERE card_id = '{BAD}'"),
    ("card_state", "due empty", f"UPDATE card_state SET due = '' WHERE card_id = '{BAD}'"),
    ("card_state", "due a blob", f"UPDATE card_state SET due = x'ff00' WHERE card_id = '{BAD}'"),
    ("card_state", "due in year 9999", f"UPDATE card_state SET due = '9999-12-31T23:59:59Z' WHERE card_id = '{BAD}'"),
    ("card_state", "buried_until a word", f"UPDATE card_state SET buried_until = 'soon' WHERE card_id = '{BAD}'"),
    ("card_state", "reps a word", f"UPDATE card_state SET reps = 'many' WHERE card_id = '{BAD}'"),
    ("card_state", "lapses negative", f"UPDATE card_state SET lapses = -3 WHERE card_id = '{BAD}'"),
    ("card_state", "fsrs_state 7", f"UPDATE card_state SET fsrs_state = 7 WHERE card_id = '{BAD}'"),
    ("interview", "minutes 1e308", "UPDATE interview SET minutes = 1e308"),
    ("interview", "score 1e308", "UPDATE interview SET score = 1e308"),
    ("interview", "score negative", "UPDATE interview SET score = -0.5"),
    ("interview", "questions a word", "UPDATE interview SET questions = 'x'"),
    ("interview", "started_at a word", "UPDATE interview SET started_at = 'last week'"),
    ("review_log", "reviewed_at yesterday", "UPDATE review_log SET reviewed_at = 'yesterday' WHERE id = 2"),
    ("review_log", "reviewed_at empty", "UPDATE review_log SET reviewed_at = '' WHERE id = 2"),
    ("review_log", "card_id a blob", "UPDATE review_log SET card_id = x'00ff' WHERE id = 2"),
    ("kata_progress", "kata passes a word", "INSERT INTO kata_progress(kata, opened_at, passes, updated_at) "
                                            "VALUES ('softmax', 'then', 'many', 'now')"),
    ("kata_progress", "kata seconds 1e308", "INSERT INTO kata_progress(kata, opened_at, passes, seconds_to_pass, "
                                            "updated_at) VALUES ('softmax', 'then', 1, 1e308, 'now')"),
]
# The findings' four cases, through the commands that read each table (in-process CLI calls).
FOUND = {"fsrs_json not JSON": [["progress"], ["plan"]], "due not a date": [["progress"], ["plan"]],
         "minutes 1e308": [["progress"]], "reviewed_at yesterday": [["fsrs", "status"], ["fsrs", "fit"]],
         "kata passes a word": [["progress"]]}


@pytest.fixture(autouse=True)
def _nothing_left_out_yet():
    take_skipped_note()  # (a note from another test's database is not this test's)


def build_database(folder: Path, update: str | None = None) -> Path:
    """Three cards reviewed three times each two days apart, one interview; then ``update``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "progress.sqlite3"
    Store(path).close()
    scheduler, start = sch.make_scheduler(), datetime.now(UTC) - timedelta(days=10)
    with closing(sqlite3.connect(path)) as conn, conn:
        for cid in CARDS:
            card = sch.new_card(cid, start)
            for k in range(3):
                at = start + timedelta(days=2 * k)
                card = sch.review(scheduler, card, 3, at)
                conn.execute("INSERT INTO review_log(card_id, rating, mode, reviewed_at, was_new) "
                             "VALUES (?, 3, 'review', ?, ?)", (cid, sch.iso(at), int(k == 0)))
            conn.execute("INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, lapses, updated_at) "
                         "VALUES (?, ?, ?, ?, 3, 0, ?)", (cid, sch.card_to_json(card), sch.iso(card.due),
                                                          card.state.value, sch.iso(start)))
        conn.execute("INSERT INTO interview(started_at, finished_at, minutes, questions, score, report) "
                     "VALUES (?, ?, 20, 5, 0.6, '{}')", (sch.iso(start), sch.iso(start)))
        conn.execute("INSERT INTO settings(key, value) VALUES ('plan.date', ?)",
                     ((date.today() + timedelta(days=30)).isoformat(),))
        if update:
            conn.execute(update)
    return path


def _no_traceback(result) -> None:
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


@pytest.mark.parametrize("what", FOUND)
def test_each_command_leaves_the_row_out_and_says_so_in_one_line(isolated_data_dir, what):
    table, _, update = next(c for c in CASES if c[1] == what)
    build_database(isolated_data_dir, update)
    for command in FOUND[what]:
        result = CliRunner().invoke(main, command)
        _no_traceback(result)
        notes = [line for line in result.output.splitlines() if line.startswith("note: ")]
        assert notes == [f"note: progress.sqlite3: 1 row could not be read and was left out ({table} 1)"], \
            (command, result.output)


@pytest.fixture(scope="module")
def deck():
    """The three cards and a few more: every reader runs over them in milliseconds."""
    from minigpt.study.cards import Deck
    from minigpt.study.decks import load_decks

    full = load_decks(numbers=False)
    return Deck({c.id: c for c in full if c.id in CARDS or c.lesson == full[CARDS[0]].lesson})


def _read_everything(store: Store, deck) -> None:
    """What the CLI commands and the app's flashcards, home, stats and plan read of the database."""
    from minigpt.katas import history
    from minigpt.study import fsrs_fit, interview_trend, plan, stats, workload
    from minigpt.study.readiness import retrievabilities
    from minigpt.study.review import StudySession

    session = StudySession(store, deck, lesson_order={})
    session.queue(), session.counts(), session.cram_queue(), session.next_due()
    [session.status(c) for c in CARDS]
    plan.make_plan(store, deck, date.today() + timedelta(days=30), new_per_day=5,
                       scheduler=session.scheduler, lesson_order={})
    workload.simulate(store, deck, 0.9, new_per_day=0, days=2)
    retrievabilities(store, sch.utc_now()), stats.due_forecast(store), stats.reviews_per_day(store), stats.weakest_cards(store)
    stats.button_breakdown(store), interview_trend.points(store), fsrs_fit.status_line(store)
    history.totals(store, []), history.record(store, "softmax")


@pytest.mark.parametrize(("table", "what", "update"), CASES, ids=[c[1] for c in CASES])
def test_every_reader_leaves_the_row_out_and_counts_it_once(tmp_path, deck, table, what, update):
    store = Store(build_database(tmp_path, update))
    try:
        _read_everything(store, deck)
    finally:
        store.close()
    assert take_skipped_note() == f"progress.sqlite3: 1 row could not be read and was left out ({table} 1)"


def test_an_intact_database_prints_no_note(isolated_data_dir):
    build_database(isolated_data_dir)
    for command in (["progress"], ["plan"], ["fsrs", "status"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 0, result.output
        assert "note:" not in result.output


def test_the_study_session_queue_and_stats_skip_a_bad_row(tmp_path, deck):
    from minigpt.study import stats
    from minigpt.study.readiness import retrievabilities
    from minigpt.study.review import StudySession

    path = build_database(tmp_path, CASES[0][2])
    build_database(tmp_path / "b", "UPDATE review_log SET reviewed_at = 'yesterday'")
    store = Store(path)
    session = StudySession(store, deck, lesson_order={})
    assert BAD not in session.queue() and BAD not in session.cram_queue()
    assert session.status(BAD).fsrs is None
    session.counts(), stats.due_forecast(store), retrievabilities(store, sch.utc_now())
    session.rate(BAD, 3)  # an answer to the card starts its schedule again; the old row stays in the log
    assert session.status(BAD).fsrs is not None
    store.close()
    other = Store(tmp_path / "b" / "progress.sqlite3")
    assert stats.reviews_per_day(other).per_day == {}
    other.close()
    note = take_skipped_note()
    assert "card_state 1" in note and "review_log 9" in note


def test_a_row_counts_once_however_many_readers_meet_it(isolated_data_dir):
    build_database(isolated_data_dir, CASES[0][2])
    result = CliRunner().invoke(main, ["plan"])
    assert result.output.count("note: ") == 1 and "(card_state 1)" in result.output


@pytest.mark.parametrize("duration", ["1e308", "-5", "'slow'", "x'00'"])
def test_a_bad_answer_time_drops_the_time_and_keeps_the_review(tmp_path, duration):
    store = Store(build_database(tmp_path, f"UPDATE review_log SET duration_ms = {duration} WHERE id = 2"))
    try:
        found = rows.reviews(store)
    finally:
        store.close()
    assert len(found) == 9 and found[1].duration_ms is None
    assert take_skipped_note() is None


async def test_the_apps_home_and_flashcards_leave_the_rows_out_and_say_so(tmp_path, make_app, quick_decks):
    from textual.widgets import Static

    from tests.helpers.waiting import until
    from tui.study.flashcards import FlashcardsScreen

    path = build_database(tmp_path, CASES[0][2])  # the four rows of the findings, in one database
    with closing(sqlite3.connect(path)) as conn, conn:
        for what in ("due not a date", "minutes 1e308", "reviewed_at yesterday"):
            conn.execute(next(c[2] for c in CASES if c[1] == what).replace(f"'{BAD}'", f"'{CARDS[2]}'"))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: "Cards to study" in str(app.screen.query_one("#glance", Static).render()))
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FlashcardsScreen) and app.screen.session is not None)
        assert app.screen.current not in (BAD, CARDS[2])
        told = " ".join(n.message for n in app._notifications)
        assert "could not be read" in told and "card_state 2" in told, told
