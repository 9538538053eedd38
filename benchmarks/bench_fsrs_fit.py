"""`minigpt fsrs fit` on a large review log: the time it says before fitting against the time the fit
took, and the ratio behind the estimate (fsrs_fit.FIT_OVER_REPLAY).

The log is 200,000 reviews over 3,000 cards by default (round four's finding: still fitting at
400 s after promising "a few seconds to a minute"). The command runs in a fresh process, as the
learner runs it; its progress lines are read back: "Fitting: about X…" (the estimate) and
"Fitted in Y" (the measurement). The estimate holds when Y / X is between 0.5 and 2.

    nice -n 10 python benchmarks/bench_fsrs_fit.py [--reviews 200000] [--cards 3000]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minigpt.store import Store  # noqa: E402
from minigpt.study import (  # noqa: E402
    fsrs_fit,
    scheduler,
)

T0 = datetime(2025, 1, 6, 9, tzinfo=UTC)


def write_review_log(store: Store, reviews: int = 200_000, cards: int = 3_000, seed: int = 0) -> int:
    """A learner's log without a scheduler (fast to make): each card reviewed at intervals that
    double after a recall (up to two months) and start over after a miss, relearned the same
    day; about 85% recalled. Returns the row count."""
    rng = random.Random(seed)
    rows = []
    per_card = max(2, reviews // cards)
    for c in range(cards):
        when, interval = T0 + timedelta(days=rng.randrange(60), minutes=rng.randrange(600)), 1.0
        for _ in range(per_card):
            rating = 1 if rng.random() < 0.15 else rng.choice((2, 3, 3, 3, 4))
            rows.append((f"card.{c}", rating, scheduler.iso(when)))
            if rating == 1:
                when += timedelta(minutes=10)
                interval = 1.0
            else:
                interval = min(60.0, interval * rng.uniform(1.6, 2.4))
                when += timedelta(days=interval)
    with store.transaction() as conn:
        conn.executemany("INSERT INTO review_log(card_id, rating, mode, reviewed_at, duration_ms, was_new) "
                         "VALUES (?, ?, 'review', ?, 4000, 0)", rows)
    return len(rows)


@dataclass(frozen=True)
class FitFigures:
    reviews: int
    estimate_s: float  # what the command said before fitting
    fit_s: float  # what the fit took, as it reported
    wall_s: float  # the whole command

    @property
    def ratio(self) -> float:
        return self.fit_s / self.estimate_s

    @property
    def fit_over_replay(self) -> float:
        """The ratio the estimate assumes, as measured here."""
        return self.ratio * fsrs_fit.FIT_OVER_REPLAY


def _seconds(text: str) -> float:
    m = re.fullmatch(r"(?:(\d+) min )?(\d+) s", text.strip())
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return 60 * int(m.group(1) or 0) + int(m.group(2))


def measure(data_dir: Path, reviews: int) -> FitFigures:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "minigpt.cli", "--data-dir", str(data_dir), "fsrs", "fit"],
                          env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    estimate = re.search(r"Fitting: about (.+?) \(", done.stderr)
    fitted = re.search(r"Fitted in (.+?);", done.stderr)
    if not (estimate and fitted):
        raise RuntimeError(f"no estimate or no measurement in:\n{done.stderr}")
    return FitFigures(reviews, _seconds(estimate.group(1)), _seconds(fitted.group(1)), wall)


def large_log(folder: Path, reviews: int = 200_000, cards: int = 3_000) -> int:
    store = Store(folder / "progress.sqlite3")
    try:
        return write_review_log(store, reviews, cards)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=200_000)
    parser.add_argument("--cards", type=int, default=3_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        n = large_log(Path(tmp), args.reviews, args.cards)
        f = measure(Path(tmp), n)
    print(f"{n:,} reviews over {args.cards:,} cards · the command in {f.wall_s:.0f} s · estimate {f.estimate_s:.0f} s · "
          f"fit {f.fit_s:.0f} s · fit / estimate {f.ratio:.2f} "
          f"({'within 2×' if 0.5 <= f.ratio <= 2 else 'OFF by more than 2×'}) · fit / replay measured "
          f"{f.fit_over_replay:.0f} (FIT_OVER_REPLAY = {fsrs_fit.FIT_OVER_REPLAY})")


if __name__ == "__main__":
    main()
