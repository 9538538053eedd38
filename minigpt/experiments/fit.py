"""The scaling-law fit L(N) = a·N^(−α) + c, with its quality, in numpy alone (no scipy).

For a fixed floor c the law is a straight line in log space: log(L − c) = log a − α·log N, which
least squares solves exactly. So the fit scans c over [0, min L), solves the line for each, keeps
the c with the smallest squared error in L itself, and polishes (log a, α, c) together with a few
damped Gauss-Newton steps. The floor matters: 30,000 names cannot be predicted much better than
about 1.9 nats a character however big the model, so a pure power law bends on log-log axes.

``straight_line`` checks the course's claim ("a roughly straight line on the log-log plot"): how
much of log L a straight line in log N explains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from minigpt.errors import FitError

MIN_POINTS = 3  # three unknowns: a, α and c
STRAIGHT_R2 = 0.95  # a straight line explaining this much of log L counts as "roughly straight"



@dataclass(frozen=True)
class PowerLawFit:
    a: float
    alpha: float
    c: float
    r2: float  # of L itself
    rmse: float
    n_points: int

    def predict(self, n) -> np.ndarray:
        return self.a * np.asarray(n, dtype=float) ** (-self.alpha) + self.c

    @property
    def exact(self) -> bool:
        """Three points determine three unknowns: the curve passes through them, whatever they are."""
        return self.n_points <= MIN_POINTS

    def describe(self) -> str:
        quality = ("exact through 3 points: more points are needed to judge the fit" if self.exact
                   else f"R² {self.r2:.4f}, rms error {self.rmse:.4f} over {self.n_points} points")
        return f"L(N) = {self.a:.3g}·N^-{self.alpha:.3f} + {self.c:.3f}  ({quality})"


@dataclass(frozen=True)
class StraightLine:
    slope: float  # d log L / d log N (the exponent of a pure power law, negated)
    r2: float  # in log-log space
    n_points: int

    @property
    def roughly_straight(self) -> bool:
        return self.r2 >= STRAIGHT_R2

    def describe(self, floor: float | None = None) -> str:
        verdict = (f"roughly straight, as the course expects (a line explains {self.r2:.1%} of log L)"
                   if self.roughly_straight else
                   f"not a straight line (a line explains only {self.r2:.1%} of log L)")
        if floor is not None and not self.roughly_straight:
            verdict += f": it flattens towards the floor c ≈ {floor:.2f}"
        return f"log-log slope {self.slope:.3f}; {verdict}"


def _points(n, loss) -> tuple[np.ndarray, np.ndarray]:
    n, loss = np.asarray(n, dtype=float), np.asarray(loss, dtype=float)
    if n.shape != loss.shape or n.ndim != 1:
        raise FitError("sizes and losses must be two lists of the same length")
    keep = np.isfinite(n) & np.isfinite(loss) & (n > 0) & (loss > 0)
    return n[keep], loss[keep]


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope and intercept of y against x."""
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    slope = float(((x - xm) * (y - ym)).sum() / sxx) if sxx > 0 else 0.0
    return slope, float(ym - slope * xm)


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)


def straight_line(n, loss) -> StraightLine:
    """A pure power law L = a·N^slope, fitted as a line on log-log axes."""
    n, loss = _points(n, loss)
    if len(n) < 2 or np.unique(n).size < 2:
        raise FitError("a line needs at least two sizes")
    x, y = np.log(n), np.log(loss)
    slope, intercept = _line(x, y)
    return StraightLine(slope, _r2(y, slope * x + intercept), len(n))


def fit_power_law(n, loss, grid: int = 400) -> PowerLawFit:
    """L(N) = a·N^(−α) + c by least squares in L, with 0 ≤ c < min L."""
    n, loss = _points(n, loss)
    if len(n) < MIN_POINTS or np.unique(n).size < MIN_POINTS:
        raise FitError(f"the fit needs at least {MIN_POINTS} different sizes with a finished run, got {len(n)}")
    x = np.log(n)
    top = float(loss.min())

    def solve(c: float) -> tuple[float, float, float]:
        slope, intercept = _line(x, np.log(loss - c))
        a, alpha = math.exp(intercept), -slope
        sse = float(((a * n ** (-alpha) + c - loss) ** 2).sum())
        return sse, a, alpha

    # Scan the floor, finely near min L where the best floors of flattening curves sit.
    candidates = top * (1 - np.geomspace(1.0, 1e-6, grid))
    candidates = np.concatenate(([0.0], candidates))
    best = min((solve(float(c)) + (float(c),) for c in candidates), key=lambda t: t[0])
    _, a, alpha, c = best
    a, alpha, c = _gauss_newton(x, loss, math.log(a), alpha, c, top)
    pred = a * n ** (-alpha) + c
    rmse = float(np.sqrt(((pred - loss) ** 2).mean()))
    return PowerLawFit(a, alpha, c, _r2(loss, pred), rmse, len(n))


def _gauss_newton(x, loss, log_a, alpha, c, top, iterations: int = 50) -> tuple[float, float, float]:
    """Damped Gauss-Newton (Levenberg-Marquardt) on (log a, α, c); c stays in [0, min L)."""
    params = np.array([log_a, alpha, c])

    def residuals(p):
        return np.exp(p[0] - p[1] * x) + p[2] - loss

    sse = float((residuals(params) ** 2).sum())
    damping = 1e-3
    for _ in range(iterations):
        r = residuals(params)
        power = np.exp(params[0] - params[1] * x)
        jac = np.stack([power, -x * power, np.ones_like(x)], axis=1)
        jtj, jtr = jac.T @ jac, jac.T @ r
        improved = False
        for _ in range(10):
            try:
                step = np.linalg.solve(jtj + damping * np.diag(np.diag(jtj) + 1e-12), -jtr)
            except np.linalg.LinAlgError:
                damping *= 10
                continue
            trial = params + step
            trial[2] = min(max(trial[2], 0.0), top * (1 - 1e-9))
            trial_sse = float((residuals(trial) ** 2).sum())
            if trial_sse < sse:
                params, sse, improved = trial, trial_sse, True
                damping = max(damping / 10, 1e-12)
                break
            damping *= 10
        if not improved or sse < 1e-30:
            break
    return float(np.exp(params[0])), float(params[1]), float(params[2])
