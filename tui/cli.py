"""The ``minigpt`` console command: the tutor app, plus every headless command of ``minigpt.cli``.

The library's click group knows nothing of the app (``minigpt`` never imports ``tui``); this
group adds what needs the app: opening it (no command) and ``watch``.
"""

from __future__ import annotations

from pathlib import Path

import click

from minigpt import cli as headless
from minigpt.cli import UserError
from tui.serve import serve


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@headless.data_dir_option
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None) -> None:
    """minigpt-tutor: learn Transformers and GPT by building and training a tiny one.

    Without a command, opens the tutor app.
    """
    headless.apply_data_dir(data_dir)
    if ctx.invoked_subcommand is None:
        from tui.app import run_app

        run_app()


for _name, _command in headless.main.commands.items():
    main.add_command(_command, _name)
main.add_command(serve)


@main.command()
@click.argument("run", required=False, type=click.Path(path_type=Path))
def watch(run):
    """Open the app on a training run's live panel: RUN (a folder or a run name), or the latest.

    An experiment (its folder or name) opens on its results instead, as does the latest run when
    it belongs to an experiment (`minigpt sweep`)."""
    from minigpt import paths
    from minigpt.runs import listing as runs

    if run is None:
        latest = runs.latest_run()
        if latest is None:
            raise UserError(f"no runs in {paths.runs_dir()}: start one with `minigpt train`")
        run = latest.path
        if (run.parent / runs.EXPERIMENT_FILE).is_file():
            run = run.parent
    elif not run.exists() and (paths.runs_dir() / run).exists():
        run = paths.runs_dir() / run  # a bare run name, as `minigpt runs` lists it
    elif not run.exists():  # the name of a run inside an experiment
        run = next((r.path for r in runs.list_runs() if r.name == str(run)), run)
    if (run / runs.EXPERIMENT_FILE).is_file():
        from tui.app import run_app

        run_app(initial=f"experiment:{run.resolve()}")
        return
    if not ((run / "status.json").exists() or (run / "config.json").exists()):
        raise UserError(f"{run}: not a run folder (no status.json or config.json)")
    from tui.app import run_app

    run_app(initial=f"run:{run.resolve()}")


if __name__ == "__main__":
    main()
