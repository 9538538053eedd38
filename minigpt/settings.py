"""Every setting, declared once, read and written typed: the one settings store.

The store is the ``settings`` table of the progress database (``minigpt.store``): a setting is as
durable as the progress beside it, is written in a transaction like the rest and travels with the
one file. Each setting is declared below once, with its key, type, default, a one-line description
and its bounds or choices; ``get`` and ``set`` are the only way the library and the app reach the
table (``tests/test_settings.py`` fails on any other module that does):

- ``get(store, SETTING)``: the stored value, or the default when none is stored, or when the text
  stored cannot be read or is out of bounds (a hand-edited file never breaks a screen);
- ``set(store, SETTING, value)``: written in a transaction of its own; ``write(conn, SETTING,
  value)`` inside one the caller holds (a value saved together with other rows); ``clear`` removes
  it. A value of the wrong type or out of bounds raises :class:`~minigpt.errors.SettingError`,
  naming the setting and what it accepts;
- a setting not declared here is refused by all of them (``lookup`` finds one by its key).

Some keys are state the app keeps rather than choices the learner makes (the re-grade marker, the
last FSRS fit, the parts of each lesson seen); they are declared here too, so the table holds
nothing undeclared. A key family (``LESSON_SEEN``) declares one setting per item: its key is the
family's prefix and the item's id. The keys are the ones earlier versions wrote, so an existing
progress file keeps its values.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Generic, TypeVar

from minigpt.errors import SettingError
from minigpt.store import Store

T = TypeVar("T")

# What parsing text that is not the setting's type raises: the value read is then the default.
_UNREADABLE = (ValueError, TypeError, ArithmeticError, RecursionError)


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One declared setting: its key in the table, its type and default, what it accepts."""

    key: str
    default: T
    description: str
    accepts: str                                      # a valid value, in words, for error messages
    parse: Callable[[str], T] = field(repr=False)     # stored text → value; raises on text it cannot read
    dump: Callable[[T], str] = field(repr=False)      # value → stored text
    valid: Callable[[Any], bool] = field(repr=False)  # of the type and within the bounds
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family(Generic[T]):
    """Settings of one kind, one per item (a lesson): the key is the prefix and the item's id."""

    prefix: str
    template: Setting[T]

    def of(self, item: str) -> Setting[T]:
        if not item:
            raise SettingError(f"{self.prefix}…: the item's id is empty")
        return dataclasses.replace(self.template, key=self.prefix + item)


# -- the types ---------------------------------------------------------------------------------------
def _real(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) or math.isfinite(value)  # isfinite overflows on a huge int


