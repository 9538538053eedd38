"""What ``minigpt sweep`` prints: following a sweep, its status, the table, the plot and the fit.

The click command itself lives in ``minigpt.cli``; this module turns its options into a spec,
starts the scheduler and writes the text, so the command stays a list of options.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from minigpt import outputs
from minigpt.errors import ConfigError
from minigpt.experiments import exports, folder, plots, presets, results, sweep_runner
from minigpt.experiments.spec import Budget, ExperimentSpec, load_spec_file
from minigpt.runs.listing import pid_alive
from minigpt.text import printable

FOLLOW_POLL_S = 1.0


def _say(text: str, err: bool = False) -> None:
    """One message to the terminal: names and paths (from folders, a spec, options) made printable."""
    click.echo(printable(text, keep="\n"), err=err)


def budget_from(steps: int | None, time_s: float | None, compute: float | None) -> Budget | None:
    given = [(k, v) for k, v in (("steps", steps), ("time", time_s), ("compute", compute)) if v is not None]
    if len(given) > 1:
        raise ConfigError("give one budget: --steps, --time or --compute")
    return Budget(*given[0]) if given else None


def spec_from(target: str | None, axes: tuple[str, ...], sets: tuple[str, ...], budget: Budget | None,
              name: str | None) -> ExperimentSpec:
    """The experiment the options describe: a preset, a TOML file, or --axis options."""
    base = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: write option=value")
        key = key.strip().replace("-", "_")
        base[key] = presets.coerce(key, value)
    if axes:
        if target is not None:
            raise ConfigError("give a preset, a TOML file or --axis options, not both")
        parsed = [presets.parse_axis(a) for a in axes]
        compute_axis = next((a for a in parsed if a.name == "compute"), None)
        if budget is None and compute_axis is not None:
            budget = Budget("compute", compute_axis.values[0])
        if budget is None:
            raise ConfigError("a custom grid needs a budget: --steps, --time or --compute")
        return presets.custom_spec(name or "sweep", parsed, budget, base)
    if target is None:
        raise ConfigError(f"give a preset ({', '.join(presets.preset_names())}), a TOML file, or --axis "
                          f"option=v1,v2 with a budget")
    if target.endswith(".toml") or Path(target).is_file():
        spec = load_spec_file(target)
        if name:
            spec.name = name
        if budget is not None:
            spec.budget = budget
        if base:
            spec.base = {**spec.base, **base}
        spec.validate()
        return spec
    return presets.preset_spec(target, experiment_name=name, budget=budget, base=base)


MAX_JOBS = 64  # runs side by side: each needs a core of its own


def estimate_text(spec: ExperimentSpec, jobs: int) -> str:
    """What a sweep will cost, said before it starts: its runs, their budget and, for a time
    budget, the wall-clock time at ``jobs`` runs side by side."""
    text = f"{spec.n_runs} runs, {spec.budget.describe()}"
    if spec.budget.kind == "steps":
        text += f", {spec.n_runs * int(spec.budget.value):,} steps in all"
    elif spec.budget.kind == "time":
        seconds = -(-spec.n_runs // jobs) * spec.budget.value
        text += f", about {seconds / 60:,.0f} min with {jobs} job(s) side by side"
    return text


def start(spec: ExperimentSpec, data: str | None, jobs: int, detach: bool, as_json: bool) -> int:
    if not 1 <= jobs <= MAX_JOBS:
        raise ConfigError(f"--jobs must be from 1 to {MAX_JOBS}, got {jobs}")
    usable = sweep_runner.max_jobs()
    if jobs > usable:
        _say(f"note: {usable} core(s) here, so at most {usable} job(s) side by side", err=True)
    _say(f"experiment {spec.name}: {estimate_text(spec, min(jobs, usable))}", err=True)  # before any work
    exp = folder.create_experiment(spec, data=data)
    pid = sweep_runner.start_sync(exp.dir, jobs)
    total_flops = sum(r.flops or 0 for r in exp.runs)
    _say((f"{total_flops:.2g} FLOPs in all; " if total_flops else "") + f"folder: {exp.dir}", err=True)
    if detach:
        _say(f"running in the background: `minigpt sweep --status {exp.name}` or "
                   f"`minigpt watch {exp.name}`", err=True)
        if as_json:
            click.echo(json.dumps({"experiment": exp.name, "path": str(exp.dir)}))
        return 0
    return follow(exp.dir, as_json, pid)


def follow(exp_dir: Path, as_json: bool = False, pid: int | None = None) -> int:
    """Print each run as it starts and finishes until the sweep ends; Ctrl-C only detaches.
    ``pid``: the scheduler just started, to notice one that died before writing its status."""
    exp = folder.load_experiment(exp_dir)
    seen: dict[str, str] = {}
    curves: dict = {}
    started = time.monotonic()
    time.sleep(0.5)  # let the scheduler write its status
    try:
        while True:
            res = results.collect(exp, curves)
            done = len(res.finished)
            for r in res.runs:
                if seen.get(r.name) != r.status and r.status != "pending":
                    extra = f"  val {r.val_loss:.4f}" if r.finished and r.val_loss is not None else ""
                    _say(f"[{done}/{len(res.runs)} finished {time.monotonic() - started:5.0f}s] "
                         f"{r.name}: {r.status}{extra}", err=True)
                seen[r.name] = r.status
            if res.state in ("finished", "paused", "stopped", "interrupted"):
                break
            if res.state == "not started" and pid is not None and not pid_alive(pid):
                _say("the scheduler exited before it started:\n" + "\n".join(folder.log_tail(exp_dir)), err=True)
                return 1
            time.sleep(FOLLOW_POLL_S)
    except KeyboardInterrupt:
        _say(f"\ndetached: the sweep goes on in the background (`minigpt sweep --status {exp.name}`)", err=True)
        return 130
    res = results.collect(exp)
    print_results(res, as_json)
    if res.state == "finished":
        _alert_finished(exp.name, res)
    if res.state == "interrupted":
        _say(f"the scheduler exited before the end: `minigpt sweep --resume {exp.name}` continues", err=True)
        return 1
    return 0


def _alert_finished(name: str, res: results.ExperimentResults) -> None:
    """The sweep followed in the foreground ended: the learner's alert (bell, notification, command)."""
    from minigpt import alerts

    vals = [r.val_loss for r in res.finished if r.val_loss is not None]
    best = f", best val {min(vals):.4f}" if vals else ""
    alert = alerts.event("sweep_finished", name, f"sweep {name} finished: {len(res.finished)} runs{best}",
                         runs=len(res.finished), val_loss=min(vals) if vals else None)
    problem = alerts.deliver(alert, alerts.stored_choices(), alerts.terminal_of(sys.stderr))
    if problem:
        click.echo(f"note: {printable(problem)}", err=True)


