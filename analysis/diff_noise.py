"""Is a step-time change real or step-to-step noise? (`tracelake diff`, docs/diff.md)

Two tests on the per-step wall times of the steady steps of both sides, and the change is "within
noise" when either says so:

1. size: |change of the median| <= the larger interquartile range of the two sides: the change is
   no larger than the spread of the middle half of the steps of either side;
2. Mann-Whitney U (two-sided, normal approximation with the tie correction): p >= 0.01, the two
   sets of steps are not told apart (with few steps, 4 against 4 at most reach p ~ 0.03, so a
   change over fewer steps than that is never called real).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

P_REAL = 0.01  # a p-value under this (and a change over the spread) is a real change


@dataclass
class StepStats:
    steps: int
    median_ns: float
    p90_ns: float
    iqr_ns: float  # p75 - p25
    mean_ns: float

    def as_dict(self) -> dict:
        return {"steps": self.steps, "median_ns": round(self.median_ns), "p90_ns": round(self.p90_ns),
                "iqr_ns": round(self.iqr_ns), "mean_ns": round(self.mean_ns)}


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (DuckDB's quantile_cont, numpy's default)."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def step_stats(wall_ns: list[float]) -> StepStats:
    s = sorted(wall_ns)
    return StepStats(len(s), quantile(s, 0.5), quantile(s, 0.9), quantile(s, 0.75) - quantile(s, 0.25),
                     sum(s) / len(s))


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks_a, ties, i = 0.0, 0.0, 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        rank = (i + j) / 2 + 1  # mean rank of the tied block
        ranks_a += rank * sum(1 for k in range(i, j + 1) if pooled[k][1] == 0)
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    u = ranks_a - n1 * (n1 + 1) / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)  # continuity correction
    return min(1.0, math.erfc(max(z, 0) / math.sqrt(2)))


def verdict(base: list[float], new: list[float]) -> dict:
    """The noise test of a step-time change: {'within_noise', 'p_value', 'spread_ns', 'test'}."""
    sb, sn = step_stats(base), step_stats(new)
    change = sn.median_ns - sb.median_ns
    spread = max(sb.iqr_ns, sn.iqr_ns)
    p = mann_whitney_p(base, new)
    return {"within_noise": abs(change) <= spread or p >= P_REAL, "p_value": p, "spread_ns": round(spread),
            "test": f"|median change| > max IQR and Mann-Whitney U p < {P_REAL}"}
