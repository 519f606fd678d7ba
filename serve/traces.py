"""The `list_traces` tool: the lake's traces, grouped by run (the rank files of one distributed run
share a run_id: rank_runs), with their GPU, source, steps and step time (trace_summary,
steady_summary)."""

from __future__ import annotations

import json

from .answer import Answer
from .lake_session import LakeSession, fetch

DESCRIPTION = (
    "List the lake's traces: run (the ranks of a distributed run share a run_id), trace id, file, source "
    "(nsys or pytorch), GPU, rank, steady steps, median step time (ns) and GPU idle in the steady steps (%). "
    "`contains` keeps the traces whose id, file or run holds that text; `offset` skips that many rows "
    "(the next page).")

# steps: the steady steps of every process (warm-up left out); median_step_ns over them, all processes
_SQL = """
WITH runs AS (SELECT trace_id, min(run_id) AS run_id FROM rank_runs GROUP BY trace_id),
     steady AS (SELECT trace_id, sum(steps) AS steady_steps FROM steady_summary GROUP BY trace_id)
SELECT coalesce(r.run_id, s.trace_id) AS run_id, s.trace_id, s.file_name, s.source, s.gpu_names, s.rank,
       coalesce(st.steady_steps, 0) AS steady_steps, s.median_step_ns, round(s.steady_idle_pct, 1) AS steady_idle_pct
FROM trace_summary s LEFT JOIN runs r USING (trace_id) LEFT JOIN steady st USING (trace_id)
WHERE $contains = '' OR contains(lower(s.trace_id || ' ' || s.file_name || ' ' || coalesce(r.run_id, '')), lower($contains))
ORDER BY run_id, s.rank NULLS FIRST, s.trace_id
"""


def list_traces(session: LakeSession, contains: str = "", offset: int = 0) -> str:
    limits = session.limits
    with session.cursor() as cur:
        count = cur.execute("SELECT count(*) FROM traces").fetchone()[0]
        columns, rows, more = fetch(cur, f"{_SQL} LIMIT {limits.max_rows + 1} OFFSET {max(0, offset)}",
                                    {"contains": contains}, limits.max_rows)
    answer = Answer(limits)
    answer.line(f"the lake {session.path} holds {count} traces" + (f"; {contains!r} names these" if contains else "")
                + (f"; rows from {offset + 1}" if offset else ""))
    answer.table(columns, rows, more, f"list_traces(contains={json.dumps(contains)}, offset={offset + len(rows)})")
    answer.then(f'headline("{rows[0][1]}") for a trace\'s step time, what bounds it and its findings' if rows
                else 'list_traces() for every trace')
    return answer.text()
