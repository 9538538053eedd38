"""Whether a difference between runs is real: Student's t-tests, written out so that nothing needs
scipy (and a learner can read how a p-value is made); means and sample variances are the standard
library's (``statistics.fmean``, ``statistics.variance``).

Two groups of runs (the same configuration over several seeds, ``minigpt train --seeds N``) are
compared with Welch's t-test, which does not assume the groups are equally noisy; when the runs
are paired (seed 1 of one group against seed 1 of the other: the same batches and initial
weights up to the change), the paired test looks at the differences instead, which removes the
noise the pairs share.

The p-value needs the Student-t distribution: P(|T| ≥ t) with ν degrees of freedom is the
regularized incomplete beta function I_x(ν/2, 1/2) at x = ν/(ν + t²), computed here with its
continued fraction (Lentz's method), as in every numerical library.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), evaluated by the modified Lentz method."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), a, b > 0."""
    if a <= 0 or b <= 0:
        raise ValueError("a and b must be positive")
    if not 0.0 <= x <= 1.0:
        raise ValueError("x must lie in [0, 1]")
    if x in (0.0, 1.0):
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges fast for x below (a + 1) / (a + b + 2); above, use I_x(a,b) = 1 − I_{1−x}(b,a).
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))  # P(T ≥ |t|)
    return 1.0 - tail if t > 0 else tail


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|): how often noise alone gives a t at least this far from 0."""
    return min(1.0, 2.0 * t_cdf(-abs(t), df))


@dataclass(frozen=True)
class TestResult:
    """``difference`` = mean(a) − mean(b), its standard error, the t statistic, its degrees of
    freedom and the two-sided p-value; ``test`` names the test."""

    test: str
    difference: float
    stderr: float
    t: float
    df: float
    p: float

    def describe(self, unit: str = "") -> str:
        """One line: ``-0.031 ± 0.008 nats (Welch t = -3.9, df 3.8, p = 0.019)``."""
        return (f"{self.difference:+.4g} ± {self.stderr:.2g}{unit} ({self.test} t = {self.t:.2f}, "
                f"df {self.df:.3g}, p = {self.p:.3g})")


def _result(test: str, diff: float, se: float, df: float) -> TestResult:
    if se == 0:
        t = 0.0 if diff == 0 else math.copysign(math.inf, diff)
        return TestResult(test, diff, 0.0, t, df, 1.0 if diff == 0 else 0.0)
    t = diff / se
    return TestResult(test, diff, se, t, df, t_two_sided_p(t, df))


def welch_t_test(a, b) -> TestResult:
    """Welch's t-test of mean(a) = mean(b) for independent groups of ≥ 2 values each; the
    degrees of freedom come from the Welch–Satterthwaite equation."""
    a, b = list(a), list(b)
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)) if va + vb > 0 else len(a) + len(b) - 2
    return _result("Welch", statistics.fmean(a) - statistics.fmean(b), se, df)


def paired_t_test(a, b) -> TestResult:
    """The paired t-test: a one-sample t-test of the differences a[i] − b[i] (≥ 2 pairs)."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError("paired groups need the same number of values")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    return _result("paired", statistics.fmean(diffs), math.sqrt(statistics.variance(diffs) / len(diffs)), len(diffs) - 1)


def compare_groups(a, b, paired: bool = False) -> TestResult:
    return paired_t_test(a, b) if paired else welch_t_test(a, b)


def first_parting(steps: list[int], a: list[list[float]], b: list[list[float]], paired: bool = False,
                  alpha: float = 0.05) -> int | None:
    """The first step from which the two groups differ beyond their noise (p < ``alpha``) at every
    later step too; ``a[i]``/``b[i]``: the groups' values at ``steps[i]``. None: they never part."""
    parted = None
    for step, xs, ys in zip(steps, a, b, strict=True):
        if len(xs) >= 2 and len(ys) >= 2 and compare_groups(xs, ys, paired).p < alpha:
            parted = step if parted is None else parted
        else:
            parted = None
    return parted
