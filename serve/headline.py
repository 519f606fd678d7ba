"""The `headline` tool: a trace's summary card, as its report page opens (reports/sections/summary.py):
the steady state's step time and what bounds it, GPU idle and what the host did meanwhile, MFU, the
findings that cost the most time with their advice, and the integrity checks that did not pass.
Each number is named by its view's column (units in the name), the view it comes from said once."""

from __future__ import annotations

from ..lake.sql_literal import sql_string
from .answer import Answer, cell
from .lake_session import LakeSession, fetch, resolve_trace

DESCRIPTION = (
    "A trace's headline, as its report page opens: step time of the steady state (median, p90), what "
    "bounds the step (critical path), GPU idle and its causes, MFU, the findings that cost the most time "
    "with their advice, and failed integrity checks. `trace` is a trace id or a unique prefix of one "
    "(list_traces).")
TOP_FINDINGS = 3
TOP_IDLE_CAUSES = 5


def headline(session: LakeSession, trace: str) -> str:
    with session.cursor() as cur:
        trace_id = resolve_trace(cur, trace)
        whole = _rows(cur, "SELECT * FROM trace_summary WHERE trace_id = ?", [trace_id])[0]
        steady = _rows(cur, "SELECT * FROM steady_summary WHERE trace_id = ? ORDER BY pid", [trace_id])
        idle = (_idle_by_host_activity(cur, trace_id, steady[0]["pid"]) if steady
                else fetch(cur, f"""SELECT cause, gaps, idle_ns FROM idle_cause_summary WHERE trace_id = ?
                                    ORDER BY idle_ns DESC LIMIT {TOP_IDLE_CAUSES}""", [trace_id]))
        findings = fetch(cur, f"""SELECT rule, severity, occurrences, cost_ns, advice FROM findings_by_rule
                                  WHERE trace_id = ? ORDER BY cost_ns DESC NULLS LAST, rule
                                  LIMIT {TOP_FINDINGS}""", [trace_id])
        failed = fetch(cur, """SELECT check_name, detail FROM trace_integrity WHERE trace_id = ? AND NOT passed
                               ORDER BY check_name""", [trace_id])[1]
    answer = Answer(session.limits)
    gpus = ", ".join(whole["gpu_names"] or []) or "unnamed"
    answer.line(f"trace {trace_id}: {whole['file_name']} ({whole['source']}; GPU {gpus}; rank {cell(whole['rank'], 20)}; "
                f"duration_ns = {whole['duration_ns']} ({_ms(whole['duration_ns'])}))")
    if failed:
        answer.line("integrity checks that did not pass (trace_integrity): the numbers that depend on them are "
                    "unreliable: " + "; ".join(f"{name}: {detail}" for name, detail in failed))
    if steady:
        _steady_lines(answer, steady, whole)
        answer.line("GPU idle inside the steady steps by what the launching thread did (steady_idle; "
                    "pct_of_idle: share of the steps' idle time):")
    else:
        answer.line("no steps found: the numbers below are of the whole trace, start-up included (trace_summary)")
        answer.line(f"GPU idle: trace_idle_pct = {cell(whole['trace_idle_pct'], 20)} %; compute_pct = "
                    f"{cell(whole['compute_pct'], 20)} %; memcpy_pct = {cell(whole['memcpy_pct'], 20)} %")
        answer.line("GPU idle by cause, stream time (idle_cause_summary):")
    answer.table(*idle, rest=None)
    answer.line(f"findings: {whole['findings']} in all; those that cost the GPU the most time (findings_by_rule):")
    answer.table(*findings, rest=None)
    answer.then(f'query("SELECT rule, severity, occurrences, cost_ns, example, advice FROM findings_by_rule '
                f'WHERE trace_id = {sql_string(trace_id)} ORDER BY cost_ns DESC NULLS LAST") for every finding')
    answer.then(f'perfetto_places("{trace_id}") for where to look in its Perfetto export')
    return answer.text()


