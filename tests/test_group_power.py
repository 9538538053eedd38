"""Groups that answer "is it real?" (issue 50, item 4): the seeds a t-test needs, mean ± standard
error and N of the final losses, time-budget groups aligned on the fraction of their budget, the
CLI's group summary, unique legend names and the runs list's group column."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from click.testing import CliRunner

from minigpt import paths, significance
from minigpt.cli.main import main
from minigpt.experiments import groups
from minigpt.runs import listing
from tests.helpers.run_fixtures import grouped_run, time_budget_groups, write_run
from tui.training.compare_runs import unique_labels
from tui.training.runs import group_tags, row_for


def test_seeds_needed_matches_the_power_tables():
    # Cohen's tables (α 0.05 two-sided, power 0.8): d 0.5 → 64 per group, d 0.8 → 26; the normal
    # approximation 2 (1.96 + 0.8416)² / 0.25 = 62.8 → 63.
    assert significance.seeds_needed(0.5) == 64
    assert significance.seeds_needed(-0.8) == 26
    assert significance.seeds_needed(0.5, normal=True) == 63
    assert significance.seeds_needed(0.0) is None
    assert significance.t_quantile(0.975, 10) == pytest.approx(2.2281, abs=1e-4)  # the t table's value
    with pytest.raises(ValueError):
        significance.seeds_needed(0.5, power=1.0)


def test_summary_is_mean_standard_error_and_n():
    s = significance.summarize([2.0, 2.1, 2.3])
    assert s.mean == pytest.approx(2.1333333) and s.n == 3
    assert s.stderr == pytest.approx(statistics.stdev([2.0, 2.1, 2.3]) / math.sqrt(3))
    assert s.describe() == f"2.133 ± {s.stderr:.2g} (N 3)" and s.describe(n=False) == f"2.133 ± {s.stderr:.2g}"
    assert significance.summarize([]) is None and significance.summarize([1.5]).describe() == "1.500 (N 1)"
    # Cohen's d: difference over the pooled sd (here both sds are 0.1)
    assert significance.effect_size([1.0, 1.1, 1.2], [1.2, 1.3, 1.4]) == pytest.approx(-2.0)


def test_a_time_budget_group_is_aligned_on_its_budget(tmp_path):
    a, b = time_budget_groups(tmp_path)
    assert groups.is_time_group(a)
    # Over steps the three seeds share no evaluation: the old band was empty.
    assert groups.band([groups.val_curve(r.path) for r in a.runs]).steps == []
    band_a, band_b = groups.group_band(a), groups.group_band(b)
    assert band_a.axis == "budget" and band_a.steps and band_a.steps[-1] == 1.0
    # Interpolated by hand: seed 1 evaluates every 40 steps (1.2 s of 6 s), so at 0.25 of the budget
    # (1.5 s, step 50) it lies a quarter of the way from its step-40 to its step-80 value.
    runs_a = {r.name: r for r in a.runs}
    curve = groups.budget_curve(runs_a["a1"].path, 6.0)
    (x0, y0), (x1, y1) = curve[0], curve[1]
    assert (x0, x1) == (pytest.approx(0.2), pytest.approx(0.4))
    at = groups.interpolate(curve, [0.25])[0.25]
    assert at == pytest.approx(y0 + (y1 - y0) * 0.25)
    comparison = groups.compare(a, b, band_a, band_b)
    assert comparison.axis == "budget" and comparison.step == 1.0 and comparison.paired
    text = groups.describe(comparison, "A", "B")
    assert "at 100% of the time budget" in text and "seeds per group would detect it" in text
    finals = groups.finals(a)
    assert finals.val.n == 3 and finals.val.mean == pytest.approx(2.02)
    assert finals.test.mean == pytest.approx(2.00)  # the fixture's test loss is best_val − 0.02


def test_short_time_budget_runs_that_evaluate_only_at_their_end_are_compared_on_their_finals(tmp_path):
    """As real 6-second seeds did (one evaluation each, at 47 to 92 steps): no point of the budget
    grid holds two runs, so the finals are compared (before: "need two runs each at a shared
    evaluation" and no seeds needed)."""
    from tests.helpers.run_fixtures import time_run

    for seed, steps in ((1, 180), (2, 190), (3, 220)):  # 90 %, 95 % and 110 % of the budget
        time_run(tmp_path, f"a{seed}", "A", seed, 2.00 + seed / 100, steps, steps)
        time_run(tmp_path, f"b{seed}", "B", seed, 2.10 + seed / 50, steps, steps)
    a, b = groups.find_groups(sorted(listing.list_runs(tmp_path), key=lambda i: i.name))
    band_a, band_b = groups.group_band(a), groups.group_band(b)
    assert not set(band_a.steps) & set(band_b.steps) or all(len(v) < 2 for v in band_a.values)
    comparison = groups.compare(a, b, band_a, band_b)
    va, vb = groups.finals(a).val_values, groups.finals(b).val_values
    assert comparison.paired and comparison.result == significance.compare_groups(va, vb, True)
    assert comparison.seeds_needed == significance.seeds_needed(significance.effect_size(va, vb))
    assert "at 100% of the time budget" in groups.describe(comparison, "A", "B")


def test_interpolation_never_extrapolates_before_the_first_evaluation():
    points = [(0.3, 3.0), (0.6, 2.0), (0.98, 1.5)]
    got = groups.interpolate(points, [0.2, 0.3, 0.45, 1.0])
    assert 0.2 not in got and got[0.3] == 3.0 and got[0.45] == pytest.approx(2.5)
    assert got[1.0] == 1.5  # the final evaluation holds up to one grid cell further


def test_cli_prints_each_groups_finals_and_the_seeds_needed():
    time_budget_groups(paths.runs_dir())
    result = CliRunner().invoke(main, ["runs", "--groups"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(ln.startswith("A (time budget): 3 runs · final val 2.020 ± ") and "(N 3)" in ln for ln in lines)
    assert "seeds per group would detect it" in result.output
    data = json.loads(CliRunner().invoke(main, ["runs", "--groups", "--json"]).output)
    first = data["groups"][0]
    # finals 2.01, 2.02, 2.03: sd 0.01, standard error 0.01 / √3
    assert first["final_val"]["n"] == 3 and first["final_val"]["stderr"] == pytest.approx(0.01 / math.sqrt(3))
    assert data["comparison"]["seeds_needed"] == significance.seeds_needed(
        significance.effect_size(*[groups.finals(g).val_values for g in groups.find_groups(listing.list_runs())]))


def test_legend_names_stay_apart():
    cut = unique_labels(["gpt d64 L4 lr5e-3 ×3 (20261203-141805)", "gpt d64 L4 lr5e-3 ×3 (20261203-141905)"])
    assert cut[0] != cut[1] and all(len(c) <= 27 for c in cut)
    assert cut[0].endswith("141805)")
    assert unique_labels(["a", "a", "b"]) == ["a", "a #2", "b"]


def test_the_runs_list_has_a_group_column(tmp_path):
    grouped_run(tmp_path, "a1", "gpt ×2 (a1)", 1, 2.0)
    grouped_run(tmp_path, "a2", "gpt ×2 (a1)", 2, 2.1)
    write_run(tmp_path, "loose")
    infos = sorted(listing.list_runs(tmp_path), key=lambda i: i.name)
    tags = group_tags(infos)
    assert tags == {"gpt ×2 (a1)": "g1"}
    rows = {i.name: row_for(i, group_tag=tags.get(i.group, "–")) for i in infos}
    assert rows["a1"][6] == rows["a2"][6] == "g1" and rows["loose"][6] == "–"
