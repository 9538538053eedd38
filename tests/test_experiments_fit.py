"""The scaling-law fit L(N) = a·N^(−α) + c on synthetic data with a known exponent and floor."""

from __future__ import annotations

import numpy as np
import pytest

from minigpt.experiments.fit import FitError, fit_power_law, straight_line


def test_recovers_a_known_law_exactly():
    n = np.geomspace(1e3, 1e7, 6)
    loss = 12.0 * n ** -0.35 + 1.9
    fit = fit_power_law(n, loss)
    assert fit.alpha == pytest.approx(0.35, abs=1e-6)
    assert fit.c == pytest.approx(1.9, abs=1e-6)
    assert fit.a == pytest.approx(12.0, rel=1e-5)
    assert fit.r2 == pytest.approx(1.0) and fit.rmse < 1e-9 and not fit.exact


def test_recovers_the_exponent_through_noise():
    rng = np.random.default_rng(7)
    n = np.geomspace(5e3, 5e6, 8)
    loss = 30.0 * n ** -0.5 + 1.95
    noisy = loss * (1 + 0.002 * rng.standard_normal(n.size))
    fit = fit_power_law(n, noisy)
    assert abs(fit.alpha - 0.5) < 0.05 and abs(fit.c - 1.95) < 0.02
    assert fit.r2 > 0.99


def test_a_law_without_floor_is_a_straight_line_and_fits_with_c_near_zero():
    n = np.array([1e3, 1e4, 1e5, 1e6])
    loss = 5.0 * n ** -0.1
    line = straight_line(n, loss)
    assert line.slope == pytest.approx(-0.1) and line.r2 == pytest.approx(1.0) and line.roughly_straight
    fit = fit_power_law(n, loss)
    assert fit.alpha == pytest.approx(0.1, abs=1e-3) and fit.c < 1e-3


def test_a_floor_bends_the_log_log_line():
    # The course's claim fails on a small dataset: most of the curve sits near its floor.
    n = np.geomspace(1e3, 1e7, 6)
    line = straight_line(n, 12.0 * n ** -0.35 + 1.9)
    assert not line.roughly_straight and "floor c ≈ 1.90" in line.describe(1.9)


def test_three_points_are_fitted_exactly_and_said_to_be():
    n = [1e3, 1e4, 1e5]
    loss = [2.0 * x ** -0.3 + 1.0 for x in n]
    fit = fit_power_law(n, loss)
    assert fit.exact and "more points are needed" in fit.describe()
    assert fit.predict(n) == pytest.approx(loss, abs=1e-6)


@pytest.mark.parametrize("n, loss, words", [
    ([1e3, 1e4], [2.0, 1.9], "at least 3"),
    ([1e3, 1e3, 1e3], [2.0, 1.9, 1.8], "at least 3 different sizes"),
    ([1e3, -1, 1e5, float("nan")], [2.0, 1.9, 1.8, 1.7], "at least 3"),
])
def test_too_few_usable_points_are_refused(n, loss, words):
    with pytest.raises(FitError, match=words):
        fit_power_law(n, loss)
