"""`tracelake diff --fail-if EXPR`: the conditions a CI job fails on (docs/diff.md).

    EXPR    := METRIC OP VALUE
    METRIC  := step_time | p90 | KIND | KIND:PATTERN      (KIND: kernel, operator, precision, sync,
                                                           idle, memcpy, communication; PATTERN: a
                                                           shell pattern on the cause's name)
    OP      := > | >= | < | <=
    VALUE   := signed number + unit: % | ns | us | ms | s   ('+5%', '+2ms', '-10%')

step_time and p90 compare the median / 90th percentile of the steady steps, and never fire on a
change within noise (diff_noise). KIND is the sum of the causes of that kind; KIND:PATTERN holds
when any one cause of that kind whose name matches does. A percentage is of the base's figure
(a cause that appears from nothing is +inf %). A cause whose |change_ns| is within the steps'
spread (noise.spread_ns) never fires: it is as large as the step-to-step noise.
"""

from __future__ import annotations

import fnmatch
import math
import operator
import re
from dataclasses import dataclass

KINDS = ("kernel", "operator", "precision", "sync", "idle", "memcpy", "communication")
_UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_EXPR = re.compile(r"^\s*([a-z_0-9]+)(?::(.+?))?\s*(>=|<=|>|<)\s*([+-]?\d+(?:\.\d+)?)\s*(%|ns|us|ms|s)\s*$")


class BadCondition(ValueError):
    pass


@dataclass
class Condition:
    text: str
    metric: str
    pattern: str | None
    op: str
    value: float  # ns, or percent when percent
    percent: bool

    def holds(self, change: float, base: float) -> bool:
        if self.percent:
            x = (math.inf if change > 0 else -math.inf if change < 0 else 0.0) if base == 0 else 100 * change / base
        else:
            x = change
        return _OPS[self.op](x, self.value)


def parse(text: str) -> Condition:
    m = _EXPR.match(text)
    if not m:
        raise BadCondition(f"--fail-if {text!r}: not METRIC OP VALUE (e.g. 'step_time > +5%', "
                           f"'kernel:* > +10%', 'idle > +2ms')")
    metric, pattern, op, number, unit = m.groups()
    if metric not in ("step_time", "p90", *KINDS):
        raise BadCondition(f"--fail-if {text!r}: unknown metric {metric!r} (step_time, p90, {', '.join(KINDS)})")
    if pattern and metric in ("step_time", "p90"):
        raise BadCondition(f"--fail-if {text!r}: {metric} takes no ':PATTERN'")
    percent = unit == "%"
    return Condition(text.strip(), metric, pattern, op, float(number) * (1 if percent else _UNITS[unit]), percent)


def fired(cond: Condition, result: dict) -> str | None:
    """One line saying why `cond` holds on the diff `result`, or None."""
    steps, noise = result["steps"], result["noise"]
    if cond.metric in ("step_time", "p90"):
        key = "median_ns" if cond.metric == "step_time" else "p90_ns"
        b, n = steps["base"][key], steps["new"][key]
        if noise["within_noise"] or not cond.holds(n - b, b):
            return None
        return f"{cond.text}: {cond.metric} {_ms(b)} -> {_ms(n)} ({_pct(n - b, b)})"
    causes = [c for c in result["causes"] if c["kind"] == cond.metric
              and abs(c["change_ns"]) > noise["spread_ns"]]
    if cond.pattern is None:
        b = sum(c["evidence"]["base_ns_per_step"] for c in causes)
        n = sum(c["evidence"]["new_ns_per_step"] for c in causes)
        if causes and cond.holds(n - b, b):
            return f"{cond.text}: {cond.metric} {_ms(b)} -> {_ms(n)} per step ({_pct(n - b, b)})"
        return None
    for c in causes:
        b, n = c["evidence"]["base_ns_per_step"], c["evidence"]["new_ns_per_step"]
        if fnmatch.fnmatchcase(c["name"], cond.pattern) and cond.holds(n - b, b):
            return f"{cond.text}: {c['kind']} {c['name'][:80]} {_ms(b)} -> {_ms(n)} per step ({_pct(n - b, b)})"
    return None


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _pct(change: float, base: float) -> str:
    return "new" if base == 0 else f"{100 * change / base:+.1f} %"
