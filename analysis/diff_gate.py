"""`tracelake diff --fail-if EXPR`: the conditions a CI job fails on (docs/diff.md).

    EXPR    := METRIC OP VALUE
    METRIC  := step_time | p90 | KIND | KIND:PATTERN      (KIND: kernel, operator, precision, sync,
                                                           idle, memcpy, communication; PATTERN: a
                                                           shell pattern on the cause's name)
    OP      := > | >= | < | <=
    VALUE   := signed number + unit: % | ns | us | ms | s   ('+5%', '+2ms', '-10%')

step_time and p90 compare the median / 90th percentile of the steady steps, and fire only when
the diff's verdict (diff_noise.verdict) is real, slower or faster; on an inconclusive verdict (too
few steps to tell) they do not fire but are reported as undecided. KIND is the sum of the causes
of that kind; KIND:PATTERN holds when any one cause of that kind whose name matches does. A
percentage is of the base's figure (a cause that appears from nothing is +inf %). Only causes
beyond the noise count: those present on one side only (a call, kernel or gap that appears or
disappears is no step-to-step variation), and those whose |change_ns| exceeds the steps' spread
(noise.spread_ns). Each line says which verdict or which of the two it used.
"""

from __future__ import annotations

import fnmatch
import math
import operator
import re
from dataclasses import dataclass

from . import diff_causes, diff_noise

KINDS = ("kernel", "operator", "precision", *diff_causes.HOST_KINDS, "memcpy", "communication")
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


@dataclass
class Outcome:
    failed: bool  # the condition holds (else it could not be decided)
    line: str  # why, with the verdict it used


def check(cond: Condition, result: dict) -> Outcome | None:
    """Does `cond` hold on the diff `result`? None when it does not (or not beyond the noise);
    an Outcome that failed, or one that could not be decided (a step-time condition on an
    inconclusive verdict)."""
    steps, noise = result["steps"], result["noise"]
    if cond.metric in ("step_time", "p90"):
        key = "median_ns" if cond.metric == "step_time" else "p90_ns"
        b, n = steps["base"][key], steps["new"][key]
        if not cond.holds(n - b, b):
            return None
        said = f"{cond.text}: {cond.metric} {_ms(b)} -> {_ms(n)} ({_pct(n - b, b)}); verdict {noise['verdict']}"
        if diff_noise.real(noise):
            return Outcome(True, f"{said} ({noise['why']})")
        if noise["verdict"] == diff_noise.INCONCLUSIVE:
            return Outcome(False, f"{said} ({noise['why']}): not decided")
        return None
    causes = [c for c in result["causes"] if c["kind"] == cond.metric and _beyond_noise(c, noise)]
    if cond.pattern is None:
        b = sum(c["evidence"]["base_ns_per_step"] for c in causes)
        n = sum(c["evidence"]["new_ns_per_step"] for c in causes)
        if causes and cond.holds(n - b, b):
            return Outcome(True, f"{cond.text}: {cond.metric} {_ms(b)} -> {_ms(n)} per step ({_pct(n - b, b)}; "
                                 f"{len(causes)} causes beyond the noise: {_why(causes[0], noise)})")
        return None
    for c in causes:
        b, n = c["evidence"]["base_ns_per_step"], c["evidence"]["new_ns_per_step"]
        if fnmatch.fnmatchcase(c["name"], cond.pattern) and cond.holds(n - b, b):
            return Outcome(True, f"{cond.text}: {c['kind']} {c['name'][:80]} {_ms(b)} -> {_ms(n)} per step "
                                 f"({_pct(n - b, b)}; {_why(c, noise)})")
    return None


def _beyond_noise(cause: dict, noise: dict) -> bool:
    ev = cause["evidence"]
    return (ev["base_ns_per_step"] == 0) != (ev["new_ns_per_step"] == 0) or abs(cause["change_ns"]) > noise["spread_ns"]


def _why(cause: dict, noise: dict) -> str:
    ev = cause["evidence"]
    if ev["base_ns_per_step"] == 0 and ev["new_ns_per_step"] != 0:
        return "absent from base"
    if ev["new_ns_per_step"] == 0 and ev["base_ns_per_step"] != 0:
        return "absent from new"
    return f"beyond the steps' spread {_ms(noise['spread_ns'])}"


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _pct(change: float, base: float) -> str:
    return "new" if base == 0 else f"{100 * change / base:+.1f} %"
