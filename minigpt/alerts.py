"""Alerts: what happened to a run, said where the learner is (a bell, a desktop notification, a
command of their own), so a run that finishes or diverges in another window is not missed.

This module holds the logic; the CLI (``minigpt train`` in the foreground) and the app (watching a
run folder) only deliver what it returns:

- :class:`AlertWatcher` turns what a run folder says (its status and new metrics records) into
  :class:`Event` values, each once: finished, stopped, diverged, failed, and the target loss reached;
  ``sweep_finished`` and ``reviews_due`` events are made by their callers with :func:`event`;
- :func:`escape_bytes`: the terminal bell, then the notification as OSC 9 and OSC 777 escapes,
  each wrapped for tmux's passthrough inside tmux (the bell stays outside: tmux's own bell alert
  and its hooks see it). Escapes travel through SSH to the learner's own terminal;
- :func:`run_command`: the learner's command, split like a shell would but never run by one, with
  the event in its environment (``MINIGPT_EVENT``, ``MINIGPT_RUN``, ``MINIGPT_VAL_LOSS`` …): run
  data never becomes part of a command line.

The command is a flag (``--on-event``) or the user setting ``alerts.on_event``, never written into a
run or experiment folder: a folder someone shares cannot make the reader run code.
"""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import threading
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import settings, spawn
from minigpt.errors import ConfigError, RunError, StoreError
from minigpt.runs.files import STATUS_FILE
from minigpt.runs.schema import RunState, RunStatus, read_status
from minigpt.store import Store

EVENTS = settings.ALERT_EVENT_NAMES
DEFAULT_EVENTS = settings.ALERTS_EVENTS.default
TITLE = "minigpt"
MAX_TEXT = 200  # a notification is a line: longer text is cut


@dataclass(frozen=True)
class Event:
    """One thing worth telling: its kind (one of EVENTS), the run (its folder's name), a line of
    text and the figures behind it (step, losses, target)."""

    kind: str
    run: str
    message: str
    figures: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AlertChoices:
    """What to deliver: notify (bell and escapes), the command (None: none) and the events that count."""

    notify: bool = True
    command: str | None = None
    events: tuple[str, ...] = DEFAULT_EVENTS

    def wants(self, event: Event) -> bool:
        return event.kind in self.events and (self.notify or self.command is not None)


# A trainer the app starts says nothing itself: the app watching its folder delivers the alerts,
# unless the app (named by WATCHER_ENV, "pid:start") is gone by then: the learner's command then
# runs from the trainer (it has no terminal left to ring).
WATCHED_TRAINER_FLAGS = ("--no-notify", "--on-event", "")
WATCHER_ENV = "MINIGPT_ALERTS_WATCHER"


def watcher_mark() -> dict[str, str]:
    """The environment naming this process as the one that alerts for the trainers it starts."""
    from minigpt import processes

    return {WATCHER_ENV: f"{os.getpid()}:{processes.start_time(os.getpid())}"}


def watcher_gone(mark: str) -> bool:
    """Whether the process a ``watcher_mark`` named has ended (a reused pid has another start)."""
    from minigpt import processes

    pid, _, start = mark.partition(":")
    try:
        return processes.start_time(int(pid)) != int(start)
    except ValueError:
        return True


def unwatched(choices: AlertChoices) -> AlertChoices:
    """``choices``, or the learner's stored command alone when the app that alerts for this trainer closed."""
    mark = os.environ.get(WATCHER_ENV)
    if not mark or not watcher_gone(mark):
        return choices
    return stored_choices(notify=False)


def choices_from(store: Store | None, notify: bool | None = None, command: str | None = None) -> AlertChoices:
    """The user's settings (defaults without a store), with what flags gave on top (an empty
    command: none, whatever the setting says)."""
    stored = AlertChoices() if store is None else AlertChoices(
        settings.get(store, settings.ALERTS_NOTIFY), settings.get(store, settings.ALERTS_ON_EVENT),
        tuple(settings.get(store, settings.ALERTS_EVENTS)))
    command = stored.command if command is None else command
    return AlertChoices(stored.notify if notify is None else notify, command or None, stored.events)


def _loss(value) -> str:
    return f"{value:.4f}" if isinstance(value, int | float) and math.isfinite(value) else "?"


def event(kind: str, run: str, message: str, **figures) -> Event:
    if kind not in EVENTS:
        raise ValueError(f"no alert event called {kind!r}")
    return Event(kind, run, message, {k: v for k, v in figures.items() if v is not None})


def status_event(state: RunState, run: str, *, step: int = 0, reason: str | None = None, **figures) -> Event | None:
    """The event a run's state says (``figures``: val_loss, test_loss, best_val), or None while it trains."""
    figures = {"step": step, **figures}
    if state == RunState.FINISHED:
        return event("finished", run, f"{run} finished at step {step}: val loss {_loss(figures.get('val_loss'))}",
                     **figures)
    if state == RunState.STOPPED:
        return event("stopped", run, f"{run} stopped at step {step}: best val {_loss(figures.get('best_val'))}",
                     **figures)
    if state == RunState.FAILED:
        reason = reason or "no reason given"
        kind = "diverged" if "diverged" in reason or "not finite" in reason else "failed"
        return event(kind, run, f"{run} {kind} at step {step}: {reason}", **figures)
    return None


