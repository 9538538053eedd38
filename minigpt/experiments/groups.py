"""Seed groups: one configuration trained over several seeds (``minigpt train --seeds N``), read
back as a band (the mean curve and its spread) and compared with another group by a t-test
(``minigpt.significance``): is the difference between two settings larger than what the seed alone
changes?

A run belongs to a group when its status names one (``status.json``'s ``group``, format 3). Two
groups are *paired* when they used the same seeds: seed s of one group and seed s of the other
drew the same batches and started from the same weights as far as their settings allow, so the
paired test compares them seed by seed.

A group trained for a time budget (``--time``) has no shared steps: each seed stops at its own. Its
curves are aligned on the fraction of the budget spent and interpolated onto one grid
(``aligned_band``), and the comparison is made on that grid.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from minigpt import significance
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
    standard deviation (a single run: no spread). ``axis``: what ``steps`` counts, "step" or
    "budget" (the fraction of a time budget spent, for ``--time`` groups)."""

    steps: list
    mean: list[float]
    low: list[float]
    high: list[float]
    values: list[list[float]]  # values[i]: every run's val loss at steps[i]
    axis: str = "step"


@dataclass
class GroupComparison:
    result: significance.TestResult  # on the final common evaluation's val losses
    paired: bool
    step: int  # the evaluation compared
    parted_at: int | None  # the first step from which they differ beyond the noise
    axis: str = "step"
    seeds_needed: int | None = None  # per group, to detect this difference at this noise (power 0.8)


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


def band(curves: list[dict], axis: str = "step") -> Band:
    """The band of several runs' val curves over the steps (or grid points) every run has."""
    common = sorted(set.intersection(*(set(c) for c in curves))) if curves else []
    out = Band([], [], [], [], [], axis)
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


GRID_POINTS = 40  # the budget grid: 2.5 % apart, finer than a short run's evaluations


def budget_curve(run_dir: Path, budget_s: float) -> list[tuple[float, float]]:
    """(fraction of the time budget spent, val loss) of one run, in order."""
    records, _ = read_metrics(run_dir)
    return [(float(r["elapsed_s"]) / budget_s, r["val_loss"]) for r in records
            if "val_loss" in r and isinstance(r.get("elapsed_s"), (int, float))]


def interpolate(points: list[tuple[float, float]], grid: list[float]) -> dict[float, float]:
    """The curve through ``points`` at each grid point it covers, linearly between its neighbours.
    The last point counts up to one grid cell further (a run's final evaluation comes when the
    budget is spent, a moment after the last cell it measured); nothing else is extrapolated."""
    if not points:
        return {}
    cell = grid[1] - grid[0] if len(grid) > 1 else 0.0
    out = {}
    for g in grid:
        if g < points[0][0] or g > points[-1][0] + cell:
            continue
        right = next((i for i, (x, _) in enumerate(points) if x >= g), None)
        if right is None:
            out[g] = points[-1][1]
        elif right == 0 or points[right][0] == g:
            out[g] = points[right][1]
        else:
            (x0, y0), (x1, y1) = points[right - 1], points[right]
            out[g] = y0 + (y1 - y0) * (g - x0) / (x1 - x0)
    return out


def is_time_group(group: SeedGroup) -> bool:
    return all(r.total_unit == "seconds" and r.total for r in group.runs)


def group_band(group: SeedGroup) -> Band:
    """The group's band: over shared steps, or for a time-budget group over the budget grid."""
    if not is_time_group(group):
        return band([val_curve(r.path) for r in group.runs])
    grid = [round((k + 1) / GRID_POINTS, 6) for k in range(GRID_POINTS)]
    return band([interpolate(budget_curve(r.path, float(r.total)), grid) for r in group.runs], axis="budget")


@dataclass
class Finals:
    """Each run's final val and test loss, summarised as mean ± standard error and N."""

    val: significance.Summary | None
    test: significance.Summary | None
    val_values: list[float]

    def describe(self) -> str:
        val = self.val.describe() if self.val else "–"
        test = self.test.describe() if self.test else "–"
        return f"final val {val} · test {test}"


def finals(group: SeedGroup) -> Finals:
    """The final val loss (the status's, else the run's last evaluation) and test loss of each
    run that has them."""
    vals, tests = [], []
    for info in group.runs:
        val = info.val_loss
        if val is None:
            curve = val_curve(info.path)
            val = curve[max(curve)] if curve else None
        if val is not None:
            vals.append(val)
        if info.test_loss is not None:
            tests.append(info.test_loss)
    return Finals(significance.summarize(vals), significance.summarize(tests), vals)


