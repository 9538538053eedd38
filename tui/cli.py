"""The ``minigpt`` console command: the tutor app, plus every headless command of ``minigpt.cli``.

The library's click group knows nothing of the app (``minigpt`` never imports ``tui``); this
group adds what needs the app: opening it (no command) and ``watch``.
"""

from __future__ import annotations

from pathlib import Path

import click

from minigpt import cli as headless
from minigpt.cli.support import UserError, apply_data_dir, data_dir_option, tell_study_notes_on_close
from tui.serve import serve


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@data_dir_option
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None) -> None:
    """minigpt-tutor: learn Transformers and GPT by building and training a tiny one.

    Without a command, opens the tutor app.
    """
    apply_data_dir(data_dir)
    if ctx.invoked_subcommand is not None:  # (the app shows these notes itself)
        tell_study_notes_on_close(ctx)
    if ctx.invoked_subcommand is None:
        from tui.app import run_app

        run_app()


for _name, _command in headless.main.commands.items():
    main.add_command(_command, _name)
main.add_command(serve)


@main.command()
@click.argument("run", required=False)
def watch(run):
    """Open the app on a training run's live panel: RUN (a folder or a run name), or the latest.

    An experiment (its folder or name) opens on its results instead, as does the latest run when
    it belongs to an experiment (`minigpt sweep`)."""
    from minigpt import paths
    from minigpt.errors import RunError
    from minigpt.runs import listing as runs
    from minigpt.runs.resolve import resolve_run

    if run:
        folder = Path(run).expanduser()
        experiment = folder if folder.is_dir() else paths.runs_dir() / run
        if "/" not in run or folder.is_dir():
            if (experiment / runs.EXPERIMENT_FILE).is_file():
                from tui.app import run_app

                run_app(initial=f"experiment:{experiment.resolve()}")
                return
    try:
        run_dir = resolve_run(run)
    except RunError as e:
        hint = "" if run else ": start one with `minigpt train`"
        raise UserError(f"{e}{hint}") from None
    if not run and (run_dir.parent / runs.EXPERIMENT_FILE).is_file():
        from tui.app import run_app

        run_app(initial=f"experiment:{run_dir.parent.resolve()}")
        return
    from tui.app import run_app

    run_app(initial=f"run:{run_dir.resolve()}")


if __name__ == "__main__":
    main()
