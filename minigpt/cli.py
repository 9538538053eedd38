"""The ``minigpt`` command: the tutor app by default, plus headless train / sample / eval / runs.

Every mistake a user can make (a bad dataset, an impossible hyperparameter, a damaged
checkpoint, a prefix the model cannot spell) ends with one line ``Error: …`` and exit status 2.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minigpt.training.options import TrainConfig


import click  # noqa: E402

from minigpt.errors import (CheckpointError, ConfigError, DatasetError, RunError, SamplingError,  # noqa: E402
                            TrainingDiverged)
from minigpt.training.options import OPTIONS, OPTIONS_BY_NAME  # noqa: E402  (no torch)
from minigpt.text import printable  # noqa: E402

from minigpt.runs.schema import RunState  # noqa: E402

USER_ERRORS = (ConfigError, DatasetError, CheckpointError, SamplingError, RunError, TrainingDiverged)


class UserError(click.ClickException):
    exit_code = 2

    def __init__(self, message: str):
        super().__init__(printable(message))  # paths and file contents end up in messages


def _fail(e: Exception) -> UserError:
    return UserError(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)


def apply_data_dir(data_dir: Path | None) -> None:
    """Point the per-user folders (progress, settings, runs) at ``data_dir`` for this process."""
    if data_dir is not None:
        os.environ["MINIGPT_DATA_DIR"] = str(data_dir.expanduser().resolve())
    from minigpt import paths

    try:  # one clear line now, rather than a traceback from whichever command first needs it
        paths.user_data_dir()
    except OSError as e:
        raise UserError(f"cannot use {os.environ.get('MINIGPT_DATA_DIR') or 'the data folder'} "
                        f"for progress and runs: {e.strerror or e}") from None


data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder for progress, settings and training runs (default: the per-user data folder).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@data_dir_option
def main(data_dir: Path | None) -> None:
    """minigpt: train, sample and evaluate the tutor's models without the app."""
    apply_data_dir(data_dir)


# ---------------------------------------------------------------------------- train


def _progress_printer(cfg, quiet: bool):
    interactive = sys.stderr.isatty()
    state = {"last_val": None, "t": 0.0}

    def on_log(rec: dict) -> None:
        if quiet:
            return
        if "val_loss" in rec:
            state["last_val"] = rec["val_loss"]
        if cfg.model == "bigram":
            frac, where = 1.0, "counted"
        elif cfg.steps is not None:
            frac = rec["step"] / cfg.steps
            where = f"step {rec['step']}/{cfg.steps}"
        else:
            frac = min(rec["elapsed_s"] / cfg.time_s, 1.0)
            where = f"step {rec['step']} {rec['elapsed_s']:.0f}/{cfg.time_s:g}s"
        width = 24
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        loss = f"loss {rec['train_loss']:.4f}" if "train_loss" in rec else ""
        val = f"val {state['last_val']:.4f}" if state["last_val"] is not None else ""
        line = f"[{bar}] {where} {loss} {val} {rec.get('tokens_per_s', 0) / 1000:.1f}k tok/s"
        if interactive:
            click.echo("\r" + line.ljust(100), nl=False, err=True)
        elif "val_loss" in rec or time.monotonic() - state["t"] > 10:
            click.echo(line, err=True)
            state["t"] = time.monotonic()

    return on_log


def training_options(command):
    """One click option per training option (``minigpt.training.options.OPTIONS``), in its order.

    Every flag defaults to None (not given): what is not given keeps the config file's value
    (``--config``) or TrainConfig's default, which the help states.
    """
    for opt in reversed(OPTIONS):
        help_text = f"{opt.help} [default: {opt.default_text}]"
        if opt.kind is bool:
            name = opt.cli_flag[2:]
            command = click.option(f"--{name}/--no-{name}", opt.name, default=None, help=help_text)(command)
            continue
        kind = click.Choice(opt.choices) if opt.choices else {int: click.INT, float: click.FLOAT}.get(opt.kind,
                                                                                                     click.STRING)
        metavar = opt.label.upper().replace(" ", "_") if kind is click.STRING else None
        command = click.option(opt.cli_flag, opt.name, type=kind, default=None, help=help_text,
                               metavar=metavar)(command)
    return command


