"""The background process that runs an experiment's plan, and the calls that start and steer it.

``python -m minigpt.experiments.sweep_runner EXP_DIR [--jobs N]`` starts each planned run the way the
app does (``minigpt.control.run_processes``: a ``minigpt train`` worker in its own session, writing an
ordinary run folder), ``jobs`` at a time, until every run has finished. It keeps no state of its
own that matters: on every tick it reads each run folder and decides from what is on disk —

- finished: done (its extras are measured once, then the exports are rewritten);
- running or starting (a worker is alive, maybe from a killed scheduler): watched, never doubled;
- stopped or dead with a checkpoint: resumed from its last checkpoint;
- never started, or dead before its first checkpoint: started from scratch.

So ``kill -9`` of the scheduler loses nothing: a new one continues where the disk says. An exclusive
lock (``flock``, released by the kernel when the process dies) keeps two schedulers off one
experiment, and ``events.jsonl`` records every launch. Pause and stop are wishes written to
``control.json``: the scheduler stops its workers cleanly (each saves a checkpoint) and exits;
resume starts a new scheduler.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from minigpt import guarded, spawn
from minigpt.control import run_processes
from minigpt.experiments import folder as ef
from minigpt.experiments.run_extras import EXTRAS_FILE, compute_extras
from minigpt.runs.files import now_iso, process_start_time, write_json_atomic
from minigpt.training.options import TrainConfig

POLL_S = 0.2  # between a run finishing and the next starting: the scheduler's overhead
MAX_FAILURES = 3  # a run that crashes this often is given up (a bad config would loop forever)
ABANDONED_GRACE_S = 10.0  # a run folder without status this young may belong to a worker still importing
STOP_TIMEOUT_S = 300.0
_SPAWNED: list = []  # process objects of launched schedulers, kept from the collector


class Scheduler:
    def __init__(self, exp_dir: Path, jobs: int = 1):
        self.exp = ef.load_experiment(exp_dir)
        self.dir = self.exp.dir
        self.jobs = max(1, jobs)
        self.active: dict[str, int] = {}  # run name → slot (for pinning cores)
        self.held: set[str] = set()  # runs a learner stopped by hand: left alone until a resume
        self.wish: str | None = None  # a signal asked for this (pause), whatever control.json says
        self.extras_task: asyncio.Task | None = None
        self.state = "running"
        self._written: dict | None = None

    # -- status ---------------------------------------------------------------------------------
    def write_status(self, state: str | None = None, message: str | None = None) -> None:
        """Write scheduler.json when something in it changed (each tick would be 5 fsyncs a second)."""
        self.state = state or self.state
        status = {"pid": os.getpid(), "pid_start": process_start_time(os.getpid()), "state": self.state,
                  "jobs": self.jobs, "active": sorted(self.active), "held": sorted(self.held),
                  "started_at": self.started_at, "message": message}
        if status != self._written:
            write_json_atomic(self.dir / ef.SCHEDULER_FILE, {**status, "updated_at": now_iso()})
            self._written = status

    def failures(self, run: str) -> int:
        return sum(1 for e in ef.read_events(self.dir) if e.get("event") == "failed" and e.get("run") == run)

    # -- the loop -------------------------------------------------------------------------------
    async def run(self) -> str:
        self.started_at = now_iso()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self._on_signal)
        ef.append_event(self.dir, "scheduler_start", pid=os.getpid(), jobs=self.jobs)
        self.write_status("running")
        try:
            while True:
                want = self.wish or ef.read_control(self.dir)
                if want in ("pause", "stop"):
                    await self.wind_down(want)
                    return self.state
                outcome = await self.tick()
                if outcome == "finished":
                    await self.finish_extras()
                    self.write_status("finished")
                    ef.append_event(self.dir, "experiment_finished")
                    return "finished"
                if outcome == "held":  # only runs a learner stopped by hand are left: wait for a resume
                    await self.finish_extras()
                    self.write_status("paused", message="the runs left were stopped by hand: resume continues them")
                    ef.append_event(self.dir, "pause", reason="held runs only")
                    return "paused"
                await asyncio.sleep(POLL_S)
        finally:
            ef.append_event(self.dir, "scheduler_exit", state=self.state)

    def _on_signal(self) -> None:
        self.wish = "pause"  # a clean stop of the workers, resumable later

    async def tick(self) -> str | None:
        """Look at every run and launch what may run. "finished" once every run is done or given
        up, "held" when only runs stopped by hand are left, else None."""
        pending, done = [], 0
        previously_active = dict(self.active)
        self.active = {}
        for run in self.exp.runs:
            phase = self.phase(run.name)
            if run.name in previously_active and phase != "active":
                self.ended(run.name, phase)
                if run.name in self.held:
                    phase = "held"
            if phase == "active":
                self.active[run.name] = previously_active.get(run.name, self._free_slot())
            elif phase in ("finished", "given_up"):
                done += 1
            elif phase == "held":
                continue
            elif phase == "wait":
                pending.append(None)  # a folder that may still get its worker's status
            else:
                pending.append((run, phase))
        for item in pending:
            if len(self.active) >= self.jobs:
                break
            if item is not None:
                await self.launch(*item)
        self.start_extras()
        self.write_status()
        if self.active or pending:
            return None
        return "finished" if done == len(self.exp.runs) else "held"

    def phase(self, name: str) -> str:
        run_dir = self.exp.run_dir(name)
        if not run_dir.exists():
            return "fresh"
        state = run_processes.run_state(run_dir)
        if state.status in ("running", "starting"):
            return "active"
        if state.status == "finished":
            return "finished"
        if name in self.held:
            return "held"
        if self.failures(name) >= MAX_FAILURES:
            return "given_up"
        if run_processes.has_checkpoint(run_dir):
            return "resume"
        if state.info.raw == {} and not (run_dir / run_processes.LAUNCH_FILE).exists() and \
                time.time() - _newest_mtime(run_dir) < ABANDONED_GRACE_S:
            return "wait"  # created by a scheduler killed mid-launch: its worker may yet appear
        return "fresh"

    def ended(self, name: str, phase: str) -> None:
        """A run this scheduler watched is no longer running."""
        if phase == "finished":
            ef.append_event(self.dir, "finished", name)
        elif phase == "resume" and run_processes.run_state(self.exp.run_dir(name)).status == "stopped":
            # Stopped while the experiment runs: a learner pressed stop on it (runs screen, CLI).
            self.held.add(name)
            ef.append_event(self.dir, "held", name)
        else:
            ef.append_event(self.dir, "failed", name, reason=run_processes.run_state(self.exp.run_dir(name)).reason)

    def _free_slot(self) -> int:
        used = set(self.active.values())
        return next(i for i in range(self.jobs + 1) if i not in used)

    async def launch(self, run, phase: str) -> None:
        run_dir = self.exp.run_dir(run.name)
        slot = self._free_slot()
        try:
            if phase == "resume":
                pid = await run_processes.resume_run(run_dir)
                ef.append_event(self.dir, "resume", run.name, pid=pid)
            else:
                if run_dir.exists():  # an attempt that died before its first checkpoint
                    shutil.rmtree(run_dir)
                    ef.append_event(self.dir, "discard", run.name)
                made = await run_processes.start_run(TrainConfig.from_dict(run.config), root=self.dir, name=run.name)
                if made != run_dir:
                    raise RuntimeError(f"run folder {made} is not the planned {run_dir}")
                pid = (run_processes._launch(run_dir) or {}).get("pid")
                ef.append_event(self.dir, "start", run.name, pid=pid)
        except (run_processes.RunControlError, OSError, RuntimeError, ValueError) as e:
            ef.append_event(self.dir, "failed", run.name, reason=f"could not launch: {e}")
            return
        self.active[run.name] = slot
        self._pin(pid, slot)

    def _pin(self, pid: int | None, slot: int) -> None:
        """With several jobs, each worker gets its own share of the cores instead of all fighting
        over all of them (the trainer sizes its thread pool from its affinity)."""
        if self.jobs < 2 or pid is None or not hasattr(os, "sched_setaffinity"):
            return
        cores = sorted(os.sched_getaffinity(0))
        share = max(1, len(cores) // self.jobs)
        mine = set(cores[slot * share:(slot + 1) * share]) or set(cores)
        try:
            os.sched_setaffinity(pid, mine)
        except OSError:
            pass  # the worker already exited, or the platform refuses: it shares the cores

    # -- extras, exports ------------------------------------------------------------------------
    def start_extras(self) -> None:
        """Measure one finished run's extras in a thread, so the next run is not held up."""
        if self.extras_task is not None and not self.extras_task.done():
            return
        for run in self.exp.runs:
            run_dir = self.exp.run_dir(run.name)
            if not (run_dir / EXTRAS_FILE).exists() and run_processes.run_state(run_dir).status == "finished":
                self.extras_task = asyncio.create_task(self._extras(run.name))
                return

    async def _extras(self, name: str) -> None:
        try:
            await asyncio.to_thread(compute_extras, self.exp.run_dir(name), self.exp.long_data)
        except Exception as e:
            write_json_atomic(self.exp.run_dir(name) / EXTRAS_FILE, {"error": f"{type(e).__name__}: {e}"})
        self.export()

    async def finish_extras(self) -> None:
        while True:
            if self.extras_task is not None:
                await self.extras_task
            self.extras_task = None
            self.start_extras()
            if self.extras_task is None:
                break
        self.export()

    def export(self) -> None:
        from minigpt.experiments import exports

        try:
            exports.write_exports(self.exp)
        except Exception as e:
            print(f"exports not written: {e}", file=sys.stderr, flush=True)

    # -- pause / stop ---------------------------------------------------------------------------
    async def wind_down(self, want: str) -> None:
        self.write_status("pausing" if want == "pause" else "stopping")
        for name in list(self.active):
            try:
                run_processes.stop_run(self.exp.run_dir(name))
            except run_processes.RunControlError:
                pass
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while any(run_processes.run_state(self.exp.run_dir(n)).status in ("running", "starting") for n in self.active):
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(POLL_S)
        if self.extras_task is not None:
            await self.extras_task
        self.export()
        self.active = {}
        self.write_status("paused" if want == "pause" else "stopped")
        ef.append_event(self.dir, want)


