"""Seed groups: one configuration trained over several seeds (``minigpt train --seeds N``), read
back as a band (the mean curve and its spread) and compared with another group by a t-test
(``minigpt.stats``): is the difference between two settings larger than what the seed alone
changes?

A run belongs to a group when its status names one (``status.json``'s ``group``, format 3). Two
groups are *paired* when they used the same seeds: seed s of one group and seed s of the other
drew the same batches and started from the same weights as far as their settings allow, so the
paired test compares them seed by seed.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from minigpt import stats
from minigpt.runs import listing
from minigpt.runs.metrics import read_metrics
from minigpt.runs.schema import read_config_values


@dataclass
class SeedGroup:
    name: str
    runs: list[listing.RunInfo]
    seeds: list[int]  # each run's seed, in the order of ``runs``


@dataclass
class Band:
    """A group's val curve at the evaluations all its runs reached: mean and mean ± one sample
    standard deviation (a single run: no spread)."""

    steps: list[int]
    mean: list[float]
    low: list[float]
    high: list[float]
    values: list[list[float]]  # values[i]: every run's val loss at steps[i]


@dataclass
class GroupComparison:
    result: stats.TestResult  # on the final common evaluation's val losses
    paired: bool
    step: int  # the evaluation compared
    parted_at: int | None  # the first step from which they differ beyond the noise


def _seed(run_dir: Path) -> int | None:
    try:
        seed = read_config_values(run_dir / "config.json").get("seed")
    except (OSError, ValueError):
        return None
    return seed if isinstance(seed, int) else None


def find_groups(infos: list[listing.RunInfo]) -> list[SeedGroup]:
    """The seed groups among ``infos`` (runs without a group are left out), in first-seen order."""
    groups: dict[str, SeedGroup] = {}
    for info in infos:
        if info.group:
            group = groups.setdefault(info.group, SeedGroup(info.group, [], []))
            group.runs.append(info)
            group.seeds.append(_seed(info.path))
    return list(groups.values())


def val_curve(run_dir: Path) -> dict[int, float]:
    """{step: val loss} of one run."""
    records, _ = read_metrics(run_dir)
    return {r["step"]: r["val_loss"] for r in records if "val_loss" in r}


def band(curves: list[dict[int, float]]) -> Band:
    """The band of several runs' val curves over the steps every run evaluated."""
    common = sorted(set.intersection(*(set(c) for c in curves))) if curves else []
    out = Band([], [], [], [], [])
    for step in common:
        values = [c[step] for c in curves]
        m = statistics.fmean(values)
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        out.steps.append(step)
        out.mean.append(m)
        out.low.append(m - spread)
        out.high.append(m + spread)
        out.values.append(values)
    return out


def paired(a: SeedGroup, b: SeedGroup) -> bool:
    return len(a.seeds) == len(b.seeds) and None not in a.seeds and sorted(a.seeds) == sorted(b.seeds)


def compare(a: SeedGroup, b: SeedGroup, band_a: Band, band_b: Band) -> GroupComparison | None:
    """Group a against group b at the last evaluation both reached; None when either group has
    fewer than two runs there (a t-test needs a spread) or they share no evaluation."""
    is_paired = paired(a, b)
    steps = sorted(set(band_a.steps) & set(band_b.steps))
    if not steps:
        return None
    at_a = {s: v for s, v in zip(band_a.steps, band_a.values, strict=True)}
    at_b = {s: v for s, v in zip(band_b.steps, band_b.values, strict=True)}
    if is_paired:  # seed order: the i-th value of each group belongs to the same seed
        order_a = sorted(range(len(a.seeds)), key=lambda i: a.seeds[i])
        order_b = sorted(range(len(b.seeds)), key=lambda i: b.seeds[i])
        at_a = {s: [v[i] for i in order_a] for s, v in at_a.items()}
        at_b = {s: [v[i] for i in order_b] for s, v in at_b.items()}
    last = steps[-1]
    if len(at_a[last]) < 2 or len(at_b[last]) < 2:
        return None
    result = stats.compare_groups(at_a[last], at_b[last], is_paired)
    parted = stats.first_parting(steps, [at_a[s] for s in steps], [at_b[s] for s in steps], is_paired)
    if not math.isfinite(result.t) and result.p == 0.0:
        parted = parted or last
    return GroupComparison(result, is_paired, last, parted)


def describe(comparison: GroupComparison, a: str, b: str) -> str:
    """One line for the learner, e.g. ``A − B at step 3000: -0.031 ± 0.008 (paired t = …, p = 0.02);
    apart from step 1500``."""
    r = comparison.result
    verdict = "a real difference" if r.p < 0.05 else "within the seeds' noise"
    parted = f"; apart from step {comparison.parted_at}" if comparison.parted_at is not None else ""
    return f"{a} − {b} at step {comparison.step}: {r.describe()}: {verdict}{parted}"
