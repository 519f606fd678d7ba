"""At a glance: what a step of the steady state costs and why, on one screen of a mail client: step
time (median, p90), GPU idle and its main cause, MFU, what bounds the step, and the three findings
that cost the most time with their advice. Without steps, the whole trace's numbers, so labelled.
The integrity checks that did not pass (trace_integrity) are listed first, and a number that
depends on one is marked unreliable instead of shown as fact (DEPENDS_ON)."""

from __future__ import annotations

from ..page import Page

NAME = "summary"
TITLE = "At a glance"
VIEWS = ("steady_summary", "trace_summary", "findings_by_rule", "model_coverage", "trace_integrity")
TOP_FINDINGS = 3
# The cards' numbers and the integrity checks (trace_integrity.check_name) each one depends on.
_GPU_TIME = ("device_work_analysed", "gpu_work_has_ids")
_STEPS = ("steps_cover_gpu_work", "step_rule_agrees")
DEPENDS_ON = {
    "gpu_idle_pct": _GPU_TIME + _STEPS, "compute_pct": _GPU_TIME, "memcpy_pct": _GPU_TIME,
    "median_step_ns": _STEPS, "mfu_pct": _GPU_TIME + _STEPS, "bound_by": _STEPS + ("clocks_line_up",),
}


def build(page: Page) -> dict:
    whole = page.summary
    findings = page.sql(f"""SELECT rule, severity, occurrences, cost_ns, advice FROM findings_by_rule
                           WHERE trace_id = $trace ORDER BY cost_ns DESC NULLS LAST, rule
                           LIMIT {TOP_FINDINGS}""").to_dicts()
    coverage = page.sql("""SELECT sum(flops_modelled_ns) * 100.0 / nullif(sum(gpu_ns), 0) AS pct
                           FROM model_coverage WHERE trace_id = $trace""").to_dicts()[0]["pct"]
    processes = page.sql("SELECT count(*) AS n FROM steady_summary WHERE trace_id = $trace").to_dicts()[0]["n"]
    failed = page.sql("""SELECT check_name, detail FROM trace_integrity
                         WHERE trace_id = $trace AND NOT passed ORDER BY check_name""").to_dicts()
    names = {f["check_name"] for f in failed}
    unreliable = {metric: [c.replace("_", " ") for c in checks if c in names] for metric, checks in DEPENDS_ON.items()}
    return {"steady": page.steady, "label": page.steady_label, "whole": whole, "findings": findings,
            "flops_coverage_pct": coverage, "processes": processes, "failed_checks": failed,
            "unreliable": {m: c for m, c in unreliable.items() if c}}
