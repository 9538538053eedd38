"""Study stats: due forecast, katas passed, activity heatmap with streak, retention, weakest cards, buttons."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from minigpt.errors import DeckError, StoreError, StudySettingError
from minigpt.study import scheduler, stats
from minigpt.study.anki import with_user_cards
from minigpt.study.days import local_date
from minigpt.study.decks import cached_decks
from minigpt.study.review import queue_counts
from minigpt.text import markup_escape as escape
from tui.common.header import TutorHeader
from tui.study.study_card import card_title
from tui.study.study_charts import ForecastChart, buttons_text, heatmap_text, retention_text, weakest_text
from tui.workers import Result, background


def katas_text(store) -> str:
    """Katas passed, with what it took: attempts, hints, the solutions seen, time to pass."""
    from minigpt.errors import KataError
    from minigpt.katas import history
    from minigpt.katas.catalogue import load_katas

    try:
        katas = load_katas()
    except KataError as e:
        return f"✗ {escape(str(e))}"
    t = history.totals(store, katas)
    mine = history.records(store)
    passed = [k.name for k in katas if k.name in mine and mine[k.name].passed]
    lines = [f"Katas passed [b]{t.passed}[/b] of {t.total} · attempts {t.attempts} · hints used {t.hints_used}"
             f" · solutions seen before a pass {t.gave_up} · median time to pass {history.duration_text(t.median_seconds_to_pass)}"]
    if passed:
        lines.append("[green]✓[/green] " + escape(", ".join(passed)))
    else:
        lines.append("[dim]None passed yet: k on the home screen, or c in a lesson that has one[/dim]")
    return "\n".join(lines)


class StudyStatsScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="stats.back"),
        Binding("r", "refresh_stats", "Refresh", show=True, id="stats.refresh"),
        Binding("f", "open_flashcards", "Flashcards", show=True, id="stats.open_flashcards"),
        Binding("i", "open_plan", "Plan", show=True, id="stats.open_plan"),
        # One footer entry for the pair (80 columns): + raises desired retention, - lowers it.
        Binding("plus,equals_sign", "retention(1)", "Retention", key_display="+/-", show=True, id="stats.retention_up"),
        Binding("minus", "retention(-1)", "Retention −", key_display="-", show=False, id="stats.retention_down"),
        Binding("F", "fit_fsrs", "Fit FSRS to my reviews", key_display="F", show=False, id="stats.fit_fsrs"),
    ]

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with VerticalScroll(id="stats-body"):
            yield Static(id="stats-now")
            with Vertical(classes="stats-section", id="stats-forecast") as box:
                box.border_title = "Due forecast"
                yield ForecastChart(id="stats-forecast-chart")
                yield Static(id="stats-forecast-text")
            katas = Static(id="stats-katas", classes="stats-section")
            katas.border_title = "Katas"
            yield katas
            for ident, title in [("activity", "Reviews per day"), ("retention", "Retention"),
                                 ("workload", "Desired retention and its workload"),
                                 ("buttons", "Answer buttons"), ("weakest", "Weakest cards")]:
                section = Static(id=f"stats-{ident}", classes="stats-section")
                section.border_title = title
                yield section
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Study stats"
        self.query_one("#stats-body").focus()
        self.action_refresh_stats()

    def on_screen_resume(self) -> None:
        self.action_refresh_stats()

    def action_refresh_stats(self) -> None:
        store = self.app.store
        now = scheduler.utc_now()
        try:  # the very numbers the home screen and the flashcards strip show
            c = queue_counts(store, now)
            self.query_one("#stats-now", Static).update(
                f"To study now [b]{c.total}[/b]: new {c.new} · learning {c.learning} · "
                f"due {c.due}" + (f" · katas {c.katas}" if c.katas else ""))
        except DeckError as e:
            self.query_one("#stats-now", Static).update(f"✗ {escape(str(e))}")
        self.query_one("#stats-katas", Static).update(katas_text(store))
        forecast = stats.due_forecast(store, days=14, now=now)
        self.query_one(ForecastChart).set_forecast(forecast)
        days = " · ".join(f"{'today, now or later' if i == 0 else d.strftime('%a %d')}: {n}"
                          for i, (d, n) in enumerate(forecast[:6]))
        # Reviews only: "To study now" above also counts new cards, so the two can differ (20 vs 0).
        self.query_one("#stats-forecast-text", Static).update(
            f"{days}\nNext 14 days: [b]{sum(n for _, n in forecast)}[/b] reviews due "
            "[dim](cards studied before; new cards are not forecast)[/dim]")
        activity = stats.reviews_per_day(store, days=365, now=now)
        self.query_one("#stats-activity", Static).update(heatmap_text(activity, local_date(now)))
        self.query_one("#stats-retention", Static).update(
            retention_text(stats.retention(store, desired=scheduler.desired_retention(store))))
        self.query_one("#stats-workload", Static).update(
            f"Desired retention [b]{scheduler.desired_retention(store):.0%}[/b] (+ and - change it) · "
            "[dim]simulating the workload…[/dim]")
        self.simulate_workload()
        breakdown = stats.button_breakdown(store)
        self.query_one("#stats-buttons", Static).update(
            buttons_text(breakdown) + "\n[dim]all modes: review, cram and quizzes[/dim]")
        try:
            deck = with_user_cards(cached_decks(), store)
            fronts = {c.id: card_title(c) for c in deck}
        except DeckError as e:
            fronts = {}
            self.notify(f"A deck file could not be read: {escape(str(e))}", severity="error")
        self.query_one("#stats-weakest", Static).update(
            weakest_text(stats.weakest_cards(store, n=10), fronts))

    @dataclass
    class Simulated(Result):
        """The workload line: reviews a day at a few desired retentions."""
        text: str

    class Fitted(Result):
        """FSRS was fitted to the reviews (the verdict was a notice)."""

    @background(thread=True, exclusive=True, group="workload")
    def simulate_workload(self) -> Simulated | None:
        """Reviews a day at a few desired retentions (about a second of fsrs): in a thread."""
        from minigpt.study import workload
        from minigpt.study.review import StudySession

        store = self.app.store
        try:
            deck = with_user_cards(cached_decks(), store)
        except DeckError:
            return None
        per_day = StudySession(store, deck).new_per_day()
        mine = scheduler.desired_retention(store)
        choices = tuple(sorted({*workload.CHOICES, round(mine, 2)}))
        found = workload.workloads(store, deck, new_per_day=per_day, choices=choices)
        cells = " · ".join((f"[b]{w.retention:.0%}: {w.reviews_per_day:.0f}[/b]" if abs(w.retention - mine) < 1e-9
                            else f"{w.retention:.0%}: {w.reviews_per_day:.0f}") for w in found)
        from minigpt.study.fsrs_fit import status_line

        text = (f"Desired retention [b]{mine:.0%}[/b] (+/- change it: the scheduler and the plan use it)\n"
                f"Reviews a day over {found[0].days} days at {per_day} new a day (simulated): {cells}\n"
                f"[dim]{escape(status_line(store))} · F fits[/dim]")
        return self.Simulated(text)

    @on(Simulated)
    def _show_workload(self, message: Simulated) -> None:
        self.query_one("#stats-workload", Static).update(message.text)

    def action_fit_fsrs(self) -> None:
        self.notify("Fitting FSRS to your reviews: reading them…")
        self.fit_fsrs()

    @background(thread=True, exclusive=True, group="fsrs-fit")
    def fit_fsrs(self) -> Fitted | None:
        from minigpt.study import fsrs_fit

        # The verdicts are notices, not results: notify is thread-safe, and they reach the learner
        # even if they left this screen during the fit (its weights are saved either way).
        try:
            r = fsrs_fit.fit(self.app.store, progress=lambda line: self.notify(escape(line), timeout=8))
        except (StudySettingError, StoreError) as e:
            self.notify(escape(str(e)), severity="warning", timeout=10)
            return None
        verdict = "kept: the scheduler uses them now" if r.kept else "not kept: no better than the ones in use"
        self.notify(f"FSRS fitted to {r.reviews} reviews: log loss {r.loss_before:.4f} → "
                    f"{r.loss_after:.4f}, {verdict}", timeout=15)
        return self.Fitted()

    @on(Fitted)
    def _fitted(self, _message: Fitted) -> None:
        self.action_refresh_stats()  # the scheduler's weights may have changed

    def action_retention(self, step: int) -> None:
        store = self.app.store
        low, high = scheduler.RETENTION_RANGE
        value = min(high, max(low, round(scheduler.desired_retention(store) + step * 0.01, 2)))
        try:
            scheduler.set_desired_retention(store, value)
        except (StudySettingError, StoreError) as e:
            self.notify(escape(str(e)), severity="error")
            return
        self.action_refresh_stats()

    def action_open_flashcards(self) -> None:
        self.app.open_area("flashcards")

    def action_open_plan(self) -> None:
        from tui.navigation import open_screen

        open_screen(self.app, "study_plan")
