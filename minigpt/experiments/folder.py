"""The experiment folder: its plan, the wishes sent to its scheduler and what the scheduler says.

An experiment lives in the runs folder as ``<runs>/<name>/``::

    experiment.json   the spec and the plan of runs, written once at creation
    control.json      what the learner wants: run, pause or stop (the CLI and the app write it)
    scheduler.json    what the scheduler process is doing (pid, state, active runs)
    events.jsonl      one line per launch, resume, finish or failure (a ledger: nothing runs twice)
    scheduler.log     the scheduler's own output
    <name>-d64/ …     one ordinary run folder per planned run (minigpt runs / watch work on them)
    results.csv, results.md, plot.txt   exports, rewritten as runs finish

Everything here reads and writes small JSON files atomically and imports no torch, so the app can
poll an experiment every second.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import guarded, paths
from minigpt.errors import ConfigError
from minigpt.experiments.spec import DataInfo, ExperimentSpec, PlannedRun
from minigpt.runs.files import now_iso, write_json_atomic
from minigpt.runs.listing import EXPERIMENT_FILE, pid_alive

CONTROL_FILE, SCHEDULER_FILE, EVENTS_FILE = "control.json", "scheduler.json", "events.jsonl"
LOG_FILE, LOCK_FILE = "scheduler.log", ".scheduler.lock"
SHORT_DATA, LONG_DATA = "data-short.txt", "data-long.txt"
WANTS = ("run", "pause", "stop")


@dataclass
class Experiment:
    dir: Path
    spec: ExperimentSpec
    runs: list[PlannedRun]
    info: DataInfo
    created_at: str | None = None
    long_data: Path | None = None  # names longer than any seen in training (positions preset)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.dir.name

    def run_dir(self, run: PlannedRun | str) -> Path:
        return self.dir / (run if isinstance(run, str) else run.name)

    def run(self, name: str) -> PlannedRun:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)


def experiments_root(root: Path | str | None = None) -> Path:
    return Path(root) if root is not None else paths.runs_dir()


def is_experiment(path: Path | str) -> bool:
    return (Path(path) / EXPERIMENT_FILE).is_file()


def unique_dir(root: Path, name: str) -> Path:
    """A new folder ``name`` (or ``name-2``, ``name-3`` …) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(1, 1000):
        candidate = root / (name if i == 1 else f"{name}-{i}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise ConfigError(f"could not create a folder for {name!r} under {root}")


def create_experiment(spec: ExperimentSpec, root: Path | str | None = None, data: str | None = None) -> Experiment:
    """Resolve ``spec`` into a plan on the dataset and write the experiment folder (no run starts).

    ``data`` is a dataset file (default: the embedded names). Every planned run is validated
    first, so an impossible grid point fails here, before anything is written.
    """
    from dataclasses import replace

    from minigpt.data import load_words
    from minigpt.experiments.spec import data_format_of, data_info, plan_runs, windowed_info

    fmt = data_format_of(spec)
    source = Path(data).expanduser().resolve() if data else paths.default_dataset()
    base = dict(spec.base)
    short, long_words = [], []
    if fmt != "lines":  # windows of a text or of generated rows (no file read): every position a target
        info = windowed_info(fmt, base.get("block_size"), source)
    else:
        words = short = load_words(source)
        full_block = max(len(w) for w in words) + 1
    if spec.length_split is not None:
        short = [w for w in words if len(w) <= spec.length_split]
        long_words = [w for w in words if len(w) > spec.length_split]
        if not short:
            raise ConfigError(f"no name has at most {spec.length_split} characters: nothing to train on")
        base.setdefault("block_size", full_block)  # positions for the long names exist, untrained
    if data and fmt != "repeats":
        base.setdefault("data", str(source))
    from minigpt.control.form import available_devices

    devices = {str(v) for a in spec.axes if a.name == "device" for v in a.values} | {str(base.get("device", "auto"))}
    missing = devices - set(available_devices())
    if missing:
        raise ConfigError(f"device {', '.join(sorted(missing))} is not available here "
                          f"({', '.join(available_devices())})")
    probe = replace(spec, base=base)
    if fmt == "lines":
        info = data_info(short, split_seed=int(base.get("split_seed", 42)), block_size=base.get("block_size"))
    # Plan with a provisional name to validate before any folder exists, then with the real one.
    plan_runs(probe, info)
    exp_dir = unique_dir(experiments_root(root), spec.name)
    try:
        final = replace(probe, name=exp_dir.name)
        if spec.length_split is not None:
            (exp_dir / SHORT_DATA).write_text("\n".join(short) + "\n", encoding="utf-8")
            (exp_dir / LONG_DATA).write_text("\n".join(long_words) + "\n", encoding="utf-8")
            final.base["data"] = str(exp_dir / SHORT_DATA)
        runs = plan_runs(final, info)
        record = {"version": 1, "spec": final.to_dict(), "created_at": now_iso(),
                  "data": "generated" if fmt == "repeats" else str(source), "info": info.__dict__, "runs": [r.to_dict() for r in runs],
                  "long_data": LONG_DATA if long_words else None}
        write_json_atomic(exp_dir / CONTROL_FILE, {"want": "run", "at": now_iso()})
        write_json_atomic(exp_dir / EXPERIMENT_FILE, record)  # last: its presence marks the folder
    except BaseException:
        import shutil

        shutil.rmtree(exp_dir, ignore_errors=True)
        raise
    return load_experiment(exp_dir)


def load_experiment(exp_dir: Path | str) -> Experiment:
    exp_dir = Path(exp_dir)
    path = exp_dir / EXPERIMENT_FILE
    try:
        record = json.loads(guarded.read_text(path, guarded.TEXT_FILE_BYTES))
        spec = ExperimentSpec.from_dict(record["spec"])
        runs = [PlannedRun.from_dict(r) for r in record["runs"]]
        info = DataInfo(**record["info"])
    except FileNotFoundError:
        raise ConfigError(f"{exp_dir}: not an experiment folder (no {EXPERIMENT_FILE})") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{path}: unreadable ({e})") from None
    long_data = exp_dir / record["long_data"] if record.get("long_data") else None
    return Experiment(exp_dir, spec, runs, info, record.get("created_at"), long_data, record)


def list_experiments(root: Path | str | None = None) -> list[Path]:
    """Experiment folders under ``root``, newest first."""
    root = experiments_root(root)
    if not root.is_dir():
        return []
    found = [d for d in root.iterdir() if d.is_dir() and is_experiment(d)]
    return sorted(found, key=lambda d: (d / EXPERIMENT_FILE).stat().st_mtime, reverse=True)


def find_experiment(name: str | None, root: Path | str | None = None) -> Path:
    """An experiment by folder, by name, or (None) the newest one."""
    if name is not None:
        for candidate in (Path(name), experiments_root(root) / name):
            if is_experiment(candidate):
                return candidate
        raise ConfigError(f"no experiment called {name!r} in {experiments_root(root)}")
    found = list_experiments(root)
    if not found:
        raise ConfigError(f"no experiments in {experiments_root(root)}: start one with `minigpt sweep PRESET`")
    return found[0]


# ---------------------------------------------------------------------------- control and status


def _read_json(path: Path) -> dict:
    try:
        value = json.loads(guarded.read_text(path, guarded.SMALL_JSON_BYTES))
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError, RecursionError):  # (nested past Python's limit: not ours either)
        return {}