def _range_words(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    if low is not None:
        return f" of at least {low:g}"
    return f" of at most {high:g}" if high is not None else ""


def _within(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def whole(key: str, default: int, description: str, *, low: int | None = None, high: int | None = None) -> Setting[int]:
    return Setting(key, default, description, "a whole number" + _range_words(low, high), parse=int, dump=str,
                   valid=lambda v: isinstance(v, int) and not isinstance(v, bool) and _within(v, low, high),
                   low=low, high=high)


def number(key: str, default: float, description: str, *, low: float, high: float, digits: int) -> Setting[float]:
    return Setting(key, default, description, "a number" + _range_words(low, high), parse=float,
                   dump=lambda v: f"{v:.{digits}f}", valid=lambda v: _real(v) and _within(v, low, high),
                   low=low, high=high)


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(text)
    return text == "1"


def flag(key: str, default: bool, description: str) -> Setting[bool]:
    return Setting(key, default, description, "True or False", parse=_flag, dump=lambda v: "1" if v else "0",
                   valid=lambda v: isinstance(v, bool))


def text(key: str, description: str, *, default: str | None = None, choices: tuple[str, ...] = ()) -> Setting[str | None]:
    accepts = "one of " + ", ".join(choices) if choices else "a text"
    return Setting(key, default, description, accepts, parse=str, dump=str,
                   valid=lambda v: isinstance(v, str) and (not choices or v in choices), choices=choices)


def _day(text: str) -> date | None:
    text = text.strip()
    return date.fromisoformat(text) if text else None


def day(key: str, description: str) -> Setting[date | None]:
    """A date, or None (stored as an empty text)."""
    return Setting(key, None, description, "a date or None", parse=_day, dump=lambda v: v.isoformat() if v else "",
                   valid=lambda v: v is None or (isinstance(v, date) and not isinstance(v, datetime)))


def names(key: str, description: str) -> Setting[tuple[str, ...]]:
    """Ids stored comma-separated (empty ones dropped)."""
    return Setting(key, (), description, "a list of ids without commas",
                   parse=lambda t: tuple(x for x in t.split(",") if x), dump=",".join,
                   valid=lambda v: isinstance(v, tuple | list) and all(isinstance(x, str) and x and "," not in x for x in v))


def _json_list(text: str) -> list:
    value = json.loads(text)
    if not isinstance(value, list):
        raise TypeError("not a JSON list")
    return value


def numbers(key: str, description: str) -> Setting[tuple[float, ...] | None]:
    """A list of numbers stored as JSON, or None when there is none."""
    return Setting(key, None, description, "a list of finite numbers",
                   parse=lambda t: tuple(float(x) for x in _json_list(t)), dump=lambda v: json.dumps(list(v)),
                   valid=lambda v: isinstance(v, tuple | list) and all(_real(x) for x in v))


def _key_list_ok(value: Any) -> bool:
    parts = value.split(",") if isinstance(value, str) else []
    return bool(parts) and all(p and p.isprintable() and not p.isspace() and p == p.strip() for p in parts)


def key_list(key: str, description: str) -> Setting[str | None]:
    """Keys as Textual names them, comma-separated ("ctrl+j", "f5,j"); the app checks the names."""
    return Setting(key, None, description, "keys separated by commas, as in ctrl+j or f5,j", parse=str, dump=str,
                   valid=_key_list_ok)


def _pair(value: Any) -> bool:
    return isinstance(value, tuple | list) and len(value) == 2 and all(_real(x) for x in value)


def spans(key: str, description: str) -> Setting[tuple[tuple[float, float], ...]]:
    """Pairs of numbers (start, end) stored as a JSON list of pairs."""
    return Setting(key, (), description, "a list of (start, end) pairs of numbers",
                   parse=lambda t: tuple((float(a), float(b)) for a, b in _json_list(t)),
                   dump=lambda v: json.dumps([[a, b] for a, b in v]),
                   valid=lambda v: isinstance(v, tuple | list) and all(_pair(x) for x in v))


def _record_ok(value: Any, fields: Mapping[str, type]) -> bool:
    return isinstance(value, dict) and all(
        name in value and (isinstance(value[name], kind) if kind is not float else isinstance(value[name], int | float))
        and not isinstance(value[name], bool) for name, kind in fields.items())


def _record(text: str, fields: Mapping[str, type]) -> dict:
    value = json.loads(text)
    if not _record_ok(value, fields):
        raise ValueError("not a record with " + ", ".join(fields))
    return value


def record(key: str, description: str, fields: Mapping[str, type]) -> Setting[dict | None]:
    """A JSON object with these fields (of these types), or None when there is none."""
    return Setting(key, None, description, "a dict with " + ", ".join(f"{k} ({t.__name__})" for k, t in fields.items()),
                   parse=lambda t: _record(t, fields), dump=json.dumps, valid=lambda v: _record_ok(v, fields))


# -- the settings ------------------------------------------------------------------------------------
THEME = text("theme", "the app's colour theme, as the learner last chose it (none: chosen by the terminal)")
NEW_PER_DAY = whole("study.new_per_day", 20, "new flashcards introduced a day", low=0)
NEW_FROM_READ_LESSONS = flag("study.new_from_read_lessons", False, "introduce only cards of lessons already read")
DESIRED_RETENTION = number("study.desired_retention", 0.9,
                           "the chance of recalling a card when it is due, which FSRS schedules for "
                           "(below 0.7 much is forgotten, above 0.97 the load explodes)",
                           low=0.70, high=0.97, digits=2)
PLAN_DATE = day("plan.date", "the interview day the study plan aims at, a local date (none: study as usual)")
PLAN_LESSONS = names("plan.lessons", "the lessons the study plan covers (none: every lesson)")
FSRS_PARAMETERS = numbers("fsrs.parameters", "FSRS parameters fitted to the learner's own log (none: fsrs's defaults)")
FSRS_FIT = record("fsrs.fit", "what the last FSRS fit found: reviews counted, log loss before and after, its day",
                  {"reviews": int, "before": float, "after": float, "at": str})
# Alerts (minigpt.alerts delivers them). The command is a user setting or a flag only, never a run's.
ALERT_EVENT_NAMES = ("finished", "stopped", "diverged", "failed", "target_reached", "sweep_finished", "reviews_due")
ALERTS_NOTIFY = flag("alerts.notify", True, "ring the terminal bell and show a desktop notification on a run's events")
ALERTS_ON_EVENT = text("alerts.on_event", "a command run on each alert, the event in its environment "
                                          "(MINIGPT_EVENT, MINIGPT_RUN, MINIGPT_VAL_LOSS …); none: no command")
ALERTS_EVENTS = dataclasses.replace(
    names("alerts.events", "the events that alert, of " + ", ".join(ALERT_EVENT_NAMES)),
    default=("finished", "diverged", "failed", "target_reached", "sweep_finished"),
    accepts="event names separated by commas, of " + ", ".join(ALERT_EVENT_NAMES),
    valid=lambda v: isinstance(v, tuple | list) and all(x in ALERT_EVENT_NAMES for x in v))
# State the app keeps, not the learner's choices:
REGRADE = text("study.regrade", "re-grading typed answers after a grader fix: pending (set by migration 3), then done",
               default="done", choices=("pending", "done"))
REGRADE_NOTICE = text("study.regrade_notice", "what the re-grade repaired, shown once by the app, then cleared")
# One per binding id of the app (tui.keymap checks the id, the key names and clashes before storing).
KEYS = Family("keys.", key_list("keys.", "the keys of one of the app's actions, named by its binding id"))
LESSON_SEEN = Family("lesson.seen.", spans("lesson.seen.", "the parts of a lesson (0..1 of its height) that have been on screen"))

_DECLARED: dict[str, Setting] = {v.key: v for v in list(globals().values()) if isinstance(v, Setting)}
_FAMILIES: tuple[Family, ...] = tuple(v for v in list(globals().values()) if isinstance(v, Family))


def declared() -> list[Setting]:
    """Every single setting (key families aside), in the order declared."""
    return list(_DECLARED.values())


def lookup(key: str) -> Setting:
    """The setting stored under ``key``; SettingError for a key nothing declares."""
    if key in _DECLARED:
        return _DECLARED[key]
    for family in _FAMILIES:
        if key.startswith(family.prefix) and len(key) > len(family.prefix):
            return family.of(key.removeprefix(family.prefix))
    raise SettingError(f"no setting is called {key!r}; the settings are {', '.join(_DECLARED)} "
                       f"and {', '.join(f.prefix + '<id>' for f in _FAMILIES)}")


def _checked(setting: Setting[T]) -> Setting[T]:
    if lookup(setting.key) != setting:
        raise SettingError(f"{setting.key!r} is not the setting minigpt.settings declares under that key")
    return setting


def _stored_text(setting: Setting[T], value: T) -> str:
    if not _checked(setting).valid(value):
        raise SettingError(f"the setting {setting.key} ({setting.description}) must be {setting.accepts}, not {value!r}")
    return setting.dump(value)


# -- reading and writing ------------------------------------------------------------------------------
def get(store: Store, setting: Setting[T]) -> T:
    """The stored value; the default when none is stored or the text stored is not a valid value."""
    raw = store.get_setting(_checked(setting).key)
    if raw is None:
        return setting.default
    try:
        value = setting.parse(raw)
    except _UNREADABLE:
        return setting.default
    return value if setting.valid(value) else setting.default


def members(store: Store, family: Family[T]) -> tuple[dict[str, T], list[str]]:
    """The items of ``family`` stored (item id → value), and the items whose stored text is not a
    valid value (the caller says so; ``get`` would read them as the default)."""
    rows = store.conn.execute("SELECT key, value FROM settings WHERE substr(key, 1, ?) = ? ORDER BY key",
                              (len(family.prefix), family.prefix)).fetchall()
    values, unreadable = {}, []
    for key, raw in rows:
        item, setting = key[len(family.prefix):], family.template
        try:
            value = setting.parse(raw)
        except _UNREADABLE:
            value = None
        if item and value is not None and setting.valid(value):
            values[item] = value
        elif item:
            unreadable.append(item)
    return values, unreadable


def set(store: Store, setting: Setting[T], value: T) -> None:
    """Store ``value`` in a transaction of its own (StoreError when it cannot be written)."""
    store.set_setting(setting.key, _stored_text(setting, value))


def write(conn: sqlite3.Connection, setting: Setting[T], value: T) -> None:
    """Store ``value`` inside a transaction the caller holds (``with store.transaction() as conn``)."""
    conn.execute("INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)", (setting.key, _stored_text(setting, value)))


def clear(store: Store, setting: Setting[T]) -> None:
    """Remove the stored value: ``get`` gives the default again."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM settings WHERE key = ?", (_checked(setting).key,))
