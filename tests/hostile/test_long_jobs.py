"""Long jobs say how long, truthfully (issue 44 item 6; round 4, row 11: `fsrs fit` on 200,000
reviews was still fitting at 400 s after promising "a few seconds to a minute").

The fit reads a deterministic sample of whole card histories (at most MAX_FIT_REVIEWS), says
each phase and, before fitting, how long it will take. The 200,000-review check of that estimate
is the soak test at the end (and benchmarks/bench_fsrs_fit.py).
"""

from __future__ import annotations

import random
import sys
import types
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Rating, ReviewLog

from minigpt.store import Store
from minigpt.study import fsrs_fit
from minigpt.study.fsrs_fit import FIRST_REVIEWS, sample_histories

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)


def logs_of(cards: int, per_card: int, seed: int = 0) -> list[ReviewLog]:
    rng = random.Random(seed)
    out = [ReviewLog(card_id=1000 + c, rating=Rating(rng.choice((1, 3))), review_datetime=T0 + timedelta(days=2 * i),
                     review_duration=None) for c in range(cards) for i in range(per_card)]
    rng.shuffle(out)
    return out


def _by_card(logs):
    out = {}
    for log in logs:
        out.setdefault(log.card_id, []).append(log.review_datetime)
    return {cid: sorted(times) for cid, times in out.items()}


def test_a_large_log_is_sampled_by_whole_card_histories_under_the_cap():
    logs = logs_of(cards=300, per_card=30)
    sample = sample_histories(logs, max_reviews=1_000)
    assert 1_000 - 30 < len(sample) <= 1_000
    whole = _by_card(logs)
    assert all(times == whole[cid] for cid, times in _by_card(sample).items())  # no history cut


def test_the_sample_is_the_same_whatever_the_order_of_the_log():
    logs = logs_of(cards=300, per_card=30)
    shuffled = list(reversed(logs))
    assert _by_card(sample_histories(logs, 1_000)) == _by_card(sample_histories(shuffled, 1_000))


def test_a_log_under_the_cap_is_read_whole_and_each_card_to_its_first_64():
    logs = logs_of(cards=3, per_card=100)
    sample = sample_histories(logs, max_reviews=10_000)
    assert len(sample) == 3 * FIRST_REVIEWS
    assert all(times == whole[:FIRST_REVIEWS] for (cid, times), whole in
               zip(sorted(_by_card(sample).items()), [v for _, v in sorted(_by_card(logs).items())]))


class _Optimizer:
    """fsrs's optimizer, replaced: what it was given is kept; it returns the defaults at once."""

    given: list = []

    def __init__(self, logs):
        _Optimizer.given = list(logs)

    def compute_optimal_parameters(self):
        from fsrs.scheduler import DEFAULT_PARAMETERS

        return list(DEFAULT_PARAMETERS)


def test_the_fit_reads_at_most_the_cap_and_says_each_phase_with_an_estimate_first(tmp_path, monkeypatch):
    from benchmarks.bench_fsrs_fit import write_review_log

    # The real module imports torch and pandas (3 s): a stand-in is all this test needs.
    monkeypatch.setitem(sys.modules, "fsrs.optimizer", types.SimpleNamespace(Optimizer=_Optimizer))
    store = Store(tmp_path / "progress.sqlite3")
    rows = write_review_log(store, reviews=2_000, cards=40)
    lines: list[str] = []
    result = fsrs_fit.fit(store, min_reviews=10, max_reviews=rows // 2, progress=lines.append)
    assert result.sampled and len(_Optimizer.given) == result.fitted_reviews <= rows // 2
    assert [line.split()[0] for line in lines] == ["Read", "Fitting:", "Fitted"]
    assert f"Read {rows:,} reviews" in lines[0] and "sample" in lines[0]
    assert "about " in lines[1] and " s" in lines[1]
    store.close()


@pytest.mark.soak
def test_the_estimate_holds_within_2x_on_200k_reviews(tmp_path):
    from benchmarks.bench_fsrs_fit import large_log, measure

    pytest.importorskip("pandas")
    figures = measure(tmp_path, large_log(tmp_path))
    assert 0.5 <= figures.ratio <= 2.0, figures
    assert figures.wall_s < 120, figures  # was still fitting at 400 s
