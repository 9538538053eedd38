"""FSRS fitted to the learner: the optimizer of ``fsrs`` run on their own review log.

The defaults are fitted to many people's logs; a learner's own log predicts their memory better
(srs-benchmark: 0.321 log loss fitted against 0.339 with defaults). The optimizer needs the
``optimizer`` extra (torch, pandas) and does nothing below ``MIN_REVIEWS`` reviews that count:
reviews of a card at least a day after its previous one (same-day answers say nothing about
forgetting over days). Its own threshold is its mini-batch of 512; we say it before running it.

The log loss shown before and after is computed here, torch-free, the way the optimizer scores
a log: replay each card's reviews with fsrs and average the binary cross-entropy of the
predicted retrievability against "recalled" (any rating but Again) over the reviews that count.
Fitted parameters are kept only when they lower that loss; the scheduler reads them
(``minigpt.study.scheduler.fitted_parameters``).

The optimizer's time grows with the reviews it reads (five passes, torch on scalars: about
10 ms a review on a busy 2-core machine, so 200,000 reviews would take half an hour). It reads
at most MAX_FIT_REVIEWS: whole histories of cards taken in the order of a hash of their ids
(deterministic, and unrelated to when or how well a card was reviewed). Before fitting it says
how long, from the time the replay of the parameters in use took on that same sample.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from fsrs import Card, Rating, ReviewLog, Scheduler

from minigpt import extras, settings
from minigpt.errors import StudySettingError
from minigpt.store import Store
from minigpt.study import days, rows
from minigpt.study import scheduler as sch

MIN_REVIEWS = 512          # fsrs.optimizer's mini_batch_size: below it, it returns the defaults
MAX_FIT_REVIEWS = 5_000    # what the optimizer reads at most: about a minute on a busy 2-core machine
FIRST_REVIEWS = 64         # fsrs.optimizer's max_seq_len: it reads a card's first 64 reviews only
# The optimizer's time over the replay's on the same reviews (5 passes with gradients, and a scored
# pass after each, against one plain replay): measured by benchmarks/bench_fsrs_fit.py.
FIT_OVER_REPLAY = 300


@dataclass(frozen=True)
class FitResult:
    reviews: int              # reviews that count (a day or more after the card's previous one)
    loss_before: float        # log loss on the reviews fitted with the parameters in use before
    loss_after: float         # ... with the fitted ones
    parameters: tuple[float, ...]
    kept: bool                # the fitted parameters are now the scheduler's
    fitted_reviews: int = 0   # reviews the optimizer read (all of them, or the sample)
    sampled: bool = False     # the log was larger than MAX_FIT_REVIEWS: a sample of its cards was fitted


def review_logs(store: Store) -> list[ReviewLog]:
    """The answers that moved the schedule (cram is left out), as fsrs review logs."""
    return [ReviewLog(card_id=sch.fsrs_card_id(r.card_id), rating=Rating(r.rating), review_datetime=r.reviewed_at,
                      review_duration=r.duration_ms) for r in rows.reviews(store, "mode != 'cram'")]


def _histories(logs: list[ReviewLog]) -> dict[int, list[ReviewLog]]:
    out: dict[int, list[ReviewLog]] = {}
    for log in logs:
        out.setdefault(log.card_id, []).append(log)
    return {cid: sorted(h, key=lambda x: x.review_datetime) for cid, h in out.items()}


def counted_reviews(logs: list[ReviewLog]) -> int:
    """Reviews a day or more after the same card's previous review: what the optimizer learns from."""
    n = 0
    for history in _histories(logs).values():
        n += sum(1 for a, b in zip(history, history[1:]) if b.review_datetime - a.review_datetime >= timedelta(days=1))
    return n


def log_loss(logs: list[ReviewLog], parameters: tuple[float, ...] | None = None) -> float:
    """Mean binary cross-entropy of fsrs's predicted recall over the reviews that count."""
    scheduler = Scheduler(parameters=parameters) if parameters is not None else Scheduler()
    total, n = 0.0, 0
    for cid, history in _histories(logs).items():
        card = Card(card_id=cid, due=history[0].review_datetime)
        for log in history[:64]:  # the optimizer reads a card's first 64 reviews
            t = log.review_datetime
            if card.last_review is not None and (t - card.last_review).days > 0:
                p = min(1 - 1e-7, max(1e-7, float(scheduler.get_card_retrievability(card, t))))
                total -= math.log(p) if log.rating != Rating.Again else math.log(1 - p)
                n += 1
            card, _ = scheduler.review_card(card, log.rating, t)
    return total / n if n else float("nan")


