"""The ``minigpt`` command: the tutor app by default, plus headless train / sample / eval / runs.

Every mistake a user can make (a bad dataset, an impossible hyperparameter, a damaged
checkpoint, a prefix the model cannot spell) ends with one line ``Error: …`` and exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from minigpt.cli.cards import cards
from minigpt.cli.doctor import doctor
from minigpt.cli.explain import explain
from minigpt.cli.fsrs_fit import fsrs
from minigpt.cli.kata import kata
from minigpt.cli.lab import lab
from minigpt.cli.plan import plan
from minigpt.cli.pretrained import hf
from minigpt.cli.progress import progress
from minigpt.cli.settings import settings
from minigpt.cli.support import UserError, _fail, apply_data_dir, data_dir_option, tell_study_notes_on_close
from minigpt.cli.sweep import sweep
from minigpt.cli.train import train
from minigpt.errors import DatasetError, SamplingError, TutorError
from minigpt.runs.schema import RunState
from minigpt.text import printable


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@data_dir_option
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None) -> None:
    """minigpt: train, sample and evaluate the tutor's models without the app."""
    apply_data_dir(data_dir)
    tell_study_notes_on_close(ctx)


main.add_command(train)
main.add_command(sweep)
main.add_command(cards)
main.add_command(kata)
main.add_command(plan)
main.add_command(fsrs)
main.add_command(progress)
main.add_command(lab)
main.add_command(doctor)
main.add_command(settings)
main.add_command(explain)
main.add_command(hf)


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
    if tc.get("data_format") == "repeats":
        from minigpt.repeat_data import load_repeat_dataset

        return load_repeat_dataset(block_size=ckpt.model_config.block_size, seed=int(tc.get("split_seed", 42)),
                                   vocab=ckpt.vocab)
    if tc.get("data_format") == "text":
        from minigpt.text_data import load_text_dataset

        return load_text_dataset(data, block_size=ckpt.model_config.block_size, vocab=ckpt.vocab)
    return load_dataset(data, seed=int(tc.get("split_seed", 42)), vocab=ckpt.vocab,
                        block_size=ckpt.model_config.block_size)


CHECKPOINT_HELP = "Checkpoint folder, run folder or run name (default: the shipped checkpoints/default)."


@main.command()
@click.option("--checkpoint", default=None, metavar="CHECKPOINT|RUN", help=CHECKPOINT_HELP)
@click.option("-n", "--num", "n", type=int, default=None,
              help="How many names (default 20), or continuations of a text (default 1).")
@click.option("--temperature", type=float, default=1.0, show_default=True)
@click.option("--top-k", type=int, default=None, help="Keep only the k most likely characters.")
@click.option("--top-p", type=float, default=None, help="Keep the smallest set with probability ≥ p.")
@click.option("--prefix", default="", help="Every name starts with these characters.")
@click.option("--max-len", type=int, default=None,
              help="Longest name in characters; a text model's continuation in characters, GPT-2's in tokens.")
