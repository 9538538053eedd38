"""The ``minigpt`` console command: the tutor app, plus every headless command of ``minigpt.cli``.

The library's click group knows nothing of the app (``minigpt`` never imports ``tui``); this
group adds what needs the app: opening it (no command) and ``watch``.
"""

from __future__ import annotations

from pathlib import Path

import click

from minigpt.cli import settings as headless_settings
from minigpt.cli.support import UserError, apply_data_dir, data_dir_option, tell_study_notes_on_close
from tui.browser.serve import serve


class _TutorGroup(click.Group):
    """The headless commands join this group when one is asked for (or listed): opening the app,
    the common case, imports none of them (~0.1 s of its first frame)."""

    @staticmethod
    def _headless() -> click.Group:
        from minigpt import cli

        return cli.main

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._headless().commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self._headless().commands.get(cmd_name)


@click.group(cls=_TutorGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@data_dir_option
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None) -> None:
    """minigpt-tutor: learn Transformers and GPT by building and training a tiny one.

    Without a command, opens the tutor app.
    """
    apply_data_dir(data_dir)
    ctx.meta[headless_settings.CHECKS_KEY] = {"keys.": _check_keys}  # `settings set keys.<id>` checks here
    if ctx.invoked_subcommand is not None:  # (the app shows these notes itself)
        tell_study_notes_on_close(ctx)
    if ctx.invoked_subcommand is None:
        from tui.launch import run_app

        run_app()


main.add_command(serve)


def _check_keys(store, binding_id: str, text: str) -> str:
    """``settings set keys.<id>``: the id must be a binding of the app, the keys ones Textual
    names, and none may clash with another action where both work (one ``Error:`` line if not)."""
    from minigpt import settings
    from tui import keymap
    from tui.app import TutorApp

    stored, _unreadable = settings.members(store, settings.KEYS)
    stored.pop(binding_id, None)
    return keymap.check_keys(stored, binding_id, text, TutorApp)


@main.command()
def keys():
    """Every key of the app by its binding id, with yours where the settings remap it.

    Remap one with `minigpt settings set keys.<id> KEYS` (KEYS as Textual names them: ctrl+j,
    f5, question_mark; several separated by commas); `minigpt settings clear keys.<id>` undoes it."""
    from minigpt import paths, settings
    from minigpt.store import Store
    from tui import keymap
    from tui.app import TutorApp

    store = Store(paths.database_path())
    try:
        stored, _unreadable = settings.members(store, settings.KEYS)
    finally:
        store.close()
    for binding_id, binding in sorted(keymap.catalogue(TutorApp).items()):
        mine = stored.get(binding_id)
        keys_text = f"{mine}  (default {binding.key})" if mine else binding.key
        click.echo(f"{binding_id:<34} {keys_text:<24} {binding.description or binding.action}")


@main.command()
@click.argument("run", required=False)
def watch(run):
    """Open the app on a training run's live panel: RUN (a folder or a run name), or the latest.

    An experiment (its folder or name) opens on its results instead, as does the latest run when
    it belongs to an experiment (`minigpt sweep`)."""
    from minigpt import paths
    from minigpt.errors import RunError
    from minigpt.runs import listing
    from minigpt.runs.resolve import resolve_run

    if run:
        folder = Path(run).expanduser()
        experiment = folder if folder.is_dir() else paths.runs_dir() / run
        if "/" not in run or folder.is_dir():
            if (experiment / listing.EXPERIMENT_FILE).is_file():
                from tui.launch import run_app

                run_app(initial=f"experiment:{experiment.resolve()}")
                return
    try:
        run_dir = resolve_run(run)
    except RunError as e:
        hint = "" if run else ": start one with `minigpt train`"
        raise UserError(f"{e}{hint}") from None
    if not run and (run_dir.parent / listing.EXPERIMENT_FILE).is_file():
        from tui.launch import run_app

        run_app(initial=f"experiment:{run_dir.parent.resolve()}")
        return
    from tui.launch import run_app

    run_app(initial=f"run:{run_dir.resolve()}")


if __name__ == "__main__":
    main()