class AlertWatcher:
    """Follows one run and gives each event once. A run already over when first seen says nothing
    (opening an old run is not news); ``target_loss`` alerts the first val loss at or below it."""

    def __init__(self, run_dir: Path | str, target_loss: float | None = None):
        self.run = Path(run_dir).name
        self.target_loss = target_loss
        self.seen_active: bool | None = None
        self.target_said = self.end_said = self.diverged_said = False

    def records(self, records: list[dict]) -> list[Event]:
        """Events in newly read metrics records (the target loss)."""
        if self.target_loss is None or self.target_said:
            return []
        for rec in records:
            val = rec.get("val_loss")
            if isinstance(val, int | float) and val <= self.target_loss:
                self.target_said = True
                return [event("target_reached", self.run, f"{self.run} reached val loss {_loss(val)} "
                              f"(target {self.target_loss:g}) at step {rec.get('step')}",
                              step=rec.get("step"), val_loss=val, target_loss=self.target_loss)]
        return []

    def diverging(self, step: int, evidence: str) -> list[Event]:
        """A run seen training whose numbers say it diverges (the diagnosis' evidence) while it goes
        on (a loss far above a uniform guess is still a number): told once, its end not again as diverged."""
        if not self.seen_active or self.diverged_said or self.end_said:
            return []
        self.diverged_said = True
        return [event("diverged", self.run, f"{self.run} is diverging at step {step}: {evidence}", step=step)]

    def status(self, status: RunStatus) -> list[Event]:
        """The run's end, once, if it was seen training first (or starting)."""
        return self.state(status.state, step=status.step, reason=status.failure_reason, val_loss=status.val_loss,
                          test_loss=status.test_loss, best_val=status.best_val)

    def state(self, state: RunState, *, step: int = 0, reason: str | None = None, **figures) -> list[Event]:
        """:meth:`status` from the parts (the app's view of a run corrects the state by liveness)."""
        if self.seen_active is None:
            self.seen_active = state.active
        if state.active:
            self.seen_active = True
            return []
        if not self.seen_active or self.end_said:
            return []
        found = status_event(state, self.run, step=step, reason=reason, **figures)
        self.end_said = found is not None
        if found is None or (found.kind == "diverged" and self.diverged_said):
            return []
        return [found]


class ReviewsWatch:
    """Flashcard reviews falling due while the app runs: told when the due count goes from none to
    some (reviews already due when the app opens are on its home screen)."""

    def __init__(self):
        self.last: int | None = None

    def seen(self, due: int) -> Event | None:
        before, self.last = self.last, due
        if before == 0 and due > 0:
            return event("reviews_due", "", f"{due} flashcard review{'s' if due != 1 else ''} due", due=due)
        return None


class ForegroundRun:
    """The alerts of a run this process trains (``minigpt train``): the target loss as records
    arrive, the end from the status file (finished, stopped or failed, written before training
    returns or raises). ``say`` delivers each event."""

    def __init__(self, run_dir: Path | str, target_loss: float | None, say, diverging=None):
        self.run_dir, self.say = Path(run_dir), say
        self.watcher = AlertWatcher(run_dir, target_loss)
        self.watcher.seen_active = True  # this process trains it: its end is news
        self.diverging = diverging  # (run folder) → the diagnosis' evidence of a divergence, or None

    def wrap(self, on_log):
        """``on_log`` followed by the alerts its record holds (at an evaluation, a divergence too)."""
        def both(rec: dict) -> None:
            on_log(rec)
            for alert in self.watcher.records([rec]):
                self.say(alert)
            evidence = self.diverging(self.run_dir) if self.diverging and "val_loss" in rec else None
            for alert in self.watcher.diverging(rec.get("step", 0), evidence) if evidence else []:
                self.say(alert)
        return both

    def ended(self) -> None:
        try:
            status = read_status(self.run_dir / STATUS_FILE)
        except (OSError, RunError):  # no status: the run never started, nothing to say
            return
        for alert in self.watcher.status(status):
            self.say(alert)


# Set in the environment of the ranks a launcher starts under torchrun: the launcher alerts (it owns
# the terminal; a multi-node rank's output is a pipe), so no rank does. A torchrun the learner starts
# by hand sets nothing, and its rank 0 alerts.
LAUNCHER_ALERTS_ENV = "MINIGPT_ALERTS_FROM_LAUNCHER"
FOLLOW_S = 2.0  # how often a launcher reads the ranks' metrics for the target loss


