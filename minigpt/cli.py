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



import click  # noqa: E402

from minigpt.errors import CheckpointError, ConfigError, DatasetError, SamplingError  # noqa: E402

USER_ERRORS = (ConfigError, DatasetError, CheckpointError, SamplingError)


class UserError(click.ClickException):
    exit_code = 2


def _fail(e: Exception) -> UserError:
    return UserError(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)


def apply_data_dir(data_dir: Path | None) -> None:
    """Point the per-user folders (progress, settings, runs) at ``data_dir`` for this process."""
    if data_dir is not None:
        os.environ["MINIGPT_DATA_DIR"] = str(data_dir.expanduser().resolve())


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


# Options of `train` that map one to one onto TrainConfig fields.
TRAIN_OPTIONS = ("model", "d_model", "n_heads", "n_layers", "block_size", "dropout", "pos_encoding",
                 "tie_weights", "batch_size", "lr", "min_lr_ratio", "ema", "pack", "warmup", "eval_interval", "device",
                 "seed", "data_format", "processes", "compile")


@main.command()
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="UTF-8 text file, one item per line (default: the embedded names).")
@click.option("--model", type=click.Choice(["gpt", "mlp", "bigram"]), default=None, help="Model kind (default gpt).")
@click.option("--d-model", type=int, default=None, help="MiniGPT width (default 64).")
@click.option("--n-heads", type=int, default=None, help="Attention heads (default 4).")
@click.option("--n-layers", type=int, default=None, help="Transformer blocks (default 4).")
@click.option("--block-size", type=int, default=None, help="Longest sequence (default: longest item + 1).")
@click.option("--dropout", type=float, default=None, help="Dropout (default 0 for short runs, 0.1 for long).")
@click.option("--pos", "pos_encoding", type=click.Choice(["learned", "sinusoidal", "rope"]), default=None,
              help="Positional encoding (default learned).")
@click.option("--tie/--no-tie", "tie_weights", default=None, help="Share the token embedding with the output head.")
@click.option("--steps", type=int, default=None, help="Budget in optimizer steps (default 3000).")
@click.option("--time", "time_s", type=float, default=None, help="Budget in seconds (instead of --steps).")
@click.option("--batch-size", type=int, default=None, help="Names per step (default 128).")
@click.option("--lr", type=float, default=None, help="Peak learning rate (default 5e-3).")
@click.option("--min-lr-ratio", type=float, default=None,
              help="Where the cosine decay ends, as a fraction of the peak (default 0.1).")
@click.option("--ema", type=float, default=None,
              help="Decay of the weight average that is evaluated and kept (default 0.999; 0 turns it off).")
@click.option("--pack/--no-pack", default=None,
              help="MiniGPT: pack several names to a row, kept apart by a mask (default on; same loss, faster).")
@click.option("--warmup", type=float, default=None, help="Warmup: fraction of the budget (<1) or steps (default 0.02).")
@click.option("--eval-interval", type=int, default=None, help="Steps between val evaluations (default 250).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda", "mps"]), default=None, help="Default auto.")
@click.option("--seed", type=int, default=None, help="Random seed (default 1337).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Run folder (default: a new timestamped folder under the runs folder).")
@click.option("--resume", is_flag=False, flag_value="", default=None, metavar="[RUN_DIR]",
              help="Continue a stopped run: the given folder, --out, or the latest run.")
@click.option("--format", "data_format", type=click.Choice(["lines", "text"]), default=None,
              help="lines: one item per line (default); text: one long text, trained on windows of it.")
@click.option("--compile/--no-compile", "compile", default=None,
              help="torch.compile the model (its warm-up is left out of tokens/s).")
@click.option("--nproc", "processes", type=click.IntRange(1, 64), default=None,
              help="Data-parallel processes on this machine (torchrun + DDP; default 1).")
