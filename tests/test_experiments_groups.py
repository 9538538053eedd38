"""Seed groups (minigpt.experiments.groups): ``minigpt train --seeds 3`` makes a group, read back
as a band and compared with another group by Welch's or the paired t-test."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from minigpt.experiments import groups
from minigpt.runs import listing
from tests.helpers.run_fixtures import grouped_run, write_run

REPO = Path(__file__).resolve().parents[1]


def test_groups_band_and_comparison_by_hand(tmp_path):
    for seed, (a, b) in zip((1, 2, 3), ((2.00, 2.10), (2.02, 2.13), (2.04, 2.13)), strict=True):
        grouped_run(tmp_path, f"a{seed}", "A", seed, a)
        grouped_run(tmp_path, f"b{seed}", "B", seed, b)
    write_run(tmp_path, "loose", best_val=2.5)  # no group: left out
    found = groups.find_groups(sorted(listing.list_runs(tmp_path), key=lambda i: i.name))
    assert [g.name for g in found] == ["A", "B"] and found[0].seeds == [1, 2, 3]
    bands = [groups.band([groups.val_curve(r.path) for r in g.runs]) for g in found]
    assert bands[0].steps == [50, 100, 150, 200]
    finals = bands[0].values[-1]
    assert bands[0].mean[-1] == pytest.approx(statistics.fmean(finals))
    assert bands[0].high[-1] - bands[0].mean[-1] == pytest.approx(statistics.stdev(finals))
    comparison = groups.compare(found[0], found[1], bands[0], bands[1])
    assert comparison.paired and comparison.step == 200
    # the fixture's val at the last step is best_val + (3.3 − best_val)·e^−6, so seed by seed A − B is
    # (−0.10, −0.11, −0.09)·(1 − e^−6): mean −0.10·(1 − e^−6), standard error 0.01·(1 − e^−6)/√3
    k = 1 - math.exp(-6)
    assert comparison.result.difference == pytest.approx(-0.10 * k, abs=1e-5)
    assert comparison.result.stderr == pytest.approx(0.01 * k / math.sqrt(3), abs=1e-5)
    assert comparison.result.p < 0.01 and comparison.parted_at is not None
    text = groups.describe(comparison, "A", "B")
    assert "paired" in text and "a real difference" in text


def test_groups_with_other_seeds_are_compared_by_welch(tmp_path):
    for seed, v in ((1, 2.0), (2, 2.1)):
        grouped_run(tmp_path, f"a{seed}", "A", seed, v)
    for seed, v in ((7, 2.05), (8, 2.02)):
        grouped_run(tmp_path, f"b{seed}", "B", seed, v)
    a, b = groups.find_groups(sorted(listing.list_runs(tmp_path), key=lambda i: i.name))
    band_a, band_b = (groups.band([groups.val_curve(r.path) for r in g.runs]) for g in (a, b))
    comparison = groups.compare(a, b, band_a, band_b)
    assert not comparison.paired and comparison.result.test == "Welch"
    assert "within the seeds' noise" in groups.describe(comparison, "A", "B")


def test_train_seeds_runs_a_group(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:300]) + "\n")
    env = {**os.environ, "MINIGPT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}
    out = tmp_path / "group"
    proc = subprocess.run([sys.executable, "-m", "minigpt.cli", "train", "--seeds", "3", "--seed", "5",
                           "--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--batch-size", "16",
                           "--steps", "20", "--eval-interval", "10", "--data", str(names), "--out", str(out), "-q"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["seed-5", "seed-6", "seed-7"]
    (group,) = groups.find_groups(listing.list_runs(out))
    assert sorted(group.seeds) == [5, 6, 7] and f"group: {group.name}" in proc.stdout
    assert {r.label for r in group.runs} == {f"gpt d16 L1 lr5e-3 seed {s}" for s in (5, 6, 7)}
    band = groups.band([groups.val_curve(r.path) for r in group.runs])
    assert band.steps == [10, 20] and all(lo < hi for lo, hi in zip(band.low, band.high, strict=True))
