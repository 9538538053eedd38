"""``minigpt train``: its flags generated from the option list, the progress line, and the
launcher that starts the same command under torchrun for data-parallel runs."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from minigpt.cli.support import _fail
from minigpt.cli.support import loss_text as _loss
from minigpt.errors import ConfigError, TutorError
from minigpt.runs.schema import RunState
from minigpt.text import printable
from minigpt.training.options import OPTIONS, OPTIONS_BY_NAME  # (no torch)

if TYPE_CHECKING:
    from minigpt.training.options import TrainConfig


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
        # The first record of a compiled run has no throughput (it was compiling): say so.
        tps = rec.get("tokens_per_s")
        speed = f"{tps / 1000:.1f}k tok/s" if tps is not None else f"compiled in {rec.get('compile_s', 0):.0f} s"
        line = f"[{bar}] {where} {loss} {val} {speed}"
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


def config_from_flags(config_file: Path | None, given: dict) -> TrainConfig:
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


@click.command()
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
@click.option("--rdzv-timeout", type=int, default=120, show_default=True,
              help="Seconds the nodes of a multi-node run wait for each other before giving up.")
@click.option("--name", "run_name", default=None,
              help="What the run is called in lists (default: its model and key settings, e.g. gpt d64 L4 lr5e-3).")
@click.option("--note", default=None, help="A line about the run, shown in lists.")
@click.option("--data-changed-ok", is_flag=True,
              help="With --resume: continue even though the data file changed since the run started.")
@click.option("--seeds", type=click.IntRange(1, 20), default=1,
              help="Train the same settings over this many seeds (--seed, --seed + 1, …), one run after another, "
                   "as a group the compare view draws as a band (default 1: one run).")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
@click.option("--nice", type=click.IntRange(0, 19), default=0,
              help="Lower this process's CPU priority (the app starts workers at 5 to stay responsive).")
# Alerts are the learner's, not the run's: none of these is written into the run folder (a shared
# folder must never run a command, and a copied config must not ring someone else's terminal).
@click.option("--notify/--no-notify", default=None,
              help="Ring the bell and show a desktop notification (OSC 9/777, through SSH and tmux) when the run "
                   "finishes, diverges or reaches --target-loss [default: the alerts.notify setting, on].")
@click.option("--on-event", "on_event", default=None, metavar="CMD",
              help="Run CMD on each alert (no shell), the event in its environment: MINIGPT_EVENT, MINIGPT_RUN, "
                   "MINIGPT_STEP, MINIGPT_VAL_LOSS, … [default: the alerts.on_event setting].")
@click.option("--target-loss", type=click.FloatRange(min=0, min_open=True), default=None, metavar="X",
              help="Alert once when the val loss reaches X or below (training goes on).")
def train(config_file, out, resume, nnodes, node_rank, master_addr, master_port, rdzv_endpoint, rdzv_timeout, run_name,
          note, data_changed_ok, seeds, quiet, nice, notify, on_event, target_loss, **given):
    """Train a model; writes metrics, status and the best checkpoint into a run folder."""
    import signal

    # A stop (SIGTERM: `minigpt stop`, the app) may come while torch loads and the data is read:
    # remember it, so the trainer stops cleanly after its first step instead of dying unsaved.
    stop_signals: list[int] = []
    from minigpt import alerts

    try:
        alerting = (alerts.stored_choices(notify, on_event), target_loss)
        if alerting[0].command is not None:
            alerts.command_argv(alerting[0].command)  # a command that cannot be read: said now, not at the end
    except TutorError as e:
        raise _fail(e) from None
    if threading.current_thread() is not threading.main_thread():
        return _train(config_file, out, resume, nnodes, node_rank, master_addr, master_port,
                      (rdzv_endpoint, rdzv_timeout), run_name, note, quiet, nice, stop_signals, given, data_changed_ok,
                      alerting=alerting)
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: stop_signals.append(signum))
    try:
        if seeds > 1:
            return _train_seeds(seeds, config_file, out, resume, nnodes, rdzv_timeout, run_name, note, quiet, nice, stop_signals,
                                given, alerting)
        return _train(config_file, out, resume, nnodes, node_rank, master_addr, master_port,
                      (rdzv_endpoint, rdzv_timeout), run_name, note, quiet, nice, stop_signals, given, data_changed_ok,
                      alerting=alerting)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _train_seeds(seeds: int, config_file, out, resume, nnodes, rdzv_timeout, run_name, note, quiet, nice,
                 stop_signals: list[int], given: dict, alerting: tuple | None = None):
    """One run per seed, one after another, in one group: ``OUT/seed-S`` each (or new run folders),
    named ``NAME seed S``. A failed run stops the group (the runs before it stay); a stop stops
    the run in progress cleanly, and no further seed starts."""
    from minigpt.runs import listing
    from minigpt.runs.schema import default_run_name

    if resume is not None or nnodes > 1 or (given.get("processes") or 1) > 1:
        raise _fail(ConfigError("--seeds trains new single-process runs: leave out --resume, --nnodes and "
                                "--processes"))
    try:
        cfg = config_from_flags(config_file, given)
    except TutorError as e:
        raise _fail(_naming_the_flag(e)) from None
    base = run_name or default_run_name(cfg.to_dict())
    first = cfg.seed
    group = None
    for i in range(seeds):
        seed = (first + i) % 2**32
        run_dir = out / f"seed-{seed}" if out is not None else listing.new_run_dir()
        group = group or f"{base} ×{seeds} ({run_dir.parent.name if out is not None else run_dir.name})"
        if not quiet:
            click.echo(f"seed {seed} ({i + 1} of {seeds}):", err=True)
        status = _train(config_file, run_dir, None, 1, 0, None, None, (None, rdzv_timeout), f"{base} seed {seed}", note, quiet,
                        nice if i == 0 else 0, stop_signals, {**given, "seed": seed}, group=group, alerting=alerting)
        if stop_signals or (status or {}).get("state") != "finished":
            click.echo(f"stopped after seed {seed}: {i + 1} of {seeds} runs in the group", err=True)
            break
    else:
        if alerting is not None:
            from minigpt import alerts

            _deliver(alerting[0], alerts.event("sweep_finished", run_dir.parent.name if out is not None else run_dir.name,
                                               f"seed group {group} finished: {seeds} runs"))
    click.echo(f"group: {printable(group)}")


def _train(config_file, out, resume, nnodes, node_rank, master_addr, master_port, rendezvous: tuple, run_name, note,
           quiet, nice, stop_signals: list[int], given: dict, data_changed_ok: bool = False,
           group: str | None = None, alerting: tuple | None = None):
    from minigpt.training import cpu_policy

    policy = cpu_policy.choose_at_start()  # sets OMP_WAIT_POLICY: before anything below imports torch
    if nice and hasattr(os, "nice"):
        os.nice(nice)  # an idle machine trains as fast; a busy one keeps the terminal snappy
    from minigpt.runs import listing
    from minigpt.runs.schema import check_name_and_note
    from minigpt.training import distributed
    from minigpt.training.loop import train as run_training

    rdzv_endpoint, rdzv_timeout = rendezvous
    try:
        check_name_and_note(run_name, note)  # the rule `rename` applies, before any data is read
        if not 1 <= rdzv_timeout <= distributed.MAX_RDZV_TIMEOUT_S:
            raise ConfigError(f"--rdzv-timeout must be from 1 to {distributed.MAX_RDZV_TIMEOUT_S} seconds, "
                              f"got {rdzv_timeout}")
        if nnodes > 1 or rdzv_endpoint is not None:  # checked before any data is read or folder made
            meeting = distributed.rendezvous_address(nnodes, node_rank, master_addr, master_port, rdzv_endpoint)
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
            cut_note = getattr(load_data_for(cfg), "cut_note", None)
            if cut_note:  # even with -q: the data is not what the file says
                click.echo(f"note: {printable(cut_note)}", err=True)
            if out is not None:
                # torchrun's ranks and the launchers of other nodes share the folder of node 0
                if (out / "status.json").exists() and "RANK" not in os.environ and node_rank == 0:
                    raise ConfigError(f"{out}: already holds a run (use --resume to continue it)")
                out.mkdir(parents=True, exist_ok=True)
                run_dir = out
            else:
                run_dir = listing.new_run_dir()
        if not quiet:
            click.echo(f"run folder: {printable(run_dir)}", err=True)
            click.echo(f"cpu: {policy.describe()}", err=True)
        processes = given.get("processes") or cfg.processes
        if processes * nnodes > 1 and not distributed.launched_by_torchrun():
            launch = distributed.launcher_argv(processes, nnodes, node_rank, master_addr, master_port,
                                               rdzv_endpoint, rdzv_timeout)
            if nnodes > 1:  # said before the wait: torchrun itself waits in silence
                others = "the other node" if nnodes == 2 else f"the other {nnodes - 1} nodes"
                ranks = "1" if nnodes == 2 else f"1 to {nnodes - 1}"
                click.echo(f"node {node_rank} of {nnodes}: waiting up to {rdzv_timeout} s for {others} to join at "
                           f"{printable(meeting)} (start the same command there with --node-rank {ranks}; --rdzv-timeout "
                           f"changes the wait)", err=True)
            from minigpt import alerts

            # node 0's launcher says the alerts, once, to the terminal it owns (the ranks stay quiet)
            followed = alerts.LaunchedRun(run_dir, alerting[1], lambda alert: _deliver(alerting[0], alert)) \
                if node_rank == 0 and alerting is not None else None
            try:
                code, held = _run_under_torchrun(launch, run_dir, hold_tracebacks=nnodes > 1,
                                                 ranks_alert=followed is None)
            finally:
                if followed is not None:
                    followed.ended()
            if code != 0 and nnodes > 1 and not (Path(run_dir) / "status.json").exists():
                raise ConfigError(f"the {nnodes} nodes did not all join at {meeting} within {rdzv_timeout} s "
                                  f"(or a node failed before training); nothing was trained")
            sys.stderr.buffer.write(held)  # a failure during training: its traceback, as it was
            if code != 0:
                raise click.exceptions.Exit(code)
            if node_rank > 0:
                click.echo(f"node {node_rank} done; the machine of node 0 holds the run folder")
                return
            from minigpt.runs.schema import read_json_file  # (guarded: never waits on a pipe)

            status = read_json_file(Path(run_dir) / "status.json", "status.json")
        else:
            on_log = _progress_printer(cfg, quiet or not _is_main_rank())
            watcher = None
            from minigpt import alerts

            if alerting is not None and _is_main_rank() and not os.environ.get(alerts.LAUNCHER_ALERTS_ENV):
                from minigpt.training.diagnosis import divergence

                watcher = alerts.ForegroundRun(run_dir, alerting[1], lambda alert: _deliver(alerting[0], alert),
                                               diverging=divergence)
            try:
                status = run_training(cfg, run_dir, resume=resume is not None, name=run_name, note=note,
                                      on_log=watcher.wrap(on_log) if watcher else on_log,
                                      stop_signals=stop_signals, data_changed_ok=data_changed_ok, group=group)
            finally:
                if watcher is not None:
                    watcher.ended()
            if distributed.launched_by_torchrun():
                # The launcher reports the run once, for every rank; the group is gone (loop.train
                # left it), so the rank ends here, skipping interpreter teardown (exit_rank).
                distributed.exit_rank(0)
    except TutorError as e:
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
    return status


def _deliver(choices, alert) -> None:
    """Write the alert to this terminal (stderr, when it is one) and start the learner's command."""
    from minigpt import alerts

    problem = alerts.deliver(alert, alerts.unwatched(choices), alerts.terminal_of(sys.stderr))
    if problem:
        click.echo(f"\nnote: {printable(problem)}", err=True)