def seeds_to_detect(a: list[float], b: list[float]) -> int | None:
    """Seeds per group a t-test needs (α 0.05, power 0.8) to detect the difference of these two
    groups' means at their pooled noise; None when it cannot be told (too few runs, no noise)."""
    d = significance.effect_size(a, b)
    return None if d is None else significance.seeds_needed(d)


def paired(a: SeedGroup, b: SeedGroup) -> bool:
    return len(a.seeds) == len(b.seeds) and None not in a.seeds and sorted(a.seeds) == sorted(b.seeds)


def compare(a: SeedGroup, b: SeedGroup, band_a: Band, band_b: Band) -> GroupComparison | None:
    """Group a against group b at the last evaluation (or budget grid point) both reached; None
    when either group has fewer than two runs there (a t-test needs a spread), they share none,
    or one counts steps and the other a time budget."""
    is_paired = paired(a, b)
    steps = sorted(set(band_a.steps) & set(band_b.steps)) if band_a.axis == band_b.axis else []
    if not steps:
        return _on_finals(a, b, is_paired)
    at_a = {s: v for s, v in zip(band_a.steps, band_a.values, strict=True)}
    at_b = {s: v for s, v in zip(band_b.steps, band_b.values, strict=True)}
    if is_paired:  # seed order: the i-th value of each group belongs to the same seed
        order_a = sorted(range(len(a.seeds)), key=lambda i: a.seeds[i])
        order_b = sorted(range(len(b.seeds)), key=lambda i: b.seeds[i])
        at_a = {s: [v[i] for i in order_a] for s, v in at_a.items()}
        at_b = {s: [v[i] for i in order_b] for s, v in at_b.items()}
    last = steps[-1]
    if len(at_a[last]) < 2 or len(at_b[last]) < 2:
        return _on_finals(a, b, is_paired)
    result = significance.compare_groups(at_a[last], at_b[last], is_paired)
    parted = significance.first_parting(steps, [at_a[s] for s in steps], [at_b[s] for s in steps], is_paired)
    if not math.isfinite(result.t) and result.p == 0.0:
        parted = parted or last
    return GroupComparison(result, is_paired, last, parted, band_a.axis, seeds_to_detect(at_a[last], at_b[last]))


def _on_finals(a: SeedGroup, b: SeedGroup, is_paired: bool) -> GroupComparison | None:
    """Two time-budget groups compared on their runs' final val losses, each at its own run's end
    of the budget: short runs that evaluate only as the budget runs out share no point of the
    budget grid (None for step groups, or fewer than two finals a side)."""
    if not (is_time_group(a) and is_time_group(b)):
        return None
    va, vb = finals(a).val_values, finals(b).val_values
    if len(va) < 2 or len(vb) < 2:
        return None
    is_paired = is_paired and len(va) == len(a.runs) and len(vb) == len(b.runs)
    if is_paired:  # seed order, as at the evaluations
        va = [v for _, v in sorted(zip(a.seeds, va, strict=True))]
        vb = [v for _, v in sorted(zip(b.seeds, vb, strict=True))]
    return GroupComparison(significance.compare_groups(va, vb, is_paired), is_paired, 1.0, None, "budget",
                           seeds_to_detect(va, vb))


def brief(comparison: GroupComparison, a: str, b: str) -> list[str]:
    """The comparison in three short lines for a narrow legend: the difference, the test's verdict
    and the seeds needed."""
    r = comparison.result
    verdict = "real" if r.p < 0.05 else "within the noise"
    lines = [f"{a} − {b}: {r.difference:+.3g} ± {r.stderr:.2g}", f"{r.test} p = {r.p:.2g}: {verdict}"]
    if comparison.seeds_needed is not None:
        lines.append(f"{comparison.seeds_needed} seeds/group detect it")
    return lines


def _where(value, axis: str) -> str:
    return f"{value * 100:.0f}% of the time budget" if axis == "budget" else f"step {value}"


def describe(comparison: GroupComparison, a: str, b: str) -> str:
    """One line for the learner, e.g. ``A − B at step 3000: -0.031 ± 0.008 (paired t = …, p = 0.02);
    apart from step 1500``."""
    r = comparison.result
    verdict = "a real difference" if r.p < 0.05 else "within the seeds' noise"
    axis = comparison.axis
    parted = f"; apart from {_where(comparison.parted_at, axis)}" if comparison.parted_at is not None else ""
    need = comparison.seeds_needed
    seeds = f"; {need} seeds per group would detect it (power 0.8)" if need is not None else ""
    return f"{a} − {b} at {_where(comparison.step, axis)}: {r.describe()}: {verdict}{parted}{seeds}"
