"""minigpt.significance against values worked by hand (closed forms of the beta and t distributions,
and Welch's test on small groups computed on paper)."""

from __future__ import annotations

import math
import statistics

import pytest

from minigpt import significance


def test_mean_and_sample_variance():
    assert statistics.fmean([1, 2, 3, 4]) == 2.5  # the t-tests take means and sample variances from here
    assert statistics.variance([1, 2, 3, 4]) == pytest.approx(5 / 3)  # (2.25+0.25+0.25+2.25) / 3
    with pytest.raises(ValueError):
        statistics.variance([1.0])


@pytest.mark.parametrize("a,b,x,expected", [
    (2.0, 1.0, 0.3, 0.3**2),            # I_x(a, 1) = x^a
    (1.0, 3.0, 0.2, 1 - 0.8**3),        # I_x(1, b) = 1 − (1 − x)^b
    (5.0, 5.0, 0.5, 0.5),               # symmetric
    (0.5, 0.5, 0.25, 1 / 3),            # I_x(½, ½) = (2/π)·asin(√x) = (2/π)(π/6)
    (2.0, 3.0, 0.4, 0.5248),            # 6x²(1/2 − 2x/3 + x²/4)·2 = 0.5248 by hand
])
def test_incomplete_beta_closed_forms(a, b, x, expected):
    assert significance.incomplete_beta(a, b, x) == pytest.approx(expected, abs=1e-10)


def test_t_cdf_closed_forms():
    assert significance.t_cdf(1.0, 1) == pytest.approx(0.75)  # ν = 1 is Cauchy: ½ + atan(t)/π
    assert significance.t_cdf(0.0, 7) == pytest.approx(0.5)
    # ν = 2: F(t) = ½ + t / (2√(2 + t²)); at t = 2: ½ + 1/√6
    assert significance.t_cdf(2.0, 2) == pytest.approx(0.5 + 1 / math.sqrt(6))
    assert significance.t_cdf(-2.0, 2) == pytest.approx(0.5 - 1 / math.sqrt(6))
    # ν = 3: F(t) = ½ + (1/π)(t/(√3(1 + t²/3)) + atan(t/√3)); at t = √3: ½ + (1/π)(1/2 + π/4)
    assert significance.t_cdf(math.sqrt(3), 3) == pytest.approx(0.5 + (0.5 + math.pi / 4) / math.pi)
    # the normal limit: 1.959964 is its 97.5% point
    assert significance.t_cdf(1.959964, 1e7) == pytest.approx(0.975, abs=1e-6)


def test_welch_on_two_small_groups_worked_by_hand():
    # means 2 and 5, variances 1 and 1: se = √(1/3 + 1/3), t = −3/√(2/3) = −3.6742, df = 4
    r = significance.welch_t_test([1, 2, 3], [4, 5, 6])
    assert (r.difference, r.df) == (pytest.approx(-3.0), pytest.approx(4.0))
    assert r.t == pytest.approx(-3 / math.sqrt(2 / 3))
    # ν = 4: P(|T| ≥ t) = 1 − x(3 − x²)/2 with x = t/√(4 + t²)... written as the closed form
    x = abs(r.t) / math.sqrt(4 + r.t**2)
    assert r.p == pytest.approx(1 - x * (3 - x * x) / 2)
    assert 0.02 < r.p < 0.03


def test_welch_degrees_of_freedom_with_unequal_spreads():
    # variances 1 (n=3) and 16 (n=3): va = 1/3, vb = 16/3, df = (17/3)² / ((1/9 + 256/9)/2) = 289·2/257
    r = significance.welch_t_test([1, 2, 3], [0, 4, 8])
    assert r.df == pytest.approx(578 / 257)
    assert r.stderr == pytest.approx(math.sqrt(17 / 3))


def test_paired_test_removes_what_the_pairs_share():
    a, b = [10.0, 20.0, 30.0, 40.0], [9.0, 19.2, 28.9, 39.1]
    assert significance.welch_t_test(a, b).p > 0.5  # the seeds' spread hides the difference
    r = significance.paired_t_test(a, b)  # differences 1, .8, 1.1, .9: mean .95, sd 0.1291
    assert r.difference == pytest.approx(0.95)
    assert r.stderr == pytest.approx(math.sqrt((0.0025 + 0.0225 + 0.0225 + 0.0025) / 3 / 4))
    assert r.df == 3 and r.p < 0.001


def test_identical_groups_and_no_spread():
    assert significance.welch_t_test([1, 1], [1, 1]).p == 1.0
    assert significance.paired_t_test([2, 3], [1, 2]).p == 0.0  # the same difference every time


def test_first_parting_needs_the_difference_to_last():
    steps = [100, 200, 300, 400]
    a = [[3.0, 3.1, 2.9], [2.5, 2.6, 2.4], [2.0, 2.1, 1.9], [1.9, 2.0, 1.8]]
    b = [[3.0, 3.2, 2.8], [2.6, 2.3, 2.5], [2.6, 2.4, 2.5], [2.6, 2.7, 2.5]]
    assert significance.first_parting(steps, a, b) == 300
    assert significance.first_parting(steps[:1], a[:1], b[:1]) is None
