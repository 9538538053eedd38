"""FSRS fitted to the learner (minigpt.study.fsrs_fit): on a log drawn from a learner whose memory
follows known parameters (forgetting faster than fsrs's defaults assume), the fit lowers the log
loss below the defaults' and the scheduler then uses the fitted parameters. 6-13 s on the shared
2-core machine (the optimizer's five epochs over 670 counted reviews, torch on the CPU)."""

import random
import re
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from fsrs import Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from minigpt.cli.main import main
from minigpt.errors import StudySettingError
from minigpt.store import Store
from minigpt.study import fsrs_fit, scheduler

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)
# A learner who forgets fast: initial stabilities a quarter of the defaults'.
TRUE_PARAMETERS = tuple(w * 0.25 if i < 4 else w for i, w in enumerate(DEFAULT_PARAMETERS))


def write_synthetic_log(store: Store, cards: int = 150, days: int = 60, seed: int = 1) -> int:
    """Review rows as the app would write them: the default scheduler decides when a card comes
    back; whether it is recalled is drawn from the true memory model. Returns the row count."""
    rng = random.Random(seed)
    app, truth = Scheduler(enable_fuzzing=False), Scheduler(parameters=TRUE_PARAMETERS, enable_fuzzing=False)
    rows = []
    state = {}
    for i in range(cards):
        cid = f"card.{i}"
        t = T0 + timedelta(days=i // 30)
        a, m = scheduler.new_card(cid, t), scheduler.new_card(cid, t)
        for step in range(2):  # Good, then Good at the 10-minute step: graduated
            when = t + timedelta(minutes=10 * step)
            a, _ = app.review_card(a, Rating.Good, when)
            m, _ = truth.review_card(m, Rating.Good, when)
            rows.append((cid, 3, scheduler.iso(when)))
        state[cid] = (a, m)
    for day in range(1, days):
        t = T0 + timedelta(days=day)
        for cid, (a, m) in state.items():
            if a.due > t + timedelta(hours=12):
                continue
            rating = Rating.Good if rng.random() < truth.get_card_retrievability(m, t) else Rating.Again
            a, _ = app.review_card(a, rating, t)
            m, _ = truth.review_card(m, rating, t)
            rows.append((cid, int(rating), scheduler.iso(t)))
            if rating == Rating.Again:  # relearning: Good ten minutes later
                when = t + timedelta(minutes=10)
                a, _ = app.review_card(a, Rating.Good, when)
                m, _ = truth.review_card(m, Rating.Good, when)
                rows.append((cid, 3, scheduler.iso(when)))
            state[cid] = (a, m)
    with store.transaction() as conn:
        conn.executemany("INSERT INTO review_log(card_id, rating, mode, reviewed_at, duration_ms, was_new) "
                         "VALUES (?, ?, 'review', ?, 4000, 0)", rows)
    return len(rows)


def test_below_the_threshold_one_line_says_how_many_more(tmp_path):
    store = Store(tmp_path / "progress.sqlite3")
    write_synthetic_log(store, cards=20, days=10)
    n = fsrs_fit.counted_reviews(fsrs_fit.review_logs(store))
    assert 0 < n < fsrs_fit.MIN_REVIEWS
    assert f"needs {fsrs_fit.MIN_REVIEWS - n} more reviews" in fsrs_fit.status_line(store)
    with pytest.raises(StudySettingError, match=f"{fsrs_fit.MIN_REVIEWS - n} more"):
        fsrs_fit.fit(store)
    out = CliRunner().invoke(main, ["--data-dir", str(tmp_path), "fsrs", "fit"])
    assert out.exit_code == 2 and f"{fsrs_fit.MIN_REVIEWS - n} more" in out.output


def test_the_fit_beats_the_defaults_on_a_log_from_known_parameters(tmp_path):
    pytest.importorskip("pandas")  # the optimizer extra
    store = Store(tmp_path / "progress.sqlite3")
    write_synthetic_log(store)
    logs = fsrs_fit.review_logs(store)
    assert fsrs_fit.counted_reviews(logs) >= fsrs_fit.MIN_REVIEWS
    truth_loss = fsrs_fit.log_loss(logs, TRUE_PARAMETERS)
    store.close()
    out = CliRunner().invoke(main, ["--data-dir", str(tmp_path), "fsrs", "fit"])   # as the learner runs it
    assert out.exit_code == 0, out.output
    before, after = (float(x) for x in re.findall(r"(?:before|after) (\d\.\d{4})", out.output))
    assert after < before and "Kept" in out.output
    assert before == pytest.approx(fsrs_fit.log_loss(logs), abs=1e-4)   # the defaults were in use
    assert truth_loss < before                      # the log really is better told by other parameters
    store = Store(tmp_path / "progress.sqlite3")
    fitted = scheduler.fitted_parameters(store)
    assert fitted is not None and fsrs_fit.log_loss(logs, fitted) == pytest.approx(after, abs=1e-4)
    assert scheduler.learner_scheduler(store).parameters == fitted   # what the study sessions use
    assert "FSRS fitted to your" in fsrs_fit.status_line(store)
    store.close()