@click.option("--nnodes", type=click.IntRange(1, 1024), default=1, help="Machines in a multi-node run (default 1).")
@click.option("--node-rank", type=click.IntRange(0, 1023), default=0, help="This machine's rank (multi-node).")
@click.option("--master-addr", default=None, help="Address of the node-rank-0 machine (multi-node).")
@click.option("--master-port", type=click.IntRange(1, 65535), default=None, help="Its port (multi-node).")
@click.option("--rdzv-endpoint", default=None, help="HOST:PORT of a c10d rendezvous, instead of the master.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
@click.option("--nice", type=click.IntRange(0, 19), default=0,
              help="Lower this process's CPU priority (the app starts workers at 5 to stay responsive).")
def train(data, model, d_model, n_heads, n_layers, block_size, dropout, pos_encoding, tie_weights, steps, time_s,
          batch_size, lr, min_lr_ratio, ema, pack, warmup, eval_interval, device, seed, out, resume,
          data_format, compile, processes, nnodes, node_rank, master_addr, master_port, rdzv_endpoint,
          quiet, nice):
    """Train a model; writes metrics, status and the best checkpoint into a run folder."""
    from minigpt.training import cpu_policy

    policy = cpu_policy.choose_at_start()  # sets OMP_WAIT_POLICY: before anything below imports torch
    if nice and hasattr(os, "nice"):
        os.nice(nice)  # an idle machine trains as fast; a busy one keeps the terminal snappy
    from minigpt.runs import listing as runs
    from minigpt.training.options import TrainConfig
    from minigpt.training.loop import train as run_training

    try:
        if resume is not None:
            if resume:
                run_dir = Path(resume)
            elif out is not None:
                run_dir = out
            else:
                latest = runs.latest_run()
                if latest is None:
                    raise ConfigError("no run to resume")
                run_dir = latest.path
            if not (run_dir / "config.json").exists():
                raise ConfigError(f"{run_dir}: not a run folder (no config.json)")
            from minigpt.training.options import load_run_config
            cfg = load_run_config(run_dir)
        else:
            # Every option left unset keeps TrainConfig's default; the budget is handled below.
            values = {name: value for name, value in click.get_current_context().params.items()
                      if name in TRAIN_OPTIONS}
            values["data"] = str(data) if data is not None else None
            values = {k: v for k, v in values.items() if v is not None}
            if "LOCAL_WORLD_SIZE" in os.environ:  # a rank under torchrun: processes of this machine
                values["processes"] = int(os.environ["LOCAL_WORLD_SIZE"])
            if steps is not None and time_s is not None:
                raise ConfigError("give either --steps or --time, not both")
            if time_s is not None:
                values.update(time_s=time_s, steps=None)
            elif steps is not None:
                values["steps"] = steps
            cfg = TrainConfig(**values)
            # Read the data now so a bad file fails before a run folder is created.
            from minigpt.training.options import load_data_for
            load_data_for(cfg)
            if out is not None:
                # torchrun's ranks and the launchers of other nodes share the folder of node 0
                if (out / "status.json").exists() and "RANK" not in os.environ and node_rank == 0:
                    raise ConfigError(f"{out}: already holds a run (use --resume to continue it)")
                out.mkdir(parents=True, exist_ok=True)
                run_dir = out
            else:
                run_dir = runs.new_run_dir()
        if not quiet:
            click.echo(f"run folder: {run_dir}", err=True)
            click.echo(f"cpu: {policy.describe()}", err=True)
        from minigpt.training import distributed

        world_size = (processes or cfg.processes) * nnodes
        if world_size > 1 and not distributed.launched_by_torchrun():
            launch = distributed.launcher_argv(processes or cfg.processes, nnodes, node_rank, master_addr,
                                               master_port, rdzv_endpoint)
            code = _run_under_torchrun(launch, run_dir)
            if code != 0:
                raise click.exceptions.Exit(code)
            if node_rank > 0:
                click.echo(f"node {node_rank} done; the machine of node 0 holds the run folder")
                return
            status = json.loads((Path(run_dir) / "status.json").read_text(encoding="utf-8"))
        else:
            status = run_training(cfg, run_dir, resume=resume is not None,
                                  on_log=_progress_printer(cfg, quiet or not _is_main_rank()))
            if distributed.launched_by_torchrun():
                return  # the launcher reports the run once, for every rank
    except USER_ERRORS as e:
        raise _fail(e) from None
    except OSError as e:  # an unwritable run folder, a full disk
        raise _fail(e) from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted", err=True)
        sys.exit(130)
    if not quiet and sys.stderr.isatty():
        click.echo("", err=True)
    click.echo(f"{status['state']} at step {status['step']}: {status.get('n_params') or 0:,} parameters on "
               f"{status.get('device')}")
    click.echo(f"val loss {status['val_loss']:.4f}  test loss {status['test_loss']:.4f}")
    click.echo(f"checkpoint: {Path(run_dir) / 'checkpoint'}")


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


# ---------------------------------------------------------------------------- sample / eval


def printable(text: str) -> str:
    """Text from a model, with control characters other than newline and tab made visible."""
    return "".join(c if c in "\n\t" or c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _load(checkpoint: Path | None):
    from minigpt import paths
    from minigpt.checkpoint import load_checkpoint

    if checkpoint is None:
        checkpoint = paths.default_checkpoint()
    elif (checkpoint / "checkpoint" / "config.json").exists():
        checkpoint = checkpoint / "checkpoint"  # a run folder: its best checkpoint
    return load_checkpoint(checkpoint)


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


@main.command()
@click.option("--checkpoint", type=click.Path(path_type=Path), default=None,
              help="Checkpoint folder (default: the shipped checkpoints/default).")
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
                click.echo("\n---\n".join(printable(o.prompt + o.text) for o in outs))
            return
        try:
            dataset = _dataset_for(ckpt)
        except DatasetError as e:
            dataset = None
            click.echo(f"note: no membership labels ({e})", err=True)
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
        click.echo(f"{s.text:<18} {label}")


@main.command(name="eval")
@click.option("--checkpoint", type=click.Path(path_type=Path), default=None,
              help="Checkpoint folder (default: the shipped checkpoints/default).")
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
    click.echo(f"checkpoint {ckpt.path}  data {dataset.source}")
    for name, loss in losses.items():
        click.echo(f"{name:<6} {loss:.4f}")


@main.command(name="runs")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs_cmd(as_json):
    """List training runs, newest first."""
    from minigpt import paths
    from minigpt.runs import listing as runs

    found = runs.list_runs()
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in found], indent=2))
        return
    if not found:
        click.echo(f"no runs in {paths.runs_dir()}")
        return
    click.echo(f"{'run':<24} {'status':<9} {'model':<6} {'step':>11} {'best val':>9}  note")
    for r in found:
        total = f"/{r.total:g}s" if r.total_unit == "seconds" and r.total else (f"/{r.total}" if r.total else "")
        best = f"{r.best_val:.4f}" if r.best_val is not None else "-"
        click.echo(f"{r.name:<24} {r.status:<9} {r.model or '-':<6} {str(r.step) + total:>11} {best:>9}  "
                   f"{r.reason or ''}")


if __name__ == "__main__":
    main()
