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


@dataclass(frozen=True)
class Summary:
    """A group's values as mean ± standard error of the mean, with their count N."""

    mean: float
    stderr: float
    n: int

    def describe(self, n: bool = True) -> str:
        """``2.101 ± 0.0042 (N 3)``; one value has no spread: ``2.101 (N 1)``."""
        spread = f" ± {self.stderr:.2g}" if self.n > 1 else ""
        return f"{self.mean:.3f}{spread}" + (f" (N {self.n})" if n else "")


def summarize(values) -> Summary | None:
    """Mean, standard error (sample sd / √N) and N of ``values``; None for no values."""
    values = [float(v) for v in values]
    if not values:
        return None
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return Summary(statistics.fmean(values), se, len(values))


def t_quantile(p: float, df: float) -> float:
    """The t with P(T ≤ t) = ``p`` for ``df`` degrees of freedom, by bisection on :func:`t_cdf`."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    low, high = -1.0, 1.0
    while t_cdf(low, df) > p:
        low *= 2.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


def seeds_needed(effect: float, alpha: float = 0.05, power: float = 0.8, normal: bool = False) -> int | None:
    """Runs per group a two-sided two-sample t-test needs to find a true difference of ``effect``
    standard deviations (Cohen's d) with probability ``power`` at level ``alpha``.

    The textbook formula n = 2 (z₁₋α/₂ + z_power)² / d² uses the normal distribution
    (``normal=True``: d = 0.5 → 63); with the t distribution's wider tails, solved for n with
    ν = 2n − 2 degrees of freedom, it is 64, as power tables give. None: no difference (d = 0)."""
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must lie strictly between 0 and 1")
    d = abs(effect)
    if d == 0.0 or not math.isfinite(d):
        return None if d == 0.0 else 2
    z = statistics.NormalDist()
    n = 2.0 * (z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) ** 2 / d**2
    if normal:
        return max(2, math.ceil(n))
    for _ in range(50):  # fixed point: ν depends on n; it settles within a few rounds
        df = max(2.0 * n - 2.0, 1.0)
        new = 2.0 * (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) ** 2 / d**2
        if abs(new - n) < 1e-6:
            break
        n = new
    return max(2, math.ceil(n))


def effect_size(a, b) -> float | None:
    """Cohen's d of two groups: the difference of means over their pooled sample sd (None when
    a group has fewer than two values or neither varies)."""
    a, b = [float(v) for v in a], [float(v) for v in b]
    if len(a) < 2 or len(b) < 2:
        return None
    pooled = ((len(a) - 1) * statistics.variance(a) + (len(b) - 1) * statistics.variance(b)) / (len(a) + len(b) - 2)
    if pooled == 0:
        return None
    return (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(pooled)
