"""Is a step-time change real or step-to-step noise? (`tracelake diff`, docs/diff.md)

Three tests on the wall times of the steady steps of both sides, and the change is "within noise"
when any says so:

1. size: |change of the median| <= the larger interquartile range of the two sides: the change is
   no larger than the spread of the middle half of the steps of either side;
2. Mann-Whitney U (two-sided, normal approximation with the tie correction): p >= 0.01, the two
   sets of steps are not told apart (with few steps, 4 against 4 at most reach p ~ 0.03, so a
   change over fewer steps than that is never called real);
3. run to run: |change of the median| < FLOOR_PCT % of the base's median step. Two recordings of
   the same program differ by more than their steps vary within each: the 2-rank recording of
   tests/recorded/record_diff_comm.py and its second recording, made in the same process, differ by
   1.05 % (-26 us on 2.49 ms steps: the host time between the GPU work, whose own time moved by
   0.3 %) against an IQR of 11-18 us, and all but one of the second's steps are faster than all but
   one of the first's. Tests 1 and 2 see only the steps of one recording, so they cannot see that.

The samples are one per step: the steps of several ranks (or processes) with the same name and
position are one step of the run (its ranks wait for each other in every collective, so their
walls move together), and count once, at their mean wall time; counting each rank's step would
make N ranks look like N times as many steps and the p-value too small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

P_REAL = 0.01  # a p-value under this (and a change over the spread and the floor) is a real change
FLOOR_PCT = 2.0  # changes under this % of the base's median step are run-to-run noise (about 2x the
# largest difference between two recordings of one program measured: 1.05 %, see above)


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


def verdict(base: list[float], new: list[float], floor_pct: float = FLOOR_PCT) -> dict:
    """The noise test of a step-time change between two sides' step samples (one per step of the run):
    {'within_noise', 'p_value', 'spread_ns', 'floor_ns', 'steps', 'test'}."""
    sb, sn = step_stats(base), step_stats(new)
    change = sn.median_ns - sb.median_ns
    spread = max(sb.iqr_ns, sn.iqr_ns)
    floor = floor_pct / 100 * sb.median_ns
    p = mann_whitney_p(base, new)
    return {"within_noise": abs(change) <= spread or p >= P_REAL or abs(change) < floor, "p_value": p,
            "spread_ns": round(spread), "floor_ns": round(floor), "steps": [len(base), len(new)],
            "test": f"real when |median change| > max IQR, Mann-Whitney U p < {P_REAL} and "
                    f"|median change| >= {floor_pct:g}% of the base median"}