def _steady_lines(answer: Answer, steady: list[dict], whole: dict) -> None:
    s = steady[0]
    who = f" of process {s['pid']} ({len(steady)} processes with steps; the others: steady_summary)" if len(steady) > 1 else ""
    warm = f" after {s['warmup_steps']} warm-up steps (warmup_ns = {s['warmup_ns']})" if s["warmup_steps"] else ""
    answer.line(f"window: the steady state{who}: {s['steps']} steps{warm}, step rule {s['step_rule']}; "
                f"startup_ns = {s['startup_ns']} before it (steady_summary)")
    host = (f"; the host's range median_host_step_ns = {s['median_host_step_ns']} ({_ms(s['median_host_step_ns'])})"
            if s["median_host_step_ns"] is not None else "")
    answer.line(f"step time: median_step_ns = {cell(s['median_step_ns'], 30)} ({_ms(s['median_step_ns'])}), "
                f"p90_step_ns = {cell(s['p90_step_ns'], 30)} ({_ms(s['p90_step_ns'])}), "
                f"step_time_basis = {s['step_time_basis']}{host}")
    if (s["profiler_inflation_pct"] or 0) > 10:
        answer.line(f"the profiler lengthened the step by profiler_inflation_pct = {cell(s['profiler_inflation_pct'], 20)} %: "
                    f"est_step_without_profiler_ns = {cell(s['est_step_without_profiler_ns'], 30)}")
    if s["bound_by"] and s["bound_by_basis"] == "gpu_idle":
        answer.line(f"bounds the step: bound_by = {s['bound_by']} (bound_by_basis = gpu_idle: the GPU waits "
                    f"bound_by_pct = {cell(s['bound_by_pct'], 20)} % of the step for it)")
    elif s["bound_by"]:
        answer.line(f"bounds the step: bound_by = {s['bound_by']} (bound_by_pct = {cell(s['bound_by_pct'], 20)} % of "
                    f"the critical path; the path covers path_pct_of_step = {cell(s['path_pct_of_step'], 20)} % of the step)")
    else:
        answer.line("bounds the step: unknown (no critical path)")
    cause = (f"; main_idle_cause = {s['main_idle_cause']} (main_idle_cause_pct = "
             f"{cell(s['main_idle_cause_pct'], 20)} % of it)" if s["main_idle_cause"] else "")
    answer.line(f"GPU idle: gpu_idle_pct = {cell(s['gpu_idle_pct'], 20)} % of the steady steps{cause}; "
                f"whole trace, start-up included: trace_idle_pct = {cell(whole['trace_idle_pct'], 20)} %")
    mfu = (f"unreliable ({s['mfu_unreliable']})" if s["mfu_unreliable"]
           else f"mfu_pct = {cell(s['mfu_pct'], 20)} %" if s["mfu_pct"] is not None else "none (no FLOPs model)")
    answer.line(f"MFU: {mfu}; compute_pct = {cell(s['compute_pct'], 20)} %, communication_pct = "
                f"{cell(s['communication_pct'], 20)} %, memcpy_pct = {cell(s['memcpy_pct'], 20)} % of the steady steps")


def _idle_by_host_activity(cur, trace_id: str, pid: int) -> tuple[list[str], list[tuple], bool]:
    return fetch(cur, f"""SELECT kind, name, gaps, idle_ns, round(idle_ns * 100.0 / sum(idle_ns) OVER (), 1) AS pct_of_idle
                          FROM steady_idle WHERE trace_id = ? AND pid = ?
                          ORDER BY idle_ns DESC, kind, name LIMIT {TOP_IDLE_CAUSES}""", [trace_id, pid])


def _rows(cur, sql: str, params: list) -> list[dict]:
    columns, rows, _ = fetch(cur, sql, params)
    return [dict(zip(columns, row)) for row in rows]


def _ms(ns) -> str:
    return "NULL" if ns is None else f"{ns / 1e6:,.3f} ms"
