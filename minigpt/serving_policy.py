"""What a session served to a browser may do (``minigpt serve``); the app's screens ask here.

A served session is an app process that textual-serve started for one browser tab. The server
tells it so through environment variables (set by ``tui.browser.serve_server``), and every rule below is
"allowed" in an ordinary terminal session, where the learner already has a shell:

- **code**: lesson snippets run exactly as written; edited code runs only with ``--allow-code``,
  since running it in a served session means running anyone's Python on the server;
- **files**: paths the learner types (training data, card imports) must lie inside the
  session's data folder or the bundled content unless ``--allow-files``; a path is resolved
  (``..`` and symlinks) before it is judged, so neither walks out of the fence;
- **training**: at most ``MINIGPT_SERVE_MAX_RUNS`` runs started from served sessions train at
  once, counted across every session of the server (a registry file under a lock in the
  server's state folder).

This module never imports Textual (the rules are testable without the app), nor torch at import
time: the screens that consult it must stay quick to open.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from minigpt import guarded, paths
from minigpt.errors import PolicyRefusal, TrainingLimitReached

ENV_SERVED = "MINIGPT_SERVED"
ENV_GUEST = "MINIGPT_SERVE_GUEST"
ENV_ALLOW_CODE = "MINIGPT_ALLOW_CODE"
ENV_ALLOW_FILES = "MINIGPT_ALLOW_FILES"
ENV_MAX_RUNS = "MINIGPT_SERVE_MAX_RUNS"
ENV_STATE_DIR = "MINIGPT_SERVE_STATE"  # the server's own folder, shared by all its sessions

DEFAULT_MAX_RUNS = 1
RUNS_REGISTRY = "served-runs.json"
LIVE_STATES = ("starting", "running")




def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


def is_served() -> bool:
    return _flag(ENV_SERVED)


def is_guest() -> bool:
    return is_served() and _flag(ENV_GUEST)


def code_editing_allowed() -> bool:
    return not is_served() or _flag(ENV_ALLOW_CODE)


def files_fenced() -> bool:
    return is_served() and not _flag(ENV_ALLOW_FILES)


# ---------------------------------------------------------------------------- code


def _normalise(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def bundled_snippets() -> set[str]:
    """Every runnable snippet of the bundled lessons, as written (whitespace at line ends aside)."""
    from minigpt.errors import LessonError
    from minigpt.lessons import load_lessons

    try:
        return {_normalise(s) for lesson in load_lessons() for s in lesson.snippets()}
    except LessonError:
        return set()


def check_code(code: str, originals: Iterable[str] | None = None) -> None:
    """Refuse ``code`` in a served session unless editing is allowed or it is a lesson's snippet.

    ``originals`` are the snippets it may equal (default: every bundled lesson's), so a caller
    that knows which snippet was edited can pass just that one.
    """
    if code_editing_allowed():
        return
    allowed = {_normalise(o) for o in originals} if originals is not None else bundled_snippets()
    if _normalise(code) not in allowed:
        raise PolicyRefusal("Edited code does not run here: this tutor is served to a browser, where lesson "
                            "snippets run only as written (the server was not started with --allow-code). "
                            "Reset the snippet to run it.")


# ---------------------------------------------------------------------------- files


def fence_roots() -> list[Path]:
    """Folders a fenced session may read and write: its data folder and the bundled content."""
    roots = [paths.user_data_dir(), paths.data_dir(), paths.lessons_dir(), paths.checkpoints_dir()]
    return [r.resolve() for r in roots]


def inside_fence(path: Path | str) -> bool:
    resolved = Path(path).expanduser().resolve()
    return any(resolved == root or resolved.is_relative_to(root) for root in fence_roots())


def check_path(path: Path | str) -> Path:
    """``path`` as given (``~`` expanded) if this session may open it; PolicyRefusal otherwise.

    Called before the file is even looked at, so a refusal says nothing about what exists outside.
    """
    given = Path(path).expanduser()
    if files_fenced() and not inside_fence(given):
        raise PolicyRefusal(f"{path}: outside this server's folders. A browser session opens files only in its "
                            f"data folder ({paths.user_data_dir()}) and the tutor's bundled content "
                            f"(the server was not started with --allow-files).")
    return given


# ---------------------------------------------------------------------------- training runs


def max_served_runs() -> int:
    try:
        return max(0, int(os.environ.get(ENV_MAX_RUNS, DEFAULT_MAX_RUNS)))
    except ValueError:
        return DEFAULT_MAX_RUNS


def _state_dir() -> Path:
    folder = Path(os.environ.get(ENV_STATE_DIR) or paths.user_data_dir() / "serve-state")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock shared by every session of the server (held for milliseconds)."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the count is still checked, without the lock
        yield
        return
    with open(folder / "runs.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _is_live(run_dir: Path) -> bool:
    from minigpt.control import lab_jobs
    from minigpt.control.run_processes import run_state

    if run_dir.name in lab_jobs.JOBS and run_dir.parent.name == "lab":  # a lesson's lab job
        return lab_jobs.is_live(run_dir)
    try:
        return run_state(run_dir).status in LIVE_STATES
    except (OSError, ValueError):
        return False


def live_served_runs() -> list[Path]:
    """Runs started from this server's sessions whose worker is still starting or training."""
    try:
        listed = json.loads(guarded.read_text(_state_dir() / RUNS_REGISTRY, guarded.SMALL_JSON_BYTES))
    except (OSError, ValueError):
        listed = []
    return [Path(p) for p in listed if isinstance(p, str) and _is_live(Path(p))]


@contextlib.contextmanager
def training_slot() -> Iterator[Callable[[Path], None]]:
    """Hold a training slot while a run starts; yields ``register(run_dir)`` to record it.

    In a terminal session this is free and ``register`` does nothing. In a served one it raises
    TrainingLimitReached when the server's limit of live runs is reached; otherwise the lock is
    held until the block ends, so two tabs pressing "start" together cannot both take the last slot.
    """
    if not is_served():
        yield lambda run_dir: None
        return
    folder = _state_dir()
    with _locked(folder):
        live = live_served_runs()
        limit = max_served_runs()
        if limit == 0:
            raise TrainingLimitReached("This server does not let browser sessions start training runs "
                                       "(minigpt serve --max-runs 0).")
        if len(live) >= limit:
            raise TrainingLimitReached(
                f"{len(live)} training run{'s' if len(live) != 1 else ''} started from the browser "
                f"{'is' if len(live) == 1 else 'are'} already training, and this server allows {limit} at a time "
                f"(minigpt serve --max-runs). Stop a run, or wait for it to finish.")

        def register(run_dir: Path) -> None:
            listed = [str(p) for p in live] + [str(Path(run_dir).resolve())]
            from minigpt.runs.files import write_json_atomic

            write_json_atomic(folder / RUNS_REGISTRY, listed)

        yield register


async def start_run(cfg) -> Path:
    """``workers.start_run`` within the served-run limit (TrainingLimitReached when it is full)."""
    from minigpt.control import run_processes

    with training_slot() as register:
        run_dir = await run_processes.start_run(cfg)
        register(run_dir)
    return run_dir


async def resume_run(run_dir: Path | str) -> int:
    """``workers.resume_run`` within the served-run limit."""
    from minigpt.control import run_processes

    with training_slot() as register:
        pid = await run_processes.resume_run(run_dir)
        register(Path(run_dir))
    return pid


async def start_lab_job(job: str) -> int:
    """A lesson's lab job (``minigpt.control.lab_jobs``), counted like a training run."""
    from minigpt.control import lab_jobs
    from minigpt.runs.lab import job_dir

    with training_slot() as register:
        pid = await lab_jobs.start_job(job)
        register(job_dir(job))
    return pid


# ---------------------------------------------------------------------------- guest sessions


def stop_runs_in(data_dir: Path | str, grace_s: float = 10.0) -> list[Path]:
    """Stop every live run under ``data_dir``'s runs folder: SIGTERM (the worker saves and stops),
    then, after ``grace_s``, SIGKILL to its process group. Returns the runs that were live.

    For guest sessions, whose folder is about to be removed: nothing could reattach to the runs.
    """
    from minigpt.control.run_processes import RunControlError, trainer_pid
    from minigpt.runs.listing import list_runs, pid_alive

    root = Path(data_dir) / "runs"
    if not root.is_dir():
        return []
    live: dict[Path, int] = {}
    for info in list_runs(root):
        try:
            pid = trainer_pid(info.path)  # proven to be the run's trainer, never a pid the folder names
        except RunControlError:
            continue
        live[info.path] = pid
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while live and time.monotonic() < deadline and any(pid_alive(p) for p in live.values()):
        time.sleep(0.1)
    for pid in live.values():
        if pid_alive(pid):
            # Workers start in their own session, so the group is the worker and its children.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
    return list(live)
