"""The `perfetto_places` tool: where to look in a trace's Perfetto export (docs/export.md): the
command that writes it (the server writes no file), then the times, counted from the trace's
start as Perfetto's UI counts them, and tracks of its steady steps, of the findings that cost the
most and of the longest GPU idle gaps, as the report pages link them (reports/sections/findings.py,
reports/sections/idle.py)."""

from __future__ import annotations

from ..lake.sql_literal import sql_string
from .answer import Answer
from .lake_session import LakeSession, fetch, resolve_trace

DESCRIPTION = (
    "Where to look in a trace's Perfetto export (Chrome trace JSON that ui.perfetto.dev opens): the "
    "`tracelake export` command that writes it, then the time (seconds from the trace's start, as "
    "Perfetto's UI shows it) and track of its steady steps, of the findings that cost the most, with "
    "their evidence, and of its longest GPU idle gaps, with their cause. `trace`: a trace id or a unique "
    "prefix of one.")
TOP = 10  # findings and gaps listed
ANALYSIS_PROCESS = "tracelake analysis"  # the export's process of tracelake's own tracks (jobs/trace_export.py)


def perfetto_places(session: LakeSession, trace: str) -> str:
    with session.cursor() as cur:
        trace_id = resolve_trace(cur, trace)
        origin_ns = cur.execute("SELECT start_ns FROM traces WHERE trace_id = ?", [trace_id]).fetchone()[0]
        run = cur.execute("""SELECT run_id, count(DISTINCT trace_id) FROM rank_runs WHERE run_id IN
                               (SELECT run_id FROM rank_runs WHERE trace_id = ?) GROUP BY run_id""", [trace_id]).fetchone()
        params = {"trace": trace_id, "origin": origin_ns}
        steady = fetch(cur, """SELECT pid, steps, printf('%.6f', (start_ns - $origin) / 1e9) AS from_s,
                                      printf('%.6f', (end_ns - $origin) / 1e9) AS to_s
                               FROM steady_summary WHERE trace_id = $trace ORDER BY pid""", params, TOP)
        findings = fetch(cur, f"""SELECT rule, printf('%.6f', (example_start_ns - $origin) / 1e9) AS at_s, cost_ns, example
                                  FROM findings_by_rule WHERE trace_id = $trace
                                  ORDER BY cost_ns DESC NULLS LAST, rule LIMIT {TOP + 1}""", params, TOP)
        gaps = fetch(cur, f"""SELECT 'GPU ' || device_id || ' idle' AS thread, printf('%.6f', (start_ns - $origin) / 1e9) AS at_s,
                                     duration_ns, cause, next_op, host_activity
                              FROM largest_gpu_gaps WHERE trace_id = $trace AND size_rank <= {TOP + 1}
                              ORDER BY duration_ns DESC, size_rank""", params, TOP)
    answer = Answer(session.limits)
    out = f"{trace_id}.perfetto.json.gz"
    answer.line(f"write the export: tracelake export --lake {session.path} {trace_id} -o {out}")
    if run and run[1] > 1:
        answer.line(f"its run's {run[1]} ranks in one file, each collective linked across them: "
                    f"tracelake export --lake {session.path} --run {run[0]} -o {run[0]}.perfetto.json.gz")
    answer.line("open it in ui.perfetto.dev; times below are seconds from the trace's start (the `trace start` "
                f"slice at 0), as the UI shows them. tracelake's tracks are threads of the process `{ANALYSIS_PROCESS}`.")
    answer.line("steady steps: thread `steps` (each step and its phase, warm-up or steady); what bounds each step: "
                "thread `critical path`:")
    answer.table(*steady, rest=None)
    answer.line("findings that cost the most: thread `findings`, an instant event at at_s (the example's start) "
                "with its rule, evidence and advice:")
    answer.table(*findings, rest=f'query("SELECT rule, example_start_ns, cost_ns, example FROM findings_by_rule '
                                    f'WHERE trace_id = {sql_string(trace_id)} ORDER BY cost_ns DESC NULLS LAST")')
    answer.line("longest GPU idle gaps: thread `GPU <device> idle` of the same process, a slice from at_s for "
                "duration_ns, with its cause and the operation that ended it:")
    answer.table(*gaps, rest=f'query("SELECT * FROM largest_gpu_gaps WHERE trace_id = {sql_string(trace_id)} '
                                f'ORDER BY size_rank")')
    answer.then(f'headline("{trace_id}") for what the numbers add up to')
    return answer.text()