class LaunchedRun:
    """The alerts of a run the ranks a launcher started train: the target loss from the metrics
    file (read every FOLLOW_S by a thread, only when a target is set), the end from the status file
    once the ranks are done (:meth:`ended`). Each event once, from this one process."""

    def __init__(self, run_dir: Path | str, target_loss: float | None, say):
        from minigpt.runs.metrics import read_metrics

        self._read = read_metrics
        self.run = ForegroundRun(run_dir, target_loss, say)
        self._offset = read_metrics(run_dir)[1]  # a resumed run's earlier records are not news
        self._done = threading.Event()
        self._thread = None
        if target_loss is not None:
            self._thread = threading.Thread(target=self._follow, name="launcher-alerts", daemon=True)
            self._thread.start()

    def _poll(self) -> None:
        records, self._offset = self._read(self.run.run_dir, self._offset)
        for alert in self.run.watcher.records(records):
            self.run.say(alert)

    def _follow(self) -> None:
        while not self._done.wait(FOLLOW_S):
            self._poll()

    def ended(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._poll()  # the last records, written after the thread's last look
        self.run.ended()


# ---------------------------------------------------------------------------- delivery


def clean(text: str) -> str:
    """Text safe inside an escape: control and format characters become spaces (a BEL or ESC in a
    run's name would end the escape and let the rest reach the terminal raw), ';' (OSC 777's field
    separator) a comma, cut to MAX_TEXT."""
    out = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in str(text)).replace(";", ",")
    out = " ".join(out.split())
    return out if len(out) <= MAX_TEXT else out[:MAX_TEXT - 1] + "…"


def tmux_wrap(escape: str) -> str:
    """An escape passed through tmux to the terminal outside it (tmux's passthrough: every ESC doubled)."""
    return "\x1bPtmux;" + escape.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def escape_bytes(alert: Event, *, bell: bool = True, tmux: bool | None = None) -> bytes:
    """The bell, then the notification as OSC 9 (iTerm2, WezTerm, kitty, Windows Terminal) and OSC
    777 (VTE terminals, foot, Konsole); a terminal ignores the one it does not know. ``tmux`` (default:
    $TMUX is set) wraps each escape for passthrough."""
    if tmux is None:
        tmux = bool(os.environ.get("TMUX"))
    body = clean(alert.message)
    escapes = [f"\x1b]9;{TITLE}: {body}\x07", f"\x1b]777;notify;{TITLE};{body}\x07"]
    if tmux:
        escapes = [tmux_wrap(e) for e in escapes]
    return (("\a" if bell else "") + "".join(escapes)).encode("utf-8")


def command_env(alert: Event) -> dict[str, str]:
    """The variables the learner's command gets, on top of this process's environment."""
    env = {"MINIGPT_EVENT": alert.kind, "MINIGPT_RUN": alert.run, "MINIGPT_MESSAGE": clean(alert.message)}
    for name, value in alert.figures.items():
        env["MINIGPT_" + name.upper()] = f"{value:.6g}" if isinstance(value, float) else str(value)
    return env


def command_argv(command: str) -> list[str]:
    """The learner's command as arguments (shell quoting rules, no shell); ConfigError when it is empty
    or its quotes do not close."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ConfigError(f"--on-event: cannot read the command {command!r}: {e}") from None
    if not argv:
        raise ConfigError("--on-event: the command is empty")
    return argv


def run_command(command: str, alert: Event):
    """Start the learner's command with the event in its environment; returns the process. A thread
    waits for it (a slow command never holds training or the app, and an ended one is reaped at once,
    not left a zombie until some later subprocess call). Its output is dropped."""
    proc = spawn.popen(command_argv(command), env=spawn.child_env(unbuffered=False, extra=command_env(alert)),
                       new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    threading.Thread(target=proc.wait, name="alert-command", daemon=True).start()
    return proc


def terminal_of(stream) -> object | None:
    """The binary stream under ``stream`` when it is a terminal (escapes in a log file or a pipe
    would only be noise), else None."""
    try:
        return stream.buffer if stream.isatty() else None
    except (AttributeError, ValueError, OSError):
        return None


def deliver(alert: Event, choices: AlertChoices, terminal) -> str | None:
    """Say ``alert`` as ``choices`` ask: the bell and notification written to ``terminal`` (a binary
    stream, or None: no terminal to write to), the command started. Returns why the command could
    not start (None when it did, or there is none): an alert never stops what raised it."""
    if not choices.wants(alert):
        return None
    if choices.notify and terminal is not None:
        terminal.write(escape_bytes(alert))
        terminal.flush()
    if choices.command is None:
        return None
    try:
        run_command(choices.command, alert)
    except (OSError, ConfigError) as e:
        return f"the alert command did not start: {e}"
    return None


def stored_choices(notify: bool | None = None, command: str | None = None) -> AlertChoices:
    """:func:`choices_from` with the learner's progress database, when there is one (a command-line
    run never creates it)."""
    from minigpt import paths

    path = paths.database_path()
    if not path.exists():
        return choices_from(None, notify, command)
    try:
        store = Store(path)
    except (StoreError, OSError):  # an unreadable database never stops a run: the defaults apply
        return choices_from(None, notify, command)
    try:
        return choices_from(store, notify, command)
    finally:
        store.close()
