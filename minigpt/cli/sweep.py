"""``minigpt sweep``: the experiments lab from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from minigpt.cli.support import _fail
from minigpt.errors import TutorError

# ---------------------------------------------------------------------------- sweep


@click.command()
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
    learning_rate, induction), a TOML grid file, or --axis options; or look at one (--status, --export) and
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
    except TutorError as e:
        raise _fail(e) from None
    except OSError as e:
        raise _fail(e) from None
    if code:
        sys.exit(code)