def status_line(store: Store) -> str:
    """One line: the parameters in use, or how many more reviews a fit needs."""
    f = settings.get(store, settings.FSRS_FIT)  # what the last fit found
    n = counted_reviews(review_logs(store))
    if f and sch.fitted_parameters(store) is not None:
        return (f"FSRS fitted to your {f['reviews']} reviews on {f['at']}: log loss {f['before']:.3f} → "
                f"{f['after']:.3f} (now {n} reviews count)")
    if n < MIN_REVIEWS:
        return f"FSRS uses its default parameters: a fit to your log needs {MIN_REVIEWS - n} more reviews ({n} of {MIN_REVIEWS} count)"
    return f"FSRS uses its default parameters: {n} reviews count, enough to fit them to you"


def sample_histories(logs: list[ReviewLog], max_reviews: int = MAX_FIT_REVIEWS) -> list[ReviewLog]:
    """The reviews the optimizer reads: each card's first FIRST_REVIEWS, all of them when they are
    at most ``max_reviews``, else whole histories of cards taken in the order of a hash of their
    ids (the same sample every time) while they fit."""
    histories = {cid: h[:FIRST_REVIEWS] for cid, h in _histories(logs).items()}
    if sum(len(h) for h in histories.values()) <= max_reviews:
        return [log for h in histories.values() for log in h]
    chosen: list[ReviewLog] = []
    for cid in sorted(histories, key=lambda c: (zlib.crc32(str(c).encode()), c)):
        if len(chosen) + len(histories[cid]) <= max_reviews:
            chosen += histories[cid]
    return chosen


def fit_seconds(replay_seconds: float) -> float:
    """How long the optimizer takes on reviews whose replay took ``replay_seconds``."""
    return FIT_OVER_REPLAY * replay_seconds


def fit(store: Store, *, min_reviews: int = MIN_REVIEWS, max_reviews: int = MAX_FIT_REVIEWS,
        progress: Callable[[str], None] | None = None) -> FitResult:
    """Fit fsrs's parameters to the learner's log (a sample of at most ``max_reviews``); keep them
    if they predict those reviews better. ``progress`` gets one line per phase, the fit's expected
    time among them."""
    if not extras.installed("optimizer"):  # said first: no number of reviews makes a fit run without it
        raise StudySettingError(extras.hint("optimizer", "fitting FSRS"))
    say = progress or (lambda _line: None)
    logs = review_logs(store)
    n = counted_reviews(logs)
    if n < min_reviews:
        raise StudySettingError(f"{n} reviews count (a day or more after the card's previous one); "
                                f"a fit needs {min_reviews}: {min_reviews - n} more")
    try:
        from fsrs.optimizer import Optimizer
    except ImportError:
        raise StudySettingError(extras.hint("optimizer", "fitting FSRS")) from None
    sample = sample_histories(logs, max_reviews)
    cards = len({log.card_id for log in sample})
    sampled = len(sample) < len(logs)
    say(f"Read {len(logs):,} reviews; fitting "
        + (f"a sample of {len(sample):,} reviews (whole histories of {cards:,} cards)" if sampled
           else f"all {len(sample):,} of them ({cards:,} cards)") + ".")
    current = sch.fitted_parameters(store)
    t0 = time.perf_counter()
    before = log_loss(sample, current)
    say(f"Fitting: about {_duration(fit_seconds(time.perf_counter() - t0))} (5 passes over the reviews)…")
    t0 = time.perf_counter()
    fitted = tuple(float(x) for x in Optimizer(sample).compute_optimal_parameters())
    say(f"Fitted in {_duration(time.perf_counter() - t0)}; scoring the fitted parameters…")
    after = log_loss(sample, fitted)
    kept = after < before
    if kept:
        with store.transaction() as conn:
            settings.write(conn, settings.FSRS_PARAMETERS, fitted)
            settings.write(conn, settings.FSRS_FIT, {"reviews": n, "before": before, "after": after,
                                                        "at": days.today().isoformat()})
    return FitResult(n, before, after, fitted, kept, len(sample), sampled)


def _duration(seconds: float) -> str:
    """``12 s``, ``3 min 5 s``: how long, for a progress line."""
    seconds = max(1, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60} s"