@click.option("--seed", type=int, default=None, help="Same seed, same names.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sample(checkpoint, n, temperature, top_k, top_p, prefix, max_len, seed, as_json):
    """Generate names, each labelled train / val / test / new; or continue --prefix (a text model,
    or a GPT-2-family folder in the Hugging Face layout)."""
    from minigpt.cli.pretrained import pretrained_folder, sample_pretrained
    from minigpt.sampling import continue_text, generate, is_text_model

    try:
        pretrained = pretrained_folder(checkpoint)
        if pretrained is not None:
            sample_pretrained(pretrained, n=n, prefix=prefix, max_len=max_len, temperature=temperature, top_k=top_k,
                              top_p=top_p, seed=seed, as_json=as_json)
            return
        n = 20 if n is None else n
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
    except TutorError as e:
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
@click.option("--text", "text_file", type=click.Path(path_type=Path), default=None,
              help="Instead: the mean next-token loss over this text file's tokens (any model, GPT-2 folders too).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def eval_cmd(checkpoint, data, text_file, as_json):
    """Loss (mean cross-entropy per character) on each split, or per token over --text."""
    from minigpt.cli.pretrained import eval_text, pretrained_folder
    from minigpt.training.schedule import evaluate

    try:
        if text_file is not None and data is not None:
            raise UserError("give --data or --text, not both")
        pretrained = pretrained_folder(checkpoint)
        if pretrained is not None or text_file is not None:
            if text_file is None:
                raise UserError("a GPT-2-family folder is evaluated on a text: give --text FILE")
            model = pretrained or _load(checkpoint)
            eval_text(model.model, model.tokenizer if pretrained else model.vocab, model.path, text_file, as_json)
            return
        ckpt = _load(checkpoint)
        dataset = _dataset_for(ckpt, data)
        losses = {name: evaluate(ckpt.model, dataset.split(name)) for name in ("train", "val", "test")}
    except TutorError as e:
        raise _fail(e) from None
    if as_json:
        click.echo(json.dumps({"checkpoint": str(ckpt.path), "data": dataset.source, **losses}, indent=2))
        return
    click.echo(f"checkpoint {printable(ckpt.path)}  data {printable(dataset.source)}")
    for name, loss in losses.items():
        click.echo(f"{name:<6} {loss:.4f}")


@main.command(name="runs")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--groups", "by_group", is_flag=True,
              help="Seed groups instead: final val and test loss as mean ± standard error and N, and the first "
                   "two groups compared, with the seeds needed to detect their difference.")
def runs_cmd(as_json, by_group):
    """List training runs, newest first (a run with damaged files is listed as broken)."""
    from minigpt import paths
    from minigpt.runs import listing

    found = listing.list_runs()
    if by_group:
        _print_groups(found, as_json)
        return
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
        if r.world_size > 1:
            why = f"{r.world_size} processes" + (f"; {why}" if why else "")
        click.echo(printable(f"{r.name:<20} {r.status:<9} {r.label or '-':<22} {str(r.step) + total:>11} "
                             f"{best:>9}  {why or ''}"))


def _print_groups(found, as_json: bool) -> None:
    from minigpt.experiments import groups

    found_groups = groups.find_groups(found)
    rows = [(g, groups.finals(g)) for g in found_groups]
    comparison = None
    if len(found_groups) >= 2:
        a, b = found_groups[:2]
        comparison = groups.compare(a, b, groups.group_band(a), groups.group_band(b))
    if as_json:
        def summary(s):
            return None if s is None else {"mean": s.mean, "stderr": s.stderr, "n": s.n}
        click.echo(json.dumps({
            "groups": [{"name": g.name, "runs": [r.name for r in g.runs], "seeds": g.seeds,
                        "time_budget": groups.is_time_group(g), "final_val": summary(f.val),
                        "final_test": summary(f.test)} for g, f in rows],
            "comparison": None if comparison is None else {
                "first": found_groups[0].name, "second": found_groups[1].name, "test": comparison.result.test,
                "difference": comparison.result.difference, "stderr": comparison.result.stderr,
                "p": comparison.result.p, "at": comparison.step, "axis": comparison.axis,
                "seeds_needed": comparison.seeds_needed}}, indent=2))
        return
    if not rows:
        click.echo("no seed groups: minigpt train --seeds 3 trains one")
        return
    for g, f in rows:
        budget = " (time budget)" if groups.is_time_group(g) else ""
        click.echo(printable(f"{g.name}{budget}: {len(g.runs)} runs · {f.describe()}"))
    if comparison is not None:
        click.echo(printable(groups.describe(comparison, "1st", "2nd")))
    elif len(rows) >= 2:
        click.echo("the first two groups need two runs each at a shared evaluation to be compared")


@main.command()
@click.argument("run", required=False)
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Wait until the trainer has saved its checkpoint and exited.")
@click.option("--timeout", type=click.FloatRange(0, 3600), default=120.0, show_default=True,
              help="Longest wait, in seconds.")
def stop(run, wait, timeout):
    """Stop a training run cleanly (it finishes its step and saves): RUN (a folder or a run
    name), or the newest running one."""
    from minigpt.control import run_processes
    from minigpt.runs.resolve import is_running, resolve_run

    try:
        run_dir = resolve_run(run, pick=None if run else is_running, none_found="no running run")
        pid = run_processes.stop_run(run_dir)
    except TutorError as e:
        raise _fail(e) from None
    except run_processes.RunControlError as e:
        raise UserError(f"{run_dir.name}: {e}") from None
    click.echo(printable(f"stop requested: {run_dir.name} (pid {pid})"))
    if not wait:
        return
    view = run_processes.wait_until_stopped(run_dir, timeout)
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
    except TutorError as e:
        raise _fail(e) from None
    click.echo(printable(status.name + (f" · {status.note}" if status.note else "")))



@main.command()
@click.argument("run", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the symptoms as JSON.")
def diagnose(run, as_json):
    """What RUN's numbers say is wrong (RUN: a folder or a run name; default: the newest run): one
    line per symptom with its evidence and the lesson that explains it, or "no symptom found"."""
    from minigpt.runs.resolve import resolve_run
    from minigpt.training.diagnosis import diagnose as diagnose_run

    try:
        run_dir = resolve_run(run)
        symptoms = diagnose_run(run_dir)
    except TutorError as e:
        raise _fail(e) from None
    if as_json:
        click.echo(json.dumps({"run": run_dir.name, "symptoms": [s.to_dict() for s in symptoms]}, indent=2))
        return
    for symptom in symptoms:
        click.echo(printable(symptom.line()))
    if not symptoms:
        click.echo(printable(f"{run_dir.name}: no symptom found"))
