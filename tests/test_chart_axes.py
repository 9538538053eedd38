"""Chart ticks a learner can read (whole steps, round values, engineering notation) and
TensorBoard's smoothing, checked against values worked by hand."""

from __future__ import annotations

import pytest

from tui.common.chart_axes import eng, nice_step, smooth, step_label, step_ticks, tick_labels, value_ticks
from tui.common.loss_chart import log_ticks


def test_step_ticks_are_whole_numbers_never_fractions():
    assert step_ticks(1, 300) == [100, 200, 300]
    assert step_ticks(0, 300) == [0, 100, 200, 300]
    assert step_ticks(165, 3000) == [1000, 2000, 3000]
    assert step_ticks(0, 7) == [0, 2, 4, 6]
    assert step_ticks(0, 1) == [0, 1]
    assert all(isinstance(t, int) for t in step_ticks(0, 12345))
    assert [step_label(t) for t in (0, 2500, 12000, 1_500_000)] == ["0", "2500", "12k", "1.5M"]


def test_value_ticks_are_round_and_inside_the_range():
    assert value_ticks(2.245, 2.454, 4) == [2.3, 2.4]
    assert value_ticks(2.245, 2.454, 5) == [2.25, 2.3, 2.35, 2.4, 2.45]
    assert value_ticks(0, 0.005, 5) == [0.0, 0.001, 0.002, 0.003, 0.004, 0.005]
    assert value_ticks(1.0, 1.0) == [1.0]
    assert nice_step(0.209, 2) == 0.2 and nice_step(3000, 5) == 1000


def test_engineering_notation_for_learning_rates():
    assert [eng(x) for x in (5e-3, 2.5e-3, 2.5e-4, 2.5e-6, 1.0, 999.9, 0.0009999, 12345, -3e-3, 0)] == [
        "5e-3", "2.5e-3", "250e-6", "2.5e-6", "1", "1e3", "1e-3", "12.3e3", "-3e-3", "0"]
    # The "0.00000250" becomes 2.5e-6; tick labels pick the notation by size.
    assert tick_labels([0.0, 0.001, 0.002]) == ["0", "1e-3", "2e-3"]
    assert tick_labels([2.25, 2.3, 2.35]) == ["2.25", "2.30", "2.35"]
    assert tick_labels([2.0, 2.5, 3.0]) == ["2.0", "2.5", "3.0"]


def test_log_axis_ticks():
    assert log_ticks(1e-5, 5e-3, 9) == pytest.approx([1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3])
    assert log_ticks(1e-5, 5e-3, 3) == pytest.approx([1e-5, 1e-4, 1e-3])  # too many: powers of ten only
    assert log_ticks(1.9, 3.3, 4) == pytest.approx([2.0, 2.5, 3.0])


def test_smoothing_is_tensorboards_debiased_moving_average():
    # By hand, weight 0.6: 1 → 1; (0.4·1·0.6 + 0.4·2) / (1 − 0.6²) = 1.04 / 0.64 = 1.625
    assert smooth([1, 2, 3], 0.6) == pytest.approx([1.0, 1.625, 2.3265306])
    assert smooth([5, 1], 0) == [5, 1]
    assert smooth([], 0.9) == []


def test_the_y_axis_leaves_the_initial_loss_above_when_it_would_squash_the_rest():
    from tui.common.loss_chart import focused_top

    falling = [(0, 3.3), (50, 2.6), (100, 2.3), (200, 2.2), (300, 2.15), (400, 2.12), (500, 2.1)]
    top = focused_top(falling, 0, 500, 2.1, 3.3)
    assert 2.6 < top < 2.7  # from the data after the first tenth (2.6), with a margin; not 3.3
    flat = [(0, 2.3), (100, 2.2), (200, 2.15), (300, 2.1)]
    assert focused_top(flat, 0, 300, 2.1, 2.3) == 2.3  # nothing to gain: everything stays in view


def test_a_curve_drawn_under_another_within_a_row_is_named():
    from types import SimpleNamespace

    from tui.training.compare_runs import hidden_under

    chart = SimpleNamespace(size=SimpleNamespace(height=14))
    steps = [0, 100, 200, 300]
    drawn = {"a": (steps, [3.0, 2.5, 2.2, 2.1]), "b": (steps, [3.0, 2.51, 2.21, 2.1]),
             "c": (steps, [3.0, 2.8, 2.7, 2.6])}
    assert hidden_under("a", drawn, chart) == "b"  # b is drawn after a, on the same rows
    assert hidden_under("b", drawn, chart) is None and hidden_under("c", drawn, chart) is None