def print_results(res: results.ExperimentResults, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(exports.to_json(res), indent=2))
        return
    plot = plots.plot_data(res)
    _say(results.summary_line(res))
    _say("")
    _say(results.format_table(res))
    _say("")
    _say(plots.render(plot, width=78, height=20))
    for note in plot.notes:
        _say(f"- {note}")


def status(name: str | None, as_json: bool) -> int:
    if name is None and not as_json:
        found = folder.list_experiments()
        if len(found) > 1:
            _say("experiments, newest first: " + ", ".join(p.name for p in found[:8]), err=True)
    print_results(results.collect(folder.find_experiment(name)), as_json)
    return 0


def steer(name: str | None, action: str, jobs: int) -> int:
    exp_dir = folder.find_experiment(name)
    if action == "resume":
        res = results.collect(exp_dir)
        if res.state == "finished" and folder.read_scheduler(exp_dir).get("state") == "finished":
            _say(f"{exp_dir.name}: every run has finished; nothing to resume")
            return 0
        pid = sweep_runner.start_sync(exp_dir, jobs)
        _say(f"{exp_dir.name}: " + ("scheduler already running" if pid is None else
                                           f"scheduler {pid} continues the unfinished runs"))
        return 0
    _say(f"{exp_dir.name}: {sweep_runner.request(exp_dir, action)}")
    return 0


def export(name: str | None, fmt: str, out: Path | None) -> int:
    if out is not None:
        outputs.check_output(out)  # before the results are read: a refusal comes at once
    res = results.collect(folder.find_experiment(name))
    text = {"csv": exports.to_csv, "md": exports.to_markdown,
            "txt": lambda r: plots.render(plots.plot_data(r), width=78, height=22) + "\n",
            "json": lambda r: json.dumps(exports.to_json(r), indent=2) + "\n"}[fmt](res)
    if out is None:
        sys.stdout.write(text)
    else:
        outputs.write_output(out, text)  # never onto the tutor's files; a full disk keeps the old file
        _say(f"wrote {out}", err=True)
    return 0


def list_all() -> int:
    _say("presets:")
    for key, p in presets.PRESETS.items():
        (kind, amount), = p["budget"].items()
        _say(f"  {key:<16} {p['title']:<22} {Budget(kind, amount).describe()}")
    found = folder.list_experiments()
    if found:
        _say("experiments, newest first:")
        for d in found:
            res = results.collect(d)
            _say(f"  {d.name:<24} {res.state:<12} {len(res.finished)}/{len(res.runs)} finished")
    return 0
