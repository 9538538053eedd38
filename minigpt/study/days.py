"""The learner's days: local dates, not UTC ones (a learner in Berlin studying at 00:30 is on the
new day; one in New York studying at 20:00 has not yet started the next UTC day).

Stored times stay UTC (``minigpt.study.scheduler``); a day boundary is computed in the learner's
time zone. ``tz=None`` means the machine's own zone, asked per moment, so the summer-time change
is followed (a fixed offset taken once would be an hour wrong for half the year). Tests pass a
``zoneinfo.ZoneInfo``. Local midnight always exists in the zones that change at 02:00 or 03:00;
where a zone skips midnight itself, the moment is read forward as Python's ``fold`` rules say.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo

from minigpt.study.scheduler import as_utc


def local(dt: datetime | None, tz: tzinfo | None = None) -> datetime:
    """A moment (UTC or naive-UTC) in the learner's clock."""
    return as_utc(dt).astimezone(tz)


def local_date(dt: datetime | None, tz: tzinfo | None = None) -> date:
    return local(dt, tz).date()


def at_local(day: date, clock: time, tz: tzinfo | None = None) -> datetime:
    """The UTC moment when the learner's clock shows ``clock`` on ``day``."""
    naive = datetime.combine(day, clock)
    aware = naive.replace(tzinfo=tz) if tz is not None else naive.astimezone()
    return aware.astimezone(UTC)


def start_of_local_day(now: datetime | None, tz: tzinfo | None = None) -> datetime:
    """The UTC moment the learner's current day began (local midnight)."""
    return at_local(local_date(now, tz), time(0), tz)


def start_of_next_local_day(now: datetime | None, tz: tzinfo | None = None) -> datetime:
    return at_local(local_date(now, tz) + timedelta(days=1), time(0), tz)