def read_control(exp_dir: Path | str) -> str:
    want = _read_json(Path(exp_dir) / CONTROL_FILE).get("want", "run")
    return want if want in WANTS else "run"


def write_control(exp_dir: Path | str, want: str, launched_pid: int | None = None) -> None:
    """``launched_pid``: the scheduler just launched for this want (it has not written its status yet)."""
    if want not in WANTS:
        raise ValueError(want)
    record = {"want": want, "at": now_iso()}
    if launched_pid is not None:
        record["launched_pid"] = launched_pid
    write_json_atomic(Path(exp_dir) / CONTROL_FILE, record)


def launched_alive(exp_dir: Path | str) -> bool:
    """A scheduler the app launched lives but has not written its status yet: the sweep is starting."""
    pid = _read_json(Path(exp_dir) / CONTROL_FILE).get("launched_pid")
    return pid_alive(pid) if isinstance(pid, int) else False


def read_scheduler(exp_dir: Path | str) -> dict:
    return _read_json(Path(exp_dir) / SCHEDULER_FILE)


def scheduler_alive(exp_dir: Path | str) -> int | None:
    """The live scheduler's pid, or None."""
    st = read_scheduler(exp_dir)
    pid = st.get("pid")
    return pid if st.get("state") not in ("finished", "paused", "stopped") and pid_alive(pid, st.get("pid_start")) \
        else None


def append_event(exp_dir: Path | str, event: str, run: str | None = None, **extra) -> None:
    record = {"t": round(time.time(), 3), "at": now_iso(), "event": event, **({"run": run} if run else {}), **extra}
    with guarded.open_append(Path(exp_dir) / EVENTS_FILE) as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def read_events(exp_dir: Path | str) -> list[dict]:
    try:
        lines = guarded.read_text(Path(exp_dir) / EVENTS_FILE, guarded.TEXT_FILE_BYTES, "replace").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut short by a kill, or one the scheduler never wrote
        if isinstance(rec, dict):
            out.append(rec)
    return out


def log_tail(exp_dir: Path | str, lines: int = 8) -> list[str]:
    """The scheduler's last words (where a crash leaves its traceback)."""
    try:
        text = guarded.read_tail(Path(exp_dir) / LOG_FILE, 16384).decode("utf-8", "replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.strip()][-lines:]
