"""``minigpt fsrs``: the FSRS parameters in use, and ``fsrs fit`` to fit them to the learner's own
review log (the ``optimizer`` extra; torch is imported only by the fit itself)."""

from __future__ import annotations

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError


@click.group("fsrs")
def fsrs() -> None:
    """FSRS, the scheduler of the flashcards: its parameters, fitted to your reviews."""


@fsrs.command("status")
def status() -> None:
    """Which parameters the scheduler uses, or how many more reviews a fit needs."""
    from minigpt import paths
    from minigpt.store import Store
    from minigpt.study import fsrs_fit

    try:
        store = Store(paths.database_path())
        try:
            click.echo(fsrs_fit.status_line(store))
        finally:
            store.close()
    except TutorError as e:
        raise _fail(e) from e


@fsrs.command("fit")
def fit() -> None:
    """Fit the parameters to your review log; print the log loss before and after on that log
    and keep the fitted ones if they predict it better."""
    from minigpt import extras, paths
    from minigpt.store import Store
    from minigpt.study import fsrs_fit

    if not extras.installed("optimizer"):  # one line, before the promise of a fit
        raise UserError(extras.hint("optimizer", "fitting FSRS"))
    try:
        store = Store(paths.database_path())
        try:
            click.echo("Fitting FSRS to your review log: reading it…", err=True)
            result = fsrs_fit.fit(store, progress=lambda line: click.echo(line, err=True))
        finally:
            store.close()
    except TutorError as e:
        raise e if isinstance(e, UserError) else _fail(e) from e
    on = f"the {result.fitted_reviews:,} reviews fitted" if result.sampled else "your log"
    click.echo(f"{result.reviews} reviews count · log loss on {on}: before {result.loss_before:.4f}, "
               f"after {result.loss_after:.4f}")
    click.echo("Kept: the scheduler now uses the fitted parameters." if result.kept
               else "Not kept: the fit does not predict your log better than the parameters in use.")