def _newest_mtime(folder: Path) -> float:
    newest = 0.0
    for path in [folder, *folder.iterdir()]:
        try:
            newest = max(newest, path.stat().st_mtime)
        except OSError:
            pass  # a temporary file renamed away meanwhile
    return newest


def acquire_lock(exp_dir: Path):
    """The experiment's lock file, held (or None when another scheduler holds it)."""
    handle = open(Path(exp_dir) / ef.LOCK_FILE, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigpt.experiments.sweep_runner")
    parser.add_argument("experiment", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    lock = acquire_lock(args.experiment)
    if lock is None:
        print(f"{now_iso()} another scheduler is running this experiment: nothing to do", flush=True)
        return 0
    print(f"{now_iso()} scheduler {os.getpid()} on {args.experiment} with {args.jobs} job(s)", flush=True)
    state = asyncio.run(Scheduler(args.experiment, args.jobs).run())
    print(f"{now_iso()} scheduler exits: {state}", flush=True)
    return 0


# ---------------------------------------------------------------------------- steering from outside


def max_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _scheduler_command(exp_dir: Path, jobs: int) -> tuple[list[str], dict[str, str]]:
    env = spawn.child_env(import_root=Path(__file__).resolve().parents[2])  # it must import this minigpt
    return [sys.executable, "-m", "minigpt.experiments.sweep_runner", str(exp_dir), "--jobs", str(jobs)], env


async def start(exp_dir: Path | str, jobs: int = 1) -> int | None:
    """From the app: ask for the experiment to run and start a scheduler (an asyncio subprocess in
    its own session) unless one is alive. Returns its pid, or None."""
    exp_dir = Path(exp_dir)
    ef.write_control(exp_dir, "run")
    if ef.scheduler_alive(exp_dir) is not None:
        return None
    argv, env = _scheduler_command(exp_dir, min(jobs, max_jobs()))
    with guarded.open_append(exp_dir / ef.LOG_FILE, text=False) as log:
        proc = await spawn.start(argv, env=env, new_session=True, stdout=log, stderr=log)
    _SPAWNED.append(proc)
    ef.write_control(exp_dir, "run", launched_pid=proc.pid)  # "starting" until it writes its status
    return proc.pid


def start_sync(exp_dir: Path | str, jobs: int = 1) -> int | None:
    """The same from a plain process (the CLI): no event loop to outlive the scheduler it starts."""
    exp_dir = Path(exp_dir)
    ef.write_control(exp_dir, "run")
    if ef.scheduler_alive(exp_dir) is not None:
        return None
    argv, env = _scheduler_command(exp_dir, min(jobs, max_jobs()))
    with guarded.open_append(exp_dir / ef.LOG_FILE, text=False) as log:
        proc = spawn.popen(argv, env=env, new_session=True, stdout=log, stderr=log)
    _SPAWNED.append(proc)
    ef.write_control(exp_dir, "run", launched_pid=proc.pid)  # "starting" until it writes its status
    return proc.pid


def request(exp_dir: Path | str, want: str) -> str:
    """Pause or stop: tell the scheduler; with no scheduler alive, stop its runs directly."""
    ef.write_control(exp_dir, want)
    if ef.scheduler_alive(exp_dir) is not None:
        return f"{want} requested: the scheduler stops its runs at their next step (each saves a checkpoint)"
    stopped = 0
    for run in ef.load_experiment(exp_dir).runs:
        try:
            run_processes.stop_run(Path(exp_dir) / run.name)
            stopped += 1
        except run_processes.RunControlError:
            pass
    done = {"pause": "paused", "stop": "stopped"}[want]
    return f"{done}: no scheduler was running" + (f"; stopped {stopped} orphaned run(s)" if stopped else "")


if __name__ == "__main__":
    sys.exit(main())
