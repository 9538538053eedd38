"""The one settings store (minigpt.settings): declared settings, typed, over the progress database."""

from __future__ import annotations

import dataclasses
import re
from datetime import date
from pathlib import Path

import pytest

from minigpt import settings
from minigpt.errors import SettingError, TutorError
from minigpt.store import Store

REPO = Path(__file__).resolve().parents[1]

# Each setting: a value, and the text earlier versions stored for it (existing files keep their values).
EXAMPLES = [
    (settings.THEME, "ansi-dark", "ansi-dark"),
    (settings.NEW_PER_DAY, 35, "35"),
    (settings.NEW_FROM_READ_LESSONS, True, "1"),
    (settings.DESIRED_RETENTION, 0.85, "0.85"),
    (settings.PLAN_DATE, date(2026, 12, 17), "2026-12-17"),
    (settings.PLAN_LESSONS, ("attention", "mlp"), "attention,mlp"),
    (settings.FSRS_PARAMETERS, (0.25, 1.5, 3.0), "[0.25, 1.5, 3.0]"),
    (settings.FSRS_FIT, {"reviews": 600, "before": 0.34, "after": 0.32, "at": "2026-12-03"},
     '{"reviews": 600, "before": 0.34, "after": 0.32, "at": "2026-12-03"}'),
    (settings.REGRADE, "pending", "pending"),
    (settings.REGRADE_NOTICE, "A grading fix: …", "A grading fix: …"),
    (settings.LESSON_SEEN.of("intro"), ((0.0, 0.25), (0.5, 1.0)), "[[0.0, 0.25], [0.5, 1.0]]"),
    (settings.KEYS.of("quiz.submit"), "ctrl+j,f4", "ctrl+j,f4"),
    (settings.ALERTS_NOTIFY, False, "0"),
    (settings.ALERTS_ON_EVENT, "notify-send minigpt", "notify-send minigpt"),
    (settings.ALERTS_EVENTS, ("finished", "reviews_due"), "finished,reviews_due"),
]

# Text a hand edit (or a damaged file) may leave: each reads as the default.
UNREADABLE = [
    (settings.NEW_PER_DAY, "lots"), (settings.NEW_PER_DAY, "2.5"), (settings.NEW_PER_DAY, "-3"),
    (settings.NEW_FROM_READ_LESSONS, "yes"),
    (settings.DESIRED_RETENTION, "lots"), (settings.DESIRED_RETENTION, ""), (settings.DESIRED_RETENTION, "0.99"),
    (settings.DESIRED_RETENTION, "nan"),
    (settings.PLAN_DATE, "next friday"), (settings.PLAN_DATE, "2026-02-30"),
    (settings.FSRS_PARAMETERS, "[1, 2"), (settings.FSRS_PARAMETERS, '"123"'), (settings.FSRS_PARAMETERS, "[NaN]"),
    (settings.FSRS_PARAMETERS, "[" * 100_000),
    (settings.FSRS_FIT, "{}"), (settings.FSRS_FIT, '{"reviews": "many", "before": 1, "after": 1, "at": "x"}'),
    (settings.REGRADE, "maybe"),
    (settings.ALERTS_EVENTS, "finished,exploded"),
    (settings.LESSON_SEEN.of("intro"), "[[0.1]]"), (settings.LESSON_SEEN.of("intro"), '[["a", "b"]]'),
    (settings.LESSON_SEEN.of("intro"), "{}"),
    (settings.KEYS.of("quiz.submit"), "ctrl+j,,f4"), (settings.KEYS.of("quiz.submit"), " "),
]


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "progress.sqlite3")
    yield s
    s.close()


def test_every_setting_has_an_example_and_a_description():
    covered = {s.key for s, _, _ in EXAMPLES}
    assert {s.key for s in settings.declared()} <= covered, "add an example for a new setting here"
    for setting in settings.declared():
        assert setting.description and setting.accepts
        assert setting.default is None or setting.valid(setting.default), setting.key


@pytest.mark.parametrize(("setting", "value", "text"), EXAMPLES, ids=[s.key for s, _, _ in EXAMPLES])
def test_a_value_round_trips_through_a_real_file_as_the_text_earlier_versions_wrote(tmp_path, setting, value, text):
    path = tmp_path / "progress.sqlite3"
    first = Store(path)
    if first.get_setting(setting.key) is None:  # nothing stored yet (migration 3 stores the re-grade marker)
        assert settings.get(first, setting) == setting.default
    settings.set(first, setting, value)
    first.close()
    again = Store(path)
    assert again.get_setting(setting.key) == text
    assert settings.get(again, setting) == value
    again.set_setting(setting.key, text)  # a file an earlier version wrote reads the same
    assert settings.get(again, setting) == value
    settings.clear(again, setting)
    assert settings.get(again, setting) == setting.default
    again.close()


@pytest.mark.parametrize(("setting", "text"), UNREADABLE, ids=[f"{s.key}={t[:12]!r}" for s, t in UNREADABLE])
def test_unreadable_stored_text_reads_as_the_default(store, setting, text):
    store.set_setting(setting.key, text)
    assert settings.get(store, setting) == setting.default


def test_a_fresh_database_has_the_re_grade_pending_under_the_declared_key(store):
    assert settings.get(store, settings.REGRADE) == "pending"  # migration 3 writes the key literally


