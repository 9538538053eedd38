"""The one reader of ``metrics.jsonl``: a run's records, followed while the trainer appends them.

The trainer appends one JSON line per log step and flushes it (``files.RunWriter``); a resume
first cuts the file back to its checkpoint's step by writing a new file and renaming it over the
old one (``files.truncate_metrics``). A reader in another process (the training panel, the
compare screen, an experiment's table) polls the file and must never show steps twice or going
backwards, whatever happened between two polls:

- the file shrank (cut back in place, or replaced by a shorter one): start again from the top;
- the file was replaced by a new one (another inode) that already grew past the old offset:
  start again from the top (reading on from the old offset would splice two files together);
- the bytes just before the offset changed (rewritten in place, or a reused inode): the same;
- the last line is still being written: left for the next poll;
- a line is damaged (not JSON, no step, a number out of its range): skipped, the rest still read;
- a line longer than ``MAX_LINE_BYTES`` is not a record: skipped unparsed; a poll reads at most
  ``READ_BYTES``, and a line longer than that is passed over without ever being held whole;
- a format header in the middle of what is read: a new file starts there, what came before it
  is dropped.

Nothing outside ``minigpt.runs`` opens the file (``tests/test_runs_metrics.py`` checks it):
screens and experiments use :class:`RunMetrics`, one-shot readers :func:`read_metrics`.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import guarded
from minigpt.runs.files import METRICS_FILE
from minigpt.runs.schema import METRICS_FORMAT, metrics_record

# Bytes kept from just before the offset: if they differ next time, the file is not the one read.
FINGERPRINT_BYTES = 256
# Speeds kept for the median shown as a run's tokens/s (one slow log line does not swing it).
RECENT_SPEEDS = 20
MAX_LINE_BYTES = 64 << 10  # a record is a few hundred bytes
READ_BYTES = 16 << 20  # what one poll of a live run reads at most (the rest waits for the next)


def _parse(data: bytes, at_file_start: bool) -> tuple[list[dict], bool]:
    """The records in ``data`` (complete lines), and whether a format header came anywhere but on
    the file's first line: a new file starts there, so only the records after it are returned."""
    records: list[dict] = []
    new_header, first = False, at_file_start
    for line in data.splitlines():
        if not line.strip() or len(line) > MAX_LINE_BYTES:
            continue
        try:
            raw = json.loads(line)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raw = None  # damaged: skipped, never fatal
        if isinstance(raw, dict) and raw.get("format") == METRICS_FORMAT:
            if not first:
                new_header, records = True, []
            first = False
            continue
        first = False
        record = metrics_record(raw) if raw is not None else None
        if record is not None:
            records.append(record)
    return records, new_header


def read_metrics(run_dir: Path | str, since_offset: int = 0) -> tuple[list[dict], int]:
    """Records of ``metrics.jsonl`` from byte ``since_offset`` on, and the offset after the last
    complete line. For one-shot reads (a finished run, a test); to follow a live run use
    :class:`RunMetrics`, which notices a file that was cut back or replaced."""
    try:
        with guarded.open_file(Path(run_dir) / METRICS_FILE, guarded.METRICS_BYTES) as f:
            f.seek(since_offset)
            data = f.read()
    except OSError:  # not there yet, or not a readable file
        return [], since_offset
    end = data.rfind(b"\n") + 1
    records, _ = _parse(data[:end], since_offset == 0)
    return records, since_offset + end


