"""An experiment read back from disk: its state, the table of runs, and the exports.

Nothing here waits for the sweep: a run in progress shows its latest numbers, a run not yet
started shows as pending, and the experiment's plot (``plots``) takes finished runs only. The
app polls :func:`collect` every second with a ``curves`` cache of :class:`RunMetrics` so each
metrics file is read incrementally (and from the top again when a resume rewrote it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from minigpt.control import run_processes
from minigpt.experiments import folder
from minigpt.experiments.run_extras import read_extras
from minigpt.experiments.spec import value_text
from minigpt.runs.metrics import RunMetrics


@dataclass
class RunResult:
    name: str
    values: dict
    status: str  # pending | starting | running | finished | stopped | failed
    n_params: int
    steps: int
    total_steps: int | None
    tokens: float
    flops: float | None
    val_loss: float | None  # best validation loss so far
    train_loss: float | None  # eval-mode loss on training names (finished runs), else None
    train_running: float | None  # the training log's latest loss (dropout on, for running runs)
    tokens_per_s: float | None
    long_loss: float | None = None
    reason: str | None = None
    path: Path | None = None

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def gap(self) -> float | None:
        if self.val_loss is None or self.train_loss is None:
            return None
        return self.val_loss - self.train_loss

    def to_dict(self) -> dict:
        return {"name": self.name, **{f"axis.{k}": v for k, v in self.values.items()}, "status": self.status,
                "n_params": self.n_params, "steps": self.steps, "total_steps": self.total_steps,
                "tokens": round(self.tokens), "flops": self.flops, "train_loss": self.train_loss,
                "train_loss_running": self.train_running, "val_loss": self.val_loss, "gap": self.gap,
                "long_loss": self.long_loss, "tokens_per_s": self.tokens_per_s, "reason": self.reason}


@dataclass
class ExperimentResults:
    experiment: folder.Experiment
    state: str
    runs: list[RunResult]
    scheduler: dict

    @property
    def finished(self) -> list[RunResult]:
        return [r for r in self.runs if r.finished]

    @property
    def axes(self) -> list[str]:
        return [a.name for a in self.experiment.spec.axes]


def run_result(exp: folder.Experiment, planned, curve: RunMetrics | None = None) -> RunResult:
    run_dir = exp.run_dir(planned)
    base = dict(name=planned.name, values=planned.values, n_params=planned.n_params, total_steps=planned.steps,
                flops=planned.flops, path=run_dir)
    if not run_dir.exists():
        return RunResult(status="pending", steps=0, tokens=0.0, val_loss=None, train_loss=None, train_running=None,
                         tokens_per_s=None, **base)
    state = run_processes.run_state(run_dir)
    info = state.info
    curve = curve or RunMetrics(run_dir)
    curve.poll()
    extras = read_extras(run_dir) if state.status == "finished" else {}
    # The name a run's status may carry (runs can be renamed) wins over the planned one.
    base["name"] = info.raw.get("name") or planned.name
    steps = max(info.step, curve.val_steps[-1] if curve.val_steps else 0)
    val = info.val_loss if state.status == "finished" and info.val_loss is not None else info.best_val
    if val is None and curve.val_loss:
        val = min(curve.val_loss)
    return RunResult(status=state.status if state.status != "unknown" else "pending", steps=steps,
                     tokens=steps * planned.tokens_per_step, val_loss=val, train_loss=extras.get("train_loss"),
                     train_running=curve.latest_train_loss, tokens_per_s=curve.tokens_per_s,
                     long_loss=extras.get("long_loss"), reason=state.reason, **base)


def experiment_state(exp_dir: Path, runs: list[RunResult]) -> str:
    sched = folder.read_scheduler(exp_dir)
    all_done = bool(runs) and all(r.finished for r in runs)
    if folder.scheduler_alive(exp_dir) is not None:
        # Every run done but the scheduler alive: it is measuring the last extras and exports.
        return "finishing" if all_done else sched.get("state", "running")
    if all_done:
        return "finished"
    want = folder.read_control(exp_dir)
    if want == "stop":
        return "stopped"
    if want == "pause" or sched.get("state") == "paused":
        return "paused"
    if sched.get("state") == "finished":
        return "finished"
    if not sched:
        # A scheduler launched and alive, its status not written yet: starting (not "not started").
        return "starting" if want == "run" and folder.launched_alive(exp_dir) else "not started"
    return "interrupted"  # the scheduler died (killed, machine restarted): resume continues it


def collect(exp: folder.Experiment | Path | str, curves: dict[str, RunMetrics] | None = None) -> ExperimentResults:
    """Everything known about the experiment now. ``curves`` (run name → RunMetrics) is filled and
    reused across calls so that polling reads only what was appended."""
    if not isinstance(exp, folder.Experiment):
        exp = folder.load_experiment(exp)
    curves = curves if curves is not None else {}
    out = []
    for planned in exp.runs:
        curve = curves.get(planned.name)
        if curve is None:
            curve = curves[planned.name] = RunMetrics(exp.run_dir(planned))
        out.append(run_result(exp, planned, curve))
    return ExperimentResults(exp, experiment_state(exp.dir, out), out, folder.read_scheduler(exp.dir))


# ---------------------------------------------------------------------------- the table

COLUMNS = ("params", "steps", "tokens", "train", "val", "gap", "tok/s", "status")


def _loss(v: float | None) -> str:
    return f"{v:.4f}" if v is not None else "–"


def _count(v: float | None) -> str:
    if v is None:
        return "–"
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= size:
            return f"{v / size:.3g}{unit}"
    return f"{v:.0f}"


def table_header(results: ExperimentResults) -> list[str]:
    extra = ["long"] if any(r.long_loss is not None for r in results.runs) else []
    return [*results.axes, *COLUMNS[:6], *extra, *COLUMNS[6:]]


def table_rows(results: ExperimentResults) -> list[list[str]]:
    """The table as text cells: axis values, params, steps, tokens, train, val, gap, tok/s, status."""
    with_long = any(r.long_loss is not None for r in results.runs)
    rows = []
    for r in results.runs:
        steps = f"{r.steps}/{r.total_steps}" if r.total_steps else str(r.steps)
        train = _loss(r.train_loss) if r.train_loss is not None else (
            f"~{r.train_running:.3f}" if r.train_running is not None else "–")
        gap = f"{r.gap:+.4f}" if r.gap is not None else "–"
        row = [value_text(r.values[a]) for a in results.axes]
        row += [_count(r.n_params), steps, _count(r.tokens), train, _loss(r.val_loss), gap]
        if with_long:
            row.append(_loss(r.long_loss))
        row += [_count(r.tokens_per_s), r.status]
        rows.append(row)
    return rows


def format_table(results: ExperimentResults) -> str:
    header = table_header(results)
    rows = table_rows(results)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def summary_line(results: ExperimentResults) -> str:
    done = len(results.finished)
    active = [r.name for r in results.runs if r.status in ("running", "starting")]
    text = f"{results.experiment.name}: {results.state}, {done}/{len(results.runs)} runs finished"
    if active:
        text += f", training {', '.join(active)}"
    return text