def config_from_flags(config_file: Path | None, given: dict) -> "TrainConfig":
    """The run's TrainConfig: the config file (or the defaults), then the flags given on top.

    Giving one of a group of alternatives (``--time``) unsets the others (the default ``--steps``);
    giving two of them is refused.
    """
    from minigpt.training.options import TrainConfig, load_config_file

    values = {name: value for name, value in given.items() if value is not None}
    for group in sorted({o.one_of for o in OPTIONS if o.one_of}):
        members = [o for o in OPTIONS if o.one_of == group]
        named = [o for o in members if o.name in values]
        if len(named) > 1:
            raise ConfigError(f"give either {' or '.join(o.cli_flag for o in named)}, not both", field=named[1].name)
        if named:
            values.update({o.name: None for o in members if o is not named[0]})
    base = load_config_file(config_file) if config_file is not None else TrainConfig()
    return TrainConfig.from_dict({**base.to_dict(), **values})


def _naming_the_flag(e: Exception) -> Exception:
    """A ConfigError about one option, with the option's flag in front (``--lr: …``)."""
    opt = OPTIONS_BY_NAME.get(getattr(e, "field", None) or "")
    if opt is not None and opt.cli_flag not in str(e):
        return ConfigError(f"{opt.cli_flag}: {e}", field=opt.name)
    return e


@main.command()
@click.option("--config", "config_file", type=click.Path(path_type=Path), default=None,
              help="Start from a saved training config: a config.json or a run folder (copy its settings). "
                   "Options given beside it change those settings.")
@training_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Run folder (default: a new timestamped folder under the runs folder).")
@click.option("--resume", is_flag=False, flag_value="", default=None, metavar="[RUN_DIR]",
              help="Continue a stopped run with its own settings: the given folder, --out, or the latest run.")
@click.option("--nnodes", type=click.IntRange(1, 1024), default=1, help="Machines in a multi-node run (default 1).")
@click.option("--node-rank", type=click.IntRange(0, 1023), default=0, help="This machine's rank (multi-node).")
@click.option("--master-addr", default=None, help="Address of the node-rank-0 machine (multi-node).")
@click.option("--master-port", type=click.IntRange(1, 65535), default=None, help="Its port (multi-node).")
@click.option("--rdzv-endpoint", default=None, help="HOST:PORT of a c10d rendezvous, instead of the master.")
@click.option("--name", "run_name", default=None,
              help="What the run is called in lists (default: its model and key settings, e.g. gpt d64 L4 lr5e-3).")