def test_defaults_when_nothing_is_stored(store):
    assert settings.get(store, settings.NEW_PER_DAY) == 20
    assert settings.get(store, settings.NEW_FROM_READ_LESSONS) is False
    assert settings.get(store, settings.DESIRED_RETENTION) == 0.9
    assert settings.get(store, settings.PLAN_DATE) is None and settings.get(store, settings.PLAN_LESSONS) == ()
    assert settings.get(store, settings.THEME) is None and settings.get(store, settings.FSRS_PARAMETERS) is None
    assert settings.get(store, settings.LESSON_SEEN.of("intro")) == ()
    assert settings.get(store, settings.REGRADE_NOTICE) is None


def test_an_unknown_key_is_refused(store):
    with pytest.raises(SettingError, match="no setting is called 'study.colour'.*study.new_per_day"):
        settings.lookup("study.colour")
    forged = dataclasses.replace(settings.NEW_PER_DAY, key="study.new_a_day")
    with pytest.raises(SettingError, match="no setting is called 'study.new_a_day'"):
        settings.get(store, forged)
    with pytest.raises(SettingError, match="no setting"):
        settings.set(store, forged, 3)
    retyped = dataclasses.replace(settings.NEW_PER_DAY, parse=float)  # a declared key, another type
    with pytest.raises(SettingError, match="not the setting minigpt.settings declares"):
        settings.get(store, retyped)
    assert store.get_setting("study.new_a_day") is None  # nothing was written


def test_lookup_finds_a_declared_setting_and_a_family_member():
    assert settings.lookup("study.new_per_day") is settings.NEW_PER_DAY
    assert settings.lookup("lesson.seen.intro") == settings.LESSON_SEEN.of("intro")
    with pytest.raises(SettingError):
        settings.lookup("lesson.seen.")
    with pytest.raises(SettingError, match="empty"):
        settings.LESSON_SEEN.of("")


@pytest.mark.parametrize(("setting", "value", "message"), [
    (settings.NEW_PER_DAY, -1, r"study.new_per_day \(new flashcards introduced a day\) must be a whole number of at least 0, not -1"),
    (settings.NEW_PER_DAY, "20", "must be a whole number of at least 0, not '20'"),
    (settings.NEW_PER_DAY, True, "must be a whole number"),
    (settings.DESIRED_RETENTION, 0.99, "must be a number from 0.7 to 0.97, not 0.99"),
    (settings.DESIRED_RETENTION, float("nan"), "must be a number from 0.7 to 0.97"),
    (settings.NEW_FROM_READ_LESSONS, 1, "must be True or False"),
    (settings.PLAN_LESSONS, ("a,b",), "must be a list of ids without commas"),
    (settings.PLAN_DATE, "2026-12-17", "must be a date or None"),
    (settings.REGRADE, "later", "must be one of pending, done"),
    (settings.FSRS_FIT, {"reviews": 3}, "must be a dict with reviews"),
    (settings.LESSON_SEEN.of("intro"), [(0.1,)], r"must be a list of \(start, end\) pairs"),
])
def test_set_refuses_a_bad_value_saying_what_the_setting_accepts(store, setting, value, message):
    with pytest.raises(SettingError, match=message) as caught:
        settings.set(store, setting, value)
    assert isinstance(caught.value, TutorError) and isinstance(caught.value, ValueError)
    assert store.get_setting(setting.key) is None or setting is settings.REGRADE  # nothing written


def test_write_belongs_to_the_callers_transaction(store):
    with store.transaction() as conn:
        settings.write(conn, settings.PLAN_DATE, date(2027, 1, 4))
        settings.write(conn, settings.PLAN_LESSONS, ["attention"])
    assert settings.get(store, settings.PLAN_DATE) == date(2027, 1, 4)
    assert settings.get(store, settings.PLAN_LESSONS) == ("attention",)
    with pytest.raises(ZeroDivisionError), store.transaction() as conn:
        settings.write(conn, settings.NEW_PER_DAY, 5)
        raise ZeroDivisionError("a failure later in the transaction")
    assert settings.get(store, settings.NEW_PER_DAY) == 20  # rolled back with it


def test_no_module_reaches_the_settings_table_but_through_minigpt_settings():
    """One store, one way in: the raw ``Store.get_setting``/``set_setting`` and SQL on the table
    appear only in ``minigpt/store.py`` (which defines them), its schema and ``minigpt/settings.py``."""
    raw = re.compile(r"\.(get|set)_setting\(|\b(from|into|update|table)\s+settings\b|settings\s*\(\s*key", re.IGNORECASE)
    allowed = {REPO / "minigpt" / "store.py", REPO / "minigpt" / "store_schema.py", REPO / "minigpt" / "settings.py"}
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
             for package in ("minigpt", "tui") for path in sorted((REPO / package).rglob("*.py"))
             if path not in allowed and "_bundled" not in path.parts
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if raw.search(line)]
    assert not found, "declare the setting in minigpt/settings.py and use settings.get/set:\n" + "\n".join(found)


def test_the_unused_settings_file_is_gone():
    from minigpt import paths

    assert not hasattr(paths, "settings_path")


def test_members_lists_a_familys_stored_items_and_those_that_cannot_be_read(store):
    settings.set(store, settings.KEYS.of("quiz.submit"), "ctrl+j")
    settings.set(store, settings.KEYS.of("home.lessons"), "j,f5")
    store.set_setting("keys.quiz.hint", "a,,b")  # a hand edit
    settings.set(store, settings.LESSON_SEEN.of("keys"), ((0.0, 1.0),))  # another family's item
    assert settings.members(store, settings.KEYS) == ({"home.lessons": "j,f5", "quiz.submit": "ctrl+j"}, ["quiz.hint"])
