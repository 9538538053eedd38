"""A thin wrapper around the ``fsrs`` package: default FSRS parameters, UTC times, our card ids.

We never schedule by hand: every next state comes from ``fsrs.Scheduler.review_card``. Fuzzing
is off so that the interval shown on a button ("Good · 3d") is the interval the card then gets.
An FSRS card is stored as JSON (``Card.to_dict``); its numeric ``card_id`` is derived from our
string id (a stable hash) only because fsrs requires one — our string id is the real key.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime, timedelta

from fsrs import Card, Rating, Scheduler, State

from minigpt import settings
from minigpt.errors import BadRowError, StudySettingError
from minigpt.study import days
from minigpt.study.formats import RATING_NAMES  # noqa: F401 (re-export)

RATINGS = {1: Rating.Again, 2: Rating.Hard, 3: Rating.Good, 4: Rating.Easy}
DESIRED_RETENTION = settings.DESIRED_RETENTION.default
RETENTION_RANGE = (settings.DESIRED_RETENTION.low, settings.DESIRED_RETENTION.high)


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(dt: datetime | None) -> datetime:
    """fsrs insists on tz-aware UTC datetimes; naive ones are taken to be UTC already."""
    if dt is None:
        return utc_now()
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def iso(dt: datetime) -> str:
    """A sortable UTC timestamp for SQL columns (microseconds kept, always the same width)."""
    return as_utc(dt).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


YEARS = (1900, 9000)  # a stored time outside these is not one the tutor wrote (and would overflow)


def from_iso(text: str) -> datetime:
    """A stored UTC time; ``BadRowError`` for anything else (not text, not a time, out of range)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError, AttributeError):
        raise BadRowError(f"{str(text)[:40]!r} is not a time") from None
    if not YEARS[0] <= moment.year <= YEARS[1]:
        raise BadRowError(f"{text[:40]!r} is out of range")
    return as_utc(moment)


def fsrs_card_id(card_id: str) -> int:
    return int.from_bytes(hashlib.sha256(card_id.encode()).digest()[:6], "big")


def make_scheduler(desired_retention: float = DESIRED_RETENTION,
                   parameters: tuple[float, ...] | None = None) -> Scheduler:
    if parameters is None:
        return Scheduler(desired_retention=desired_retention, enable_fuzzing=False)
    return Scheduler(parameters=parameters, desired_retention=desired_retention, enable_fuzzing=False)


def desired_retention(store) -> float:
    """The learner's desired retention (a setting; a missing or unreadable one is the default)."""
    return settings.get(store, settings.DESIRED_RETENTION)


def set_desired_retention(store, value: float) -> float:
    low, high = RETENTION_RANGE
    if not low <= value <= high:
        raise StudySettingError(f"desired retention must be between {low:.0%} and {high:.0%}, not {value:.0%}")
    settings.set(store, settings.DESIRED_RETENTION, value)
    return value


def fitted_parameters(store) -> tuple[float, ...] | None:
    """Parameters fitted to the learner's own log, or None (fsrs's defaults); a damaged value is
    ignored rather than trusted (fsrs checks each against its bounds)."""
    params = settings.get(store, settings.FSRS_PARAMETERS)
    if params is None:
        return None
    try:
        Scheduler(parameters=params)
    except (ValueError, TypeError):
        return None
    return params


def learner_scheduler(store, desired: float | None = None) -> Scheduler:
    """The scheduler for this learner: their desired retention and fitted parameters, if any."""
    return make_scheduler(desired if desired is not None else desired_retention(store), fitted_parameters(store))


def new_card(card_id: str, now: datetime | None = None) -> Card:
    return Card(card_id=fsrs_card_id(card_id), due=as_utc(now))


def card_to_json(card: Card) -> str:
    return json.dumps(card.to_dict(), sort_keys=True)


def card_from_json(text: str) -> Card:
    """A stored FSRS card; ``BadRowError`` when the JSON is not one (a state, step, stability,
    difficulty or time that fsrs would choke on later is refused here)."""
    try:
        data = json.loads(text)
        card = Card.from_dict(data)
        numbers = [x for x in (card.stability, card.difficulty) if x is not None]
        ok = (isinstance(data, dict) and (card.step is None or (isinstance(card.step, int) and 0 <= card.step < 100))
              and all(isinstance(x, float) and math.isfinite(x) and x > 0 for x in numbers))
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, RecursionError):
        ok = False
    if not ok:
        raise BadRowError("the card's FSRS state is not readable")
    card.due = from_iso(data["due"])
    card.last_review = from_iso(data["last_review"]) if card.last_review is not None else None
    return card


def review(scheduler: Scheduler, card: Card, rating: int, now: datetime | None = None) -> Card:
    if rating not in RATINGS:
        raise ValueError(f"rating must be 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy), not {rating!r}")
    new, _log = scheduler.review_card(card, RATINGS[rating], as_utc(now))
    return new


def preview(scheduler: Scheduler, card: Card, now: datetime | None = None) -> dict[int, timedelta]:
    """The interval each of the four ratings would give, without changing anything."""
    now = as_utc(now)
    return {r: review(scheduler, card, r, now).due - now for r in RATINGS}


def format_interval(delta: timedelta) -> str:
    """Short label for a button: 1m, 10m, 3h, 4d, 2mo, 1.5y."""
    s = max(0, delta.total_seconds())
    if s < 3600:
        return f"{max(1, round(s / 60))}m"
    if s < 86400:
        return f"{round(s / 3600)}h"
    days = s / 86400
    if days < 30:
        return f"{round(days)}d"
    if days < 365:
        return f"{days / 30:.1f}".rstrip("0").rstrip(".") + "mo"
    return f"{days / 365:.1f}".rstrip("0").rstrip(".") + "y"


def describe_time(when: datetime, now: datetime | None = None) -> str:
    """A moment in the learner's own clock and words: "at 14:05", "tomorrow at 00:00 (local time)",
    "on 2026-12-05 at 09:30". Stored times are UTC; the learner reads local time."""
    local = days.local(when)
    today = days.local(now).date()
    clock = f"{local:%H:%M}"
    if local.date() == today:
        return f"at {clock}"
    if local.date() == today + timedelta(days=1):
        return f"tomorrow at {clock}"
    return f"on {local:%Y-%m-%d} at {clock}"


def is_lapse(before: Card, rating: int) -> bool:
    """A lapse: forgetting (Again) a card that had graduated to the Review state."""
    return rating == 1 and before.state == State.Review