def _is_main_rank() -> bool:
    return os.environ.get("RANK", "0") == "0"


def _run_under_torchrun(launch: list[str], run_dir: Path, hold_tracebacks: bool = False,
                        ranks_alert: bool = True) -> tuple[int, bytes]:
    """Start this same ``train`` command under torchrun and wait; signals reach every rank.

    The ranks get this command's own options (``--out`` fixed to the run folder, so they all
    write, or rank 0 writes, the same place); torchrun forwards SIGTERM/SIGINT to them, and each
    rank stops at the same step after rank 0 saves. With ``hold_tracebacks`` (a multi-node run)
    its error output is relayed up to a traceback, which is held back and returned: a rendezvous
    that times out is then said in one line instead of torchrun's pages. Unless ``ranks_alert``,
    the ranks leave the alerts to this launcher.
    """
    import signal

    from minigpt import spawn

    args = sys.argv[sys.argv.index("train") + 1:]
    # The ranks learn the world from torchrun's environment; torchrun's own parser would also take
    # (or choke on) these flags, so they stay with the launcher.
    for flag in ("--out", "--nproc", "--nnodes", "--node-rank", "--master-addr", "--master-port",
                 "--rdzv-endpoint", "--rdzv-timeout"):
        while flag in args:
            i = args.index(flag)
            del args[i:i + 2]
    if "--resume" not in args:
        args += ["--out", str(run_dir)]
    cmd = [sys.executable, "-m", "torch.distributed.run", *launch, "-m", "minigpt.cli", "train", *args]
    from minigpt.alerts import LAUNCHER_ALERTS_ENV

    env = None if ranks_alert else {**os.environ, LAUNCHER_ALERTS_ENV: "1"}
    child = spawn.popen(cmd, new_session=False, stdin=None, env=env,  # same terminal: Ctrl+C reaches the ranks
                        stderr=spawn.PIPE if hold_tracebacks else None)
    forward = lambda signum, _frame: child.send_signal(signum)  # noqa: E731
    previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
    held = b""
    try:
        while child.stderr is not None and (chunk := os.read(child.stderr.fileno(), 65536)):
            if held:
                held, chunk = held + chunk, b""
            elif (cut := chunk.find(b"Traceback (most recent call last)")) >= 0:
                held, chunk = chunk[cut:], chunk[:cut]
            sys.stderr.buffer.write(chunk)
            sys.stderr.flush()
        return child.wait(), held
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)




