"""``minigpt doctor``: one line per check of the learner's setup (``minigpt.doctor`` does the
checking), or the same as JSON; exit status 1 when a check failed."""

from __future__ import annotations

import json

import click


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(as_json: bool) -> None:
    """Check this setup: torch and its device, threads, memory, disk, the terminal, tmux, extras
    and the shipped checkpoints; each problem comes with its fix."""
    from minigpt import doctor as checks

    found = checks.run_checks(checks.gather())
    if as_json:
        click.echo(json.dumps(checks.report(found), indent=2))
    else:
        for check in found:
            click.echo(check.line())
    if not checks.report(found)["ok"]:
        raise SystemExit(1)