@dataclass
class MetricsFollower:
    """Where a reader stands in one ``metrics.jsonl``: the offset after the last complete line,
    the file it was read from (device, inode) and the bytes just before the offset."""

    path: Path
    offset: int = 0
    identity: tuple[int, int] | None = None
    fingerprint: bytes = b""
    in_long_line: bool = False  # the offset is inside a line longer than READ_BYTES: drop to its end

    def read(self) -> tuple[list[dict], bool]:
        """The records added since the last call, and whether the file started over (then the
        records are the whole new file's and what was read before no longer holds)."""
        try:
            f = guarded.open_file(self.path, guarded.METRICS_BYTES)  # a FIFO or device: refused, never waited on
        except OSError:  # not there (yet, or any more), unreadable, or not a regular file
            restarted = self.identity is not None or self.offset > 0
            self._reset(None)
            return [], restarted
        restarted = False
        with f:
            try:
                st = os.fstat(f.fileno())  # the file actually opened: no race with a rename
                if self.identity is not None and not self._same_file(f, st):
                    restarted = True
                    self._reset(None)
                self.identity = (st.st_dev, st.st_ino)
                f.seek(self.offset)
                data = f.read(READ_BYTES)
            except OSError:  # a folder named metrics.jsonl, an I/O error: nothing to read now
                return [], restarted
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) < READ_BYTES:
            return [], restarted
        complete, was_in_long_line = data[:end], self.in_long_line
        if end == 0:  # a whole read without a line break: no record is that long, pass over it
            end, complete, self.in_long_line = len(data), b"", True
        elif was_in_long_line:  # the end of such a line: what follows its break is read
            complete, self.in_long_line = complete[complete.index(b"\n") + 1:], False
        records, new_header = _parse(complete, self.offset == 0 and not was_in_long_line)
        recent = data[max(0, end - FINGERPRINT_BYTES):end]
        self.fingerprint = (self.fingerprint + recent)[-FINGERPRINT_BYTES:]
        self.offset += end
        return records, restarted or new_header

    def _same_file(self, f, st: os.stat_result) -> bool:
        if (st.st_dev, st.st_ino) != self.identity or st.st_size < self.offset:
            return False
        if not self.fingerprint:
            return True
        f.seek(self.offset - len(self.fingerprint))
        return f.read(len(self.fingerprint)) == self.fingerprint

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self.offset, self.identity, self.fingerprint, self.in_long_line = 0, identity, b"", False


@dataclass
class RunMetrics:
    """One run's metrics as series for charts and tables, read incrementally by :meth:`poll`.

    The lists are cleared in place when the file starts over, so a chart holding them keeps
    drawing the right thing; ``restarted`` says whether the latest poll did that."""

    run_dir: Path
    steps: list[int] = field(default_factory=list)  # steps of the training-loss records
    train_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    val_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)  # tokens/s of the latest log lines
    last: dict = field(default_factory=dict)  # the latest record
    recent: list[dict] = field(default_factory=list)  # the latest few records (the machine line's steps/s)
    restarted: bool = False
    follower: MetricsFollower = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.run_dir = Path(self.run_dir)
        self.follower = MetricsFollower(self.run_dir / METRICS_FILE)

    def poll(self) -> int:
        """Read what was added since the last call; returns how many records arrived."""
        records, self.restarted = self.follower.read()
        if self.restarted:
            self._clear()
        for rec in records:
            step = rec["step"]
            if "train_loss" in rec:
                self.steps.append(step)
                self.train_loss.append(float(rec["train_loss"]))
                self.lr.append(float(rec.get("lr", 0.0)))
            if "val_loss" in rec:
                self.val_steps.append(step)
                self.val_loss.append(float(rec["val_loss"]))
            if rec.get("tokens_per_s"):
                self.speeds.append(float(rec["tokens_per_s"]))
                del self.speeds[:-RECENT_SPEEDS]
            self.last = rec
        self.recent = (self.recent + records)[-RECENT_SPEEDS:]
        return len(records)

    @property
    def latest_train_loss(self) -> float | None:
        """The training log's latest loss (dropout on, so not comparable to an eval-mode loss)."""
        return self.train_loss[-1] if self.train_loss else None

    @property
    def tokens_per_s(self) -> float | None:
        """The median speed of the latest log lines."""
        return statistics.median(self.speeds) if self.speeds else None

    def _clear(self) -> None:
        for series in (self.steps, self.train_loss, self.lr, self.val_steps, self.val_loss, self.speeds):
            series.clear()
        self.last, self.recent = {}, []
