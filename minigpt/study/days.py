"""The learner's days: local dates, not UTC ones (a learner in Berlin studying at 00:30 is on the
new day; one in New York studying at 20:00 has not yet started the next UTC day).

Stored times stay UTC (``minigpt.study.scheduler``); a day boundary is computed in the learner's
time zone. ``tz=None`` means the machine's own zone, asked per moment, so the summer-time change
is followed (a fixed offset taken once would be an hour wrong for half the year). Tests pass a
``zoneinfo.ZoneInfo``. Local midnight always exists in the zones that change at 02:00 or 03:00;
where a zone skips midnight itself, the moment is read forward as Python's ``fold`` rules say.

A machine zone Python cannot represent (``TZ=UTC-99``, ``TZ=<+99>-99``: an offset of a day or
more) is replaced by UTC, and :func:`zone_warning` says so in one line (the CLI prints it once,
the app shows it once): days are then counted in UTC rather than the study stopping on an error.
Every local moment of the study goes through this module, the scheduler's wording included.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, date, datetime, time, timedelta, tzinfo

_zone_lock = threading.Lock()
_zone_problem: str | None = None  # set once the machine's zone failed and UTC stood in for it


def _as_utc(dt: datetime | None) -> datetime:
    if dt is None:
        return datetime.now(UTC)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _machine_zone_failed(e: Exception) -> None:
    global _zone_problem
    with _zone_lock:
        if _zone_problem is None:
            zone = os.environ.get("TZ")
            named = f"the time zone TZ={zone!r}" if zone else "this machine's time zone"
            why = "its offset from UTC is a day or more" if isinstance(e, ValueError) else "it is out of range"
            _zone_problem = f"{named} cannot be used ({why}): days are counted in UTC"


def _in_machine_zone(dt: datetime) -> datetime:
    """An aware moment in the machine's zone, or in UTC when that zone cannot be represented."""
    try:
        return dt.astimezone()
    except (ValueError, OverflowError, OSError) as e:  # an offset of 24 h or more, a zone out of range
        _machine_zone_failed(e)
        return dt.astimezone(UTC)


def zone_warning() -> str | None:
    """The one line saying the machine's zone was replaced by UTC, or None when it was not."""
    return _zone_problem


def local(dt: datetime | None, tz: tzinfo | None = None) -> datetime:
    """A moment (UTC or naive-UTC) in the learner's clock."""
    moment = _as_utc(dt)
    return moment.astimezone(tz) if tz is not None else _in_machine_zone(moment)


def today(tz: tzinfo | None = None) -> date:
    """The learner's date now."""
    return local(None, tz).date()


def local_date(dt: datetime | None, tz: tzinfo | None = None) -> date:
    return local(dt, tz).date()


def at_local(day: date, clock: time, tz: tzinfo | None = None) -> datetime:
    """The UTC moment when the learner's clock shows ``clock`` on ``day``."""
    naive = datetime.combine(day, clock)
    if tz is not None:
        return naive.replace(tzinfo=tz).astimezone(UTC)
    try:
        return naive.astimezone().astimezone(UTC)
    except (ValueError, OverflowError, OSError) as e:
        _machine_zone_failed(e)
        return naive.replace(tzinfo=UTC)


def start_of_local_day(now: datetime | None, tz: tzinfo | None = None) -> datetime:
    """The UTC moment the learner's current day began (local midnight)."""
    return at_local(local_date(now, tz), time(0), tz)


def start_of_next_local_day(now: datetime | None, tz: tzinfo | None = None) -> datetime:
    return at_local(local_date(now, tz) + timedelta(days=1), time(0), tz)