@click.option("--note", default=None, help="A line about the run, shown in lists.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
@click.option("--nice", type=click.IntRange(0, 19), default=0,
              help="Lower this process's CPU priority (the app starts workers at 5 to stay responsive).")
def train(config_file, out, resume, nnodes, node_rank, master_addr, master_port, rdzv_endpoint, run_name, note, quiet,
          nice, **given):
    """Train a model; writes metrics, status and the best checkpoint into a run folder."""
    from minigpt.training import cpu_policy

    policy = cpu_policy.choose_at_start()  # sets OMP_WAIT_POLICY: before anything below imports torch
    if nice and hasattr(os, "nice"):
        os.nice(nice)  # an idle machine trains as fast; a busy one keeps the terminal snappy
    from minigpt.runs import listing as runs
    from minigpt.training.loop import train as run_training

    try:
        if resume is not None:
            # the number of processes may change on resume: a run continues on any number of them
            changed = [OPTIONS_BY_NAME[name].cli_flag for name, value in given.items()
                       if value is not None and name != "processes"]
            if config_file is not None or changed:
                raise ConfigError(f"--resume continues a run with its own settings: leave out "
                                  f"{', '.join(['--config'] if config_file is not None else changed)}")
            from minigpt.runs.resolve import resolve_run
            from minigpt.training.options import load_run_config

            # A folder, a run name, --out, or the newest run (broken ones are never picked).
            run_dir = resolve_run(resume or (str(out) if out is not None else None),
                                  pick=lambda info: info.status != RunState.BROKEN, none_found="no run to resume")
            cfg = load_run_config(run_dir)
        else:
            cfg = config_from_flags(config_file, given)
            if "LOCAL_WORLD_SIZE" in os.environ:  # a rank under torchrun: the processes of this machine
                cfg.processes = int(os.environ["LOCAL_WORLD_SIZE"])
            # Read the data now so a bad file fails before a run folder is created.
            from minigpt.training.options import load_data_for
            note = getattr(load_data_for(cfg), "cut_note", None)
            if note:  # even with -q: the data is not what the file says
                click.echo(f"note: {printable(note)}", err=True)
            if out is not None:
                # torchrun's ranks and the launchers of other nodes share the folder of node 0
                if (out / "status.json").exists() and "RANK" not in os.environ and node_rank == 0:
                    raise ConfigError(f"{out}: already holds a run (use --resume to continue it)")
                out.mkdir(parents=True, exist_ok=True)
                run_dir = out
            else:
                run_dir = runs.new_run_dir()
        if not quiet:
            click.echo(f"run folder: {printable(run_dir)}", err=True)
            click.echo(f"cpu: {policy.describe()}", err=True)
        from minigpt.training import distributed

        processes = given.get("processes") or cfg.processes
        if processes * nnodes > 1 and not distributed.launched_by_torchrun():
            launch = distributed.launcher_argv(processes, nnodes, node_rank, master_addr, master_port,
                                               rdzv_endpoint)
            code = _run_under_torchrun(launch, run_dir)
            if code != 0:
                raise click.exceptions.Exit(code)
            if node_rank > 0:
                click.echo(f"node {node_rank} done; the machine of node 0 holds the run folder")
                return
            status = json.loads((Path(run_dir) / "status.json").read_text(encoding="utf-8"))
        else:
            status = run_training(cfg, run_dir, resume=resume is not None, name=run_name, note=note,
                                  on_log=_progress_printer(cfg, quiet or not _is_main_rank()))
            if distributed.launched_by_torchrun():
                return  # the launcher reports the run once, for every rank
    except USER_ERRORS as e:
        raise _fail(_naming_the_flag(e)) from None
    except OSError as e:  # an unwritable run folder, a full disk
        raise _fail(e) from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted", err=True)
        sys.exit(130)
    if not quiet and sys.stderr.isatty():
        click.echo("", err=True)
    click.echo(f"{status['state']} at step {status['step']}: {status.get('n_params') or 0:,} parameters on "
               f"{status.get('device')}")
    click.echo(f"val loss {_loss(status['val_loss'])}  test loss {_loss(status['test_loss'])}")
    click.echo(f"checkpoint: {printable(Path(run_dir) / 'checkpoint')}")


def _is_main_rank() -> bool:
    return os.environ.get("RANK", "0") == "0"


def _run_under_torchrun(launch: list[str], run_dir: Path) -> int:
    """Start this same ``train`` command under torchrun and wait; signals reach every rank.

    The ranks get this command's own options (``--out`` fixed to the run folder, so they all
    write, or rank 0 writes, the same place); torchrun forwards SIGTERM/SIGINT to them, and each
    rank stops at the same step after rank 0 saves.
    """
    import signal
    import subprocess

    args = sys.argv[sys.argv.index("train") + 1:]
    # The ranks learn the world from torchrun's environment; torchrun's own parser would also take
    # (or choke on) these flags, so they stay with the launcher.
    for flag in ("--out", "--nproc", "--nnodes", "--node-rank", "--master-addr", "--master-port",
                 "--rdzv-endpoint"):
        while flag in args:
            i = args.index(flag)
            del args[i:i + 2]
    if "--resume" not in args:
        args += ["--out", str(run_dir)]
    cmd = [sys.executable, "-m", "torch.distributed.run", *launch, "-m", "minigpt.cli", "train", *args]
    child = subprocess.Popen(cmd)
    forward = lambda signum, _frame: child.send_signal(signum)  # noqa: E731
    previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        return child.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _loss(value) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) else "–"


# ---------------------------------------------------------------------------- sample / eval


