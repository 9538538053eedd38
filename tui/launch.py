"""Running the app from a terminal: open the progress database, run TutorApp, then say which
training runs continue in the background and, if the app crashed, the one line naming its log."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from minigpt import paths
from minigpt.errors import StoreError
from minigpt.store import Store
from minigpt.text import printable
from tui.app import BUSY_TIMEOUT_S, TutorApp


def background_runs_message() -> str:
    """What to tell the learner on quitting while runs train: which continue, how to reattach or
    stop each one ("" when none trains)."""
    from minigpt.runs import listing

    try:
        running = [r for r in listing.list_runs() if str(getattr(r.status, "value", r.status)) == "running"]
    except OSError:
        return ""
    if not running:
        return ""
    data_dir = os.environ.get("MINIGPT_DATA_DIR")
    flag = f" --data-dir {shlex.quote(data_dir)}" if data_dir else ""
    lines = [f"{len(running)} training run{'s' * (len(running) != 1)} continue{'s' * (len(running) == 1)} "
             "in the background:"]
    for run in running:
        label = (getattr(run, "label", "") or "").strip()
        title = f"{label} ({run.name})" if label and label != run.name else run.name
        total = f"/{run.total:g}s" if run.total_unit == "seconds" and run.total else (
            f"/{run.total}" if run.total else "")
        name = shlex.quote(run.name)
        lines += [f"  {title}: step {run.step}{total}",
                  f"    watch it:  minigpt{flag} watch {name}",
                  f"    stop it:   minigpt{flag} stop {name}"]
    return "\n".join(lines)


def run_app(data_dir: str | Path | None = None, initial: str | None = None) -> None:
    if data_dir is not None:
        os.environ["MINIGPT_DATA_DIR"] = str(Path(data_dir).expanduser())
    try:
        store = Store(paths.database_path(), busy_timeout_s=BUSY_TIMEOUT_S)
    except StoreError as e:  # busy while it needed upgrading, or written by a newer tutor
        print(f"Error: {printable(e)}", file=sys.stderr)
        raise SystemExit(2) from None
    app = TutorApp(store=store, initial=initial)
    try:
        app.run()
    except Exception as error:  # outside any handler (the driver, the terminal): still logged
        app.crash = error
        app._crash_logged = _log_crash(error)
    message = background_runs_message()
    if message:
        print(message)
    if app.crash is not None:
        print(crash_line(app.crash, getattr(app, "_crash_logged", False)), file=sys.stderr)
        raise SystemExit(1)


def _log_crash(error: BaseException) -> bool:
    from tui.workers import log_failure

    return log_failure("The app", error)


def crash_line(error: BaseException, logged: bool) -> str:
    """The one line the terminal shows after the app closed on an unexpected error."""
    from tui.workers import log_path

    detail = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
    what = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    where = f"the details are in {log_path()}" if logged else f"the log {log_path()} could not be written"
    return f"minigpt-tutor stopped on an unexpected error ({printable(what)}); {where}"
