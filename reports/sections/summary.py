"""At a glance: what a step of the steady state costs and why, on one screen of a mail client: step
time (median, p90), GPU idle and its main cause, MFU, what bounds the step, and the three findings
that cost the most time with their advice. Without steps, the whole trace's numbers, so labelled."""

from __future__ import annotations

from ..page import Page

NAME = "summary"
TITLE = "At a glance"
VIEWS = ("steady_summary", "trace_summary", "findings_by_rule", "model_coverage")
TOP_FINDINGS = 3


def build(page: Page) -> dict:
    whole = page.summary
    findings = page.sql(f"""SELECT rule, severity, occurrences, total_ns, advice FROM findings_by_rule
                           WHERE trace_id = $trace ORDER BY total_ns DESC NULLS LAST, rule
                           LIMIT {TOP_FINDINGS}""").to_dicts()
    coverage = page.sql("""SELECT sum(flops_modelled_ns) * 100.0 / nullif(sum(gpu_ns), 0) AS pct
                           FROM model_coverage WHERE trace_id = $trace""").to_dicts()[0]["pct"]
    processes = page.sql("SELECT count(*) AS n FROM steady_summary WHERE trace_id = $trace").to_dicts()[0]["n"]
    return {"steady": page.steady, "label": page.steady_label, "whole": whole, "findings": findings,
            "flops_coverage_pct": coverage, "processes": processes}
