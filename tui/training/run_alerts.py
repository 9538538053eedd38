"""The app's side of a watched run's alerts and diagnosis: it only delivers and draws.

What counts as an event, the escape bytes and the command's environment are ``minigpt.alerts``'s;
the symptoms are ``minigpt.training.diagnosis``'s. Here: a toast in the app, the escapes written
through Textual's driver (the terminal the app draws on, so they reach the learner's own terminal
over SSH), the learner's command, and the diagnosis line. Served in a browser nothing is written
to a terminal and no command runs: the browser is not a terminal, and the server's owner did not
ask a guest's view to run their command.
"""

from __future__ import annotations

from collections.abc import Callable

from minigpt import alerts, serving_policy
from minigpt.text import markup_escape
from minigpt.training.diagnosis import Symptom


def terminal_writer(app) -> Callable[[str], None] | None:
    """Where raw escapes reach the terminal: Textual's driver (None when headless or not started)."""
    driver = getattr(app, "_driver", None)
    if app.is_headless or driver is None:
        return None
    return driver.write


def deliver(app, alert: alerts.Event) -> None:
    """Tell the learner about ``alert`` as their settings ask."""
    choices = alerts.choices_from(getattr(app, "store", None))
    if not choices.wants(alert):
        return
    bad = alert.kind in ("diverged", "failed")
    app.notify(markup_escape(alert.message), title="Run " + alert.kind.replace("_", " "),
               severity="error" if bad else "information", timeout=10)
    if serving_policy.is_served():
        return
    write = terminal_writer(app)
    if choices.notify and write is not None:
        write(alerts.escape_bytes(alert).decode("utf-8"))
    if choices.command is not None:
        problem = alerts.deliver(alert, alerts.AlertChoices(notify=False, command=choices.command,
                                                           events=choices.events), None)
        if problem:
            app.notify(markup_escape(problem), severity="warning")


REVIEW_CHECK_S = 300  # counting the queue reads every deck (about a second of CPU): not more often


def watch_reviews(app) -> None:
    """Tell the learner when flashcard reviews fall due while the app runs, if their settings ask
    for ``reviews_due`` (not among the default events); counted in a thread."""
    watch = alerts.ReviewsWatch()

    def count() -> None:
        if "reviews_due" not in alerts.choices_from(app.store).events:
            return
        due = _due_reviews(app.store)
        alert = watch.seen(due) if due is not None else None
        if alert is not None:
            app.call_from_thread(deliver, app, alert)

    def check() -> None:
        app.run_worker(count, thread=True, exclusive=True, group="reviews-due")

    check()  # the count the next ones are compared with
    app.set_interval(REVIEW_CHECK_S, check)


def _due_reviews(store) -> int | None:
    """Cards in review or learning that are due now (new cards are not "due")."""
    from minigpt.errors import DeckError
    from minigpt.study.anki import with_user_cards
    from minigpt.study.decks import cached_decks
    from minigpt.study.review import StudySession

    try:
        counts = StudySession(store, with_user_cards(cached_decks(), store)).counts()
    except (DeckError, OSError):  # a broken deck is the flashcards screen's to report
        return None
    return counts.due + counts.learning


def diagnosis_text(symptoms: list[Symptom], key: str = "d") -> str:
    """The panel's one diagnosis line (80×24 has no room for more): the first symptom with its
    evidence and the key that opens its lesson, then the others' names (``minigpt diagnose``
    prints them all in full)."""
    first, others = symptoms[0], symptoms[1:]
    more = f" [dim](also: {markup_escape(', '.join(s.title for s in others))})[/dim]" if others else ""
    return f"[b]⚕ {markup_escape(first.title)}[/b] ({key}: lesson){more}: {markup_escape(first.evidence)}"
