"""Is a step-time change real, step-to-step noise, or too few steps to tell? (`tracelake diff`,
docs/diff.md)

`verdict` is the one place a diff's verdict is decided; the terminal table, the diff page, the
index page's runs that got slower or faster and `--fail-if` all read its `verdict`:

- "within noise" when the change is under the run-to-run floor: |change of the median| <
  FLOOR_PCT % of the base's median step. Two recordings
     of the same program differ by more than their steps vary within each: the 2-rank recording
     of tests/recorded/record_diff_comm.py and its second recording, made in the same process,
     differ by 1.05 % (-26 us on 2.49 ms steps: the host time between the GPU work, whose own time
     moved by 0.3 %) against an IQR of 11-18 us, and all but one of the second's steps are faster
     than all but one of the first's. The rank test sees only the steps of one recording, so it
     cannot see that. The steps' spread (the larger interquartile range, `spread_ns`) is no test
     of its own: two slow outlier steps among five widen it past a change that every new step
     shows (a 4 ms host sleep in 31 ms steps, tests/test_diff_causes_recorded.py); the rank test
     weighs the overlap of the two sides instead;
- "inconclusive: too few steps to tell" when a larger change is left and the rank test could not
  call any outcome real with this many steps: even if every step of one side were slower than
  every step of the other, its p-value would be >= ALPHA (3 steps against 3: p = 2/20 = 0.1;
  1 step against fewer than 39);
- "slower" or "faster" when the rank test's p < ALPHA, else "within noise".

The rank test is the two-sided Mann-Whitney U (Wilcoxon rank-sum) test with ties at their mean
rank. Its p-value is exact while the two sides hold at most EXACT_MAX_STEPS steps together: the
probability, over every way of dealing the pooled step times to two sides of these sizes (each
equally likely when nothing changed), of a rank sum at least as far from its mean as the one seen
(the distribution is counted by dynamic programming over the ranks, so ties are exact too). At 4
against 4 steps with every new step slower, p = 2/70 = 0.029; at 5 against 5, 2/252 = 0.008.
With more steps it is the normal approximation with the tie correction (no continuity
correction; on 30 against 30 random steps it gave 0.0195 where the exact p is 0.0191).

The samples are one per step: the steps of several ranks (or processes) with the same name and
position are one step of the run (its ranks wait for each other in every collective, so their
walls move together), and count once, at their mean wall time; counting each rank's step would
make N ranks look like N times as many steps and the p-value too small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05  # a change is real when the rank test's two-sided p-value is under this
FLOOR_PCT = 2.0  # changes under this % of the base's median step are run-to-run noise (about 2x the
# largest difference between two recordings of one program measured: 1.05 %, see above)
EXACT_MAX_STEPS = 60  # exact p-values up to this many steps on both sides together
INCONCLUSIVE = "inconclusive: too few steps to tell"
VERDICTS = ("slower", "faster", "within noise", INCONCLUSIVE)


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


def _doubled_ranks(a: list[float], b: list[float]) -> tuple[list[int], int]:
    """Twice the mid-rank of every pooled value (integers: a tied block of ranks i..j gets i + j),
    and twice the rank sum of `a`."""
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks, sum_a, i = [], 0, 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        rank2 = i + j + 2  # (i + 1) + (j + 1)
        ranks += [rank2] * (j - i + 1)
        sum_a += rank2 * sum(1 for k in range(i, j + 1) if pooled[k][1] == 0)
        i = j + 1
    return ranks, sum_a


def rank_test(a: list[float], b: list[float]) -> tuple[float, float, str]:
    """The two-sided Mann-Whitney U test of samples `a` and `b`: (p-value, the smallest p-value any
    dealing of these pooled values to two sides of these sizes could give, 'exact' or 'normal
    approximation')."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0, 1.0, "exact"
    ranks, sum_a = _doubled_ranks(a, b)
    mean2 = n1 * (n1 + n2 + 1)  # twice the mean rank sum of a
    if n1 + n2 <= EXACT_MAX_STEPS:
        # ways[k, s]: the number of ways to pick k of the ranks seen so far with doubled sum s
        top = sum(sorted(ranks)[-n1:])
        ways = np.zeros((n1 + 1, top + 1))
        ways[0, 0] = 1.0
        for r in ranks:
            ways[1:, r:] += ways[:-1, : top + 1 - r].copy()
        dist = ways[n1]
        sums = np.nonzero(dist)[0]
        dev = np.abs(sums - mean2)
        total = dist.sum()
        p = dist[sums[dev >= abs(sum_a - mean2)]].sum() / total
        return float(min(1.0, p)), float(dist[sums[dev == dev.max()]].sum() / total), "exact"
    n = n1 + n2
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    ties = sum(t**3 - t for t in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0, 1.0, "normal approximation"
    z = abs(sum_a - mean2) / 2 / math.sqrt(var)
    # the most extreme rank sum: a's values the lowest (or highest) of the pool
    extreme = max(abs(sum(sorted(ranks)[:n1]) - mean2), abs(sum(sorted(ranks)[-n1:]) - mean2)) / 2
    return (math.erfc(z / math.sqrt(2)), math.erfc(extreme / math.sqrt(var) / math.sqrt(2)),
            "normal approximation")


def verdict(base: list[float], new: list[float], floor_pct: float = FLOOR_PCT) -> dict:
    """The verdict on the step-time change between two sides' step samples (one per step of the
    run): {'verdict' (one of VERDICTS), 'why', 'p_value', 'min_p_value', 'method', 'alpha',
    'spread_ns', 'floor_ns', 'steps', 'test'}."""
    sb, sn = step_stats(base), step_stats(new)
    change = sn.median_ns - sb.median_ns
    spread = max(sb.iqr_ns, sn.iqr_ns)
    floor = floor_pct / 100 * sb.median_ns
    p, min_p, method = rank_test(base, new)
    if abs(change) < floor:
        result, why = "within noise", f"the change is under the run-to-run floor ({floor_pct:g} % of the base median)"
    elif min_p >= ALPHA:
        result, why = INCONCLUSIVE, (f"{len(base)} vs {len(new)} steps: no outcome could reach p < {ALPHA:g} "
                                     f"(smallest possible p = {min_p:.2g})")
    elif p < ALPHA:
        result, why = ("slower" if change > 0 else "faster"), f"p = {p:.2g} < {ALPHA:g}"
    else:
        result, why = "within noise", f"p = {p:.2g} >= {ALPHA:g}: the steps of both sides are not told apart"
    return {"verdict": result, "why": why, "p_value": p, "min_p_value": min_p, "method": method,
            "alpha": ALPHA, "spread_ns": round(spread), "floor_ns": round(floor), "steps": [len(base), len(new)],
            "test": f"real when |median change| >= {floor_pct:g} % of the base median "
                    f"and the two-sided Mann-Whitney U test ({method}) gives p < {ALPHA:g}"}


def real(noise: dict) -> bool:
    """Did `verdict` call the change real (slower or faster)?"""
    return noise["verdict"] in ("slower", "faster")