def _load(checkpoint: str | None):
    """A checkpoint folder, a run folder or a run's name (its best checkpoint), or the default."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.runs.resolve import resolve_checkpoint

    return load_checkpoint(resolve_checkpoint(checkpoint))


def _dataset_for(ckpt, data: Path | None = None):
    """The dataset (and split) the checkpoint was trained on, or ``data`` with its vocabulary."""
    from minigpt import paths
    from minigpt.data import load_dataset

    tc = ckpt.train_config or {}
    if data is None:
        stored = tc.get("data")
        data = paths.default_dataset() if stored in (None, "embedded") else Path(stored)
    if tc.get("data_format") == "text":
        from minigpt.text_data import load_text_dataset

        return load_text_dataset(data, block_size=ckpt.model_config.block_size, vocab=ckpt.vocab)
    return load_dataset(data, seed=int(tc.get("split_seed", 42)), vocab=ckpt.vocab,
                        block_size=ckpt.model_config.block_size)


CHECKPOINT_HELP = "Checkpoint folder, run folder or run name (default: the shipped checkpoints/default)."


@main.command()
@click.option("--checkpoint", default=None, metavar="CHECKPOINT|RUN", help=CHECKPOINT_HELP)
@click.option("-n", "--num", "n", type=int, default=20, show_default=True, help="How many names.")
@click.option("--temperature", type=float, default=1.0, show_default=True)
@click.option("--top-k", type=int, default=None, help="Keep only the k most likely characters.")
@click.option("--top-p", type=float, default=None, help="Keep the smallest set with probability ≥ p.")
@click.option("--prefix", default="", help="Every name starts with these characters.")
@click.option("--max-len", type=int, default=None, help="Longest name in characters.")
@click.option("--seed", type=int, default=None, help="Same seed, same names.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sample(checkpoint, n, temperature, top_k, top_p, prefix, max_len, seed, as_json):
    """Generate names, each labelled train / val / test / new."""
    from minigpt.sampling import continue_text, generate, is_text_model

    try:
        ckpt = _load(checkpoint)
        if is_text_model(ckpt.train_config):  # a text model continues the prefix as a prompt
            outs = continue_text(ckpt.model, ckpt.vocab, prefix or "\n", max_len or 200, n=n,
                                 temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
            if as_json:
                click.echo(json.dumps([{"prompt": o.prompt, "text": o.text, "logprob": round(o.logprob, 4)}
                                       for o in outs], indent=2))
            else:
                click.echo("\n---\n".join(printable(o.prompt + o.text, keep="\n\t") for o in outs))
            return
        try:
            dataset = _dataset_for(ckpt)
        except DatasetError as e:
            dataset = None
            click.echo(f"note: no membership labels ({printable(e)})", err=True)
        if max_len is not None and max_len < 1:
            raise SamplingError(f"--max-len must be at least 1, got {max_len}")
        samples = generate(ckpt.model, ckpt.vocab, n, temperature=temperature, top_k=top_k, top_p=top_p,
                           prefix=prefix, max_len=max_len, seed=seed, dataset=dataset)
    except USER_ERRORS as e:
        raise _fail(e) from None
    if as_json:
        click.echo(json.dumps([{"name": s.text, "membership": s.membership if dataset else None,
                                "logprob": round(s.logprob, 4), "finished": s.finished} for s in samples],
                              indent=2))
        return
    for s in samples:
        label = s.membership if dataset is not None else ""
        click.echo(f"{printable(s.text):<18} {label}")


@main.command(name="eval")
@click.option("--checkpoint", default=None, metavar="CHECKPOINT|RUN", help=CHECKPOINT_HELP)
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="Evaluate on this file instead (split the same way; characters must be in the vocabulary).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def eval_cmd(checkpoint, data, as_json):
    """Loss (mean cross-entropy per character) on each split."""
    from minigpt.training.loop import evaluate

    try:
        ckpt = _load(checkpoint)
        dataset = _dataset_for(ckpt, data)
        losses = {name: evaluate(ckpt.model, dataset.split(name)) for name in ("train", "val", "test")}
    except USER_ERRORS as e:
        raise _fail(e) from None
    if as_json:
        click.echo(json.dumps({"checkpoint": str(ckpt.path), "data": dataset.source, **losses}, indent=2))
        return
    click.echo(f"checkpoint {printable(ckpt.path)}  data {printable(dataset.source)}")
    for name, loss in losses.items():
        click.echo(f"{name:<6} {loss:.4f}")


@main.command(name="runs")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs_cmd(as_json):
    """List training runs, newest first (a run with damaged files is listed as broken)."""
    from minigpt import paths
    from minigpt.runs import listing as runs

    found = runs.list_runs()
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in found], indent=2))
        return
    if not found:
        click.echo(f"no runs in {printable(paths.runs_dir())}")
        return
    click.echo(f"{'run':<20} {'status':<9} {'name':<22} {'step':>11} {'best val':>9}  reason / note")
    for r in found:
        total = f"/{r.total:g}s" if r.total_unit == "seconds" and r.total else (f"/{r.total}" if r.total else "")
        best = f"{r.best_val:.4f}" if r.best_val is not None else "-"
        why = r.reason if r.status in (RunState.FAILED, RunState.BROKEN, RunState.STOPPED) and r.reason else r.note
        click.echo(printable(f"{r.name:<20} {r.status:<9} {r.label or '-':<22} {str(r.step) + total:>11} "
                             f"{best:>9}  {why or ''}"))


@main.command()
@click.argument("run", required=False)
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Wait until the trainer has saved its checkpoint and exited.")
@click.option("--timeout", type=click.FloatRange(0, 3600), default=120.0, show_default=True,
              help="Longest wait, in seconds.")
def stop(run, wait, timeout):
    """Stop a training run cleanly (it finishes its step and saves): RUN (a folder or a run
    name), or the newest running one."""
    from minigpt.control import workers
    from minigpt.runs.resolve import is_running, resolve_run

    try:
        run_dir = resolve_run(run, pick=None if run else is_running, none_found="no running run")
        pid = workers.stop_run(run_dir)
    except USER_ERRORS as e:
        raise _fail(e) from None
    except workers.RunControlError as e:
        raise UserError(f"{run_dir.name}: {e}") from None
    click.echo(printable(f"stop requested: {run_dir.name} (pid {pid})"))
    if not wait:
        return
    view = workers.wait_until_stopped(run_dir, timeout)
    if view.status.active:
        raise UserError(f"{run_dir.name}: still running after {timeout:g} s (it stops after its current step)")
    click.echo(printable(f"{run_dir.name}: {view.status} at step {view.info.step}; resume it with "
                         f"`minigpt train --resume {run_dir.name}`" if view.status == RunState.STOPPED else
                         f"{run_dir.name}: {view.status}"))


@main.command()
@click.argument("run")
@click.argument("name", required=False)
@click.option("--note", default=None, help="A line about the run, shown in lists (\"\" clears it).")
def rename(run, name, note):
    """Give RUN (a folder or a run name) a new NAME, or a note: what lists show to tell runs apart."""
    from minigpt.runs.files import edit_status
    from minigpt.runs.resolve import resolve_run

    if name is None and note is None:
        raise UserError("give a new NAME, a --note, or both")
    try:
        status = edit_status(resolve_run(run), name=name, note=note)
    except USER_ERRORS as e:
        raise _fail(e) from None
    click.echo(printable(status.name + (f" · {status.note}" if status.note else "")))


# ---------------------------------------------------------------------------- sweep


@main.command()
@click.argument("target", required=False)
@click.option("--axis", "axes", multiple=True, metavar="OPTION=V1,V2",
              help="Sweep a training option over values (repeat for a grid), e.g. --axis d_model=32,64,128; "
                   "--axis compute=1e12,1e13 gives each size several compute budgets (the frontier).")
@click.option("--set", "sets", multiple=True, metavar="OPTION=VALUE",
              help="A training option every run shares, e.g. --set n_layers=2.")
@click.option("--steps", type=int, default=None, help="Budget: optimizer steps per run.")
@click.option("--time", "time_s", type=float, default=None, help="Budget: seconds per run.")
@click.option("--compute", type=float, default=None,
              help="Budget: FLOPs per run (≈ 6·params·tokens, so bigger models take fewer steps).")
@click.option("--data", type=click.Path(path_type=Path), default=None, help="Dataset (default: the embedded names).")
@click.option("--name", default=None, help="Experiment name (default: the preset's, or 'sweep').")
@click.option("--jobs", type=int, default=1, show_default=True, help="Runs side by side (each gets its share of cores).")
@click.option("--detach", is_flag=True, help="Start in the background and return at once.")
@click.option("--status", "show_status", is_flag=True, help="Table, plot and fit of TARGET (default: the newest).")
@click.option("--pause", "action", flag_value="pause", help="Stop TARGET's runs cleanly; --resume continues them.")
@click.option("--resume", "action", flag_value="resume", help="Continue TARGET's unfinished runs.")
@click.option("--stop", "action", flag_value="stop", help="End TARGET's sweep (its runs stop with a checkpoint).")
@click.option("--export", "export_format", type=click.Choice(["csv", "md", "txt", "json"]), default=None,
              help="Print TARGET's results as CSV, Markdown, the text chart or JSON.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="With --export: a file.")
@click.option("--list", "list_all", is_flag=True, help="Presets and experiments.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sweep(target, axes, sets, steps, time_s, compute, data, name, jobs, detach, show_status, action, export_format,
          out, list_all, as_json):
    """Run an experiment: a PRESET (model_size, dropout, positions, scaling_law, scaling_compute,
    learning_rate), a TOML grid file, or --axis options; or look at one (--status, --export) and
    steer it (--pause, --resume, --stop). Its runs are ordinary runs: `minigpt runs` lists them."""
    from minigpt.experiments import console

    try:
        if list_all:
            code = console.list_all()
        elif show_status:
            code = console.status(target, as_json)
        elif action is not None:
            code = console.steer(target, action, jobs)
        elif export_format is not None:
            code = console.export(target, export_format, out)
        else:
            budget = console.budget_from(steps, time_s, compute)
            spec = console.spec_from(target, axes, sets, budget, name)
            code = console.start(spec, str(data) if data is not None else None, jobs, detach, as_json)
    except USER_ERRORS as e:
        raise _fail(e) from None
    except OSError as e:
        raise _fail(e) from None
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
