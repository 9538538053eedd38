"""The learner's progress database: one SQLite file shared by lessons, flashcards and quizzes.

WAL mode lets two app instances read and write at once; every write happens inside one
transaction (``with db.transaction():``) so that killing the app loses nothing committed.
The schema is versioned with ``PRAGMA user_version`` and upgraded by the ordered migrations of
:mod:`minigpt.store_schema`: to change the schema, append a migration, never edit an old one. Before a migration touches an
existing file, a copy of it is kept beside it (``progress.sqlite3.schema-2.bak``).

What can go wrong with the file, and the way on (each a :class:`StoreError` with a message that
says what happened and what to do, never a bare ``sqlite3`` traceback):

- damaged (not a database, or failing SQLite's quick check): the file (and its ``-wal``/``-shm``)
  is moved aside as ``progress.sqlite3.damaged-<time>`` and a fresh database started;
  :attr:`Store.notice` says where the old one went;
- read-only (the file or its folder): opened read-only, :attr:`Store.notice` says so, and each
  write raises :class:`StoreReadOnly`; a folder that cannot be created at all gives an in-memory
  database (nothing is saved, and the notice says that too);
- locked by another writer for longer than the busy timeout: :class:`StoreBusy` (retry);
- disk full: :class:`StoreFull` (free space, retry); the transaction is rolled back, so a write
  either happened whole or not at all;
- written by a newer version of the tutor: :class:`StoreError` (upgrade).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from minigpt.errors import StoreBusy, StoreDamaged, StoreError, StoreFull, StoreReadOnly
from minigpt.store_schema import MIGRATIONS

_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_READ_ONLY = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


def _code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return code & 0xFF if code is not None else None  # extended codes carry the primary one


class Store:
    """A connection to the progress database with its schema brought up to date."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 10.0):
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.read_only = False
        self.notice: str | None = None  # what the app should tell the learner about this file
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self._open_in_memory(f"cannot create {self.path.parent} ({e.strerror or e})")
            return
        try:
            self._open()
        except StoreDamaged as e:
            backup = self._move_aside()
            self._open()
            self.notice = (f"The progress database was damaged ({e}); it was kept as {backup.name} "
                           f"and a fresh one was started.")
        except StoreReadOnly as e:
            self._open_read_only(str(e))

    # -- opening --------------------------------------------------------------------------------
    def _connect(self, target, **kwargs) -> None:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so each transaction is explicit.
        self.conn = sqlite3.connect(target, timeout=self.busy_timeout_s, isolation_level=None,
                                    check_same_thread=False, **kwargs)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")

    def _open(self) -> None:
        if self.path.exists() and not (os.access(self.path, os.W_OK)
                                       and os.access(self.path.parent, os.W_OK)):
            raise StoreReadOnly(f"{self.path} is not writable")
        self._writable_companions()
        try:
            self._connect(self.path)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")  # durable at each commit under WAL
            self.conn.execute("PRAGMA foreign_keys=ON")
            verdict = self.conn.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise StoreDamaged(f"quick check: {verdict}")
            self.migrate()
        except sqlite3.Error as e:
            self._close_quietly()
            raise self._translate(e) from None
        except StoreError:
            self._close_quietly()
            raise

    def _writable_companions(self) -> None:
        """The ``-wal`` and ``-shm`` files must be writable too. SQLite gives them the database's
        permissions when it creates them, so a read-only open leaves them read-only; once the
        learner makes the database writable again (the notice's advice), they follow it when
        this user owns them, else StoreReadOnly names the one to fix."""
        if not self.path.exists():
            return
        for suffix in ("-wal", "-shm"):
            part = Path(f"{self.path}{suffix}")
            if not part.exists() or os.access(part, os.W_OK):
                continue
            try:
                os.chmod(part, self.path.stat().st_mode & 0o7777)
            except OSError:
                pass
            if not os.access(part, os.W_OK):
                raise StoreReadOnly(f"{part} is not writable (make it writable like {self.path.name})")

    def _open_read_only(self, why: str) -> None:
        # immutable=1 when the folder is read-only too: WAL readers otherwise need the -shm file.
        flags = "mode=ro" if os.access(self.path.parent, os.W_OK) else "mode=ro&immutable=1"
        try:
            self._connect(f"{self.path.resolve().as_uri()}?{flags}", uri=True)
            version = self.version
        except sqlite3.Error as e:
            self._close_quietly()
            self._open_in_memory(f"{why}, and it cannot be read either ({e})")
            return
        if version != len(MIGRATIONS):
            self._close_quietly()
            self._open_in_memory(f"{why}, and its schema ({version}) needs an upgrade")
            return
        self.read_only = True
        self.notice = (f"The progress database is read-only ({why}): you can look around, but "
                       f"nothing new is saved. Make it (and its -wal and -shm files) writable and restart to "
                       f"save progress.")

    def _open_in_memory(self, why: str) -> None:
        self._connect(":memory:")
        self.migrate()
        self.notice = f"Progress is not being saved: {why}. Fix that and restart to save progress."

    def _close_quietly(self) -> None:
        try:
            self.conn.close()
        except (AttributeError, sqlite3.Error):
            pass

    def _move_aside(self) -> Path:
        """Rename the damaged file (and its WAL companions) to a free ``.damaged-<time>`` name."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while backup.exists():
            n += 1
            backup = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{self.path}{suffix}")
            if part.exists():
                part.replace(Path(f"{backup}{suffix}"))
        return backup

    def _translate(self, error: sqlite3.Error) -> Exception:
        """The StoreError for an SQLite failure the learner can act on; others unchanged."""
        code = _code(error)
        if code in _DAMAGED:
            return StoreDamaged(f"{self.path}: {error}")
        if code in _BUSY:
            return StoreBusy(
                f"another program (another minigpt-tutor?) has been writing {self.path.name} for "
                f"over {self.busy_timeout_s:g} s; nothing was saved, try again in a moment")
        if code in _READ_ONLY:
            return StoreReadOnly(f"{self.path} cannot be written ({error}); nothing was saved")
        if code == sqlite3.SQLITE_FULL:
            return StoreFull(f"the disk holding {self.path} is full; nothing was saved. Free some "
                             f"space and try again")
        if code == sqlite3.SQLITE_IOERR:
            return StoreError(f"{self.path}: the disk reported an error ({error}); nothing was saved")
        return error

    # -- schema ---------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        current = self.version
        if current == len(MIGRATIONS):
            return  # up to date: no write lock needed (another instance may be holding it)
        if current > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} was written by a newer minigpt-tutor (schema {current}, "
                f"this version knows {len(MIGRATIONS)}); upgrade the tutor to open it")
        if current > 0 and self.path.exists():
            self._keep_copy(current)  # outside the transaction: a backup must read the file freely
        with self.transaction(immediate=True):
            current = self.version  # another instance may have upgraded it meanwhile
            for number, sql in enumerate(MIGRATIONS[current:], start=current + 1):
                for statement in sql.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {number}")

    def _keep_copy(self, version: int) -> None:
        """A consistent copy of the database before its schema changes (SQLite's backup API)."""
        copy = self.path.with_name(f"{self.path.name}.schema-{version}.bak")
        if copy.exists():
            return
        target = sqlite3.connect(copy.with_name(copy.name + ".tmp"))
        try:
            self.conn.backup(target)
        finally:
            target.close()
        copy.with_name(copy.name + ".tmp").replace(copy)

    @contextmanager
    def transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any exception; SQLite failures the learner
        can act on (busy, read-only, full, damaged) come out as :class:`StoreError`."""
        if self.read_only:
            raise StoreReadOnly(f"{self.path} is open read-only; nothing was saved")
        try:
            self.conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        except sqlite3.Error as e:
            raise self._translate(e) from None
        try:
            yield self.conn
        except BaseException as e:
            self._rollback()
            translated = self._translate(e) if isinstance(e, sqlite3.Error) else e
            if translated is e:
                raise
            raise translated from e
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise self._translate(e) from None

    def _rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite already rolled back (a full disk, an I/O error)

    def close(self) -> None:
        self.conn.close()

    # -- settings: the raw text by key; minigpt.settings is the typed API every caller uses ---------
    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- lessons --------------------------------------------------------------------------------
    def lesson_position(self, lesson_id: str) -> float:
        row = self.conn.execute(
            "SELECT position FROM lesson_progress WHERE lesson_id = ?", (lesson_id,)
        ).fetchone()
        return float(row[0]) if row else 0.0

    def save_lesson_position(self, lesson_id: str, position: float, *, reached_end: bool = False) -> None:
        now = _utc_now()
        with self.transaction():
            self.conn.execute(
                """INSERT INTO lesson_progress(lesson_id, position, read_at, updated_at)
                   VALUES (?, ?, ?, ?)
                   ON CONFLICT(lesson_id) DO UPDATE SET
                     position = excluded.position,
                     read_at = COALESCE(lesson_progress.read_at, excluded.read_at),
                     updated_at = excluded.updated_at""",
                (lesson_id, max(0.0, min(1.0, position)), now if reached_end else None, now),
            )

    def lessons_read(self) -> set[str]:
        rows = self.conn.execute("SELECT lesson_id FROM lesson_progress WHERE read_at IS NOT NULL")
        return {r[0] for r in rows}

    def last_lesson(self) -> str | None:
        row = self.conn.execute(
            "SELECT lesson_id FROM lesson_progress ORDER BY updated_at DESC LIMIT 1"
        ).fetchone()
        return row[0] if row else None


def _utc_now() -> str:
    """UTC to the microsecond: a learner can open two lessons within one second, and the later one
    must sort last (older rows, saved to the second, still compare in order by their seconds)."""
    ns = time.time_ns()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 1_000_000_000)) + f".{ns // 1000 % 1_000_000:06d}Z"
