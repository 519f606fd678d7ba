"""`tracelake export --run`: every rank of a distributed run in one Chrome trace-event file, each
rank's events as `tracelake export` writes them for its trace (sql/analysis/chrome_trace_events.sql)
with their processes kept apart, and each collective instance's ranks linked by a flow.

Perfetto keys a process by its pid and a legacy flow by (id, cat, name), so the ranks' events
are renumbered: each (rank's trace, pid) gets a pid of its own (the rank's processes, then its
GPUs, then its 'tracelake analysis' process, rank by rank), named 'rank r · GPU d' and so on, and
the launch flows' ids (ac2g: correlation ids, which repeat across ranks) get the trace's place
in the upper 32 bits. Ranks whose traces have different clock offsets (traces.clock_offset_ns)
are shifted onto the run's common clock, and so is a trace whose clock the collectives show to be
off (rank_clock_offsets.applied_offset_ns). A collective instance (collective_flow_points) is one
flow, id = instance, cat 'collective': 's' on the kernel of the rank that arrived first, 't'
on the next ones, 'f' on the last, in order of arrival (Perfetto reads a flow in time order)."""

from __future__ import annotations

from pathlib import Path

from ..lake.sql_literal import sql_string
from .trace_export import ANALYSIS_PID, write_document

GPU_CATS = "('kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_user_annotation')"


def run_traces(con, run_id: str) -> list[tuple[str, int, int]]:
    """(trace_id, lowest rank, ranks) of each trace of the run, by rank."""
    return con.execute("""SELECT trace_id, min(rank), count(DISTINCT rank) FROM rank_runs WHERE run_id = ?
                          GROUP BY trace_id ORDER BY min(rank), trace_id""", [run_id]).fetchall()


def resolve_run(con, wanted: str) -> tuple[str | None, str]:
    """The run `wanted` names: a run id, a unique part of one, or a trace id (or unique prefix) of
    one of its ranks. (run id, '') or (None, why not)."""
    runs = sorted(r[0] for r in con.execute("SELECT DISTINCT run_id FROM rank_runs").fetchall())
    of_trace = dict(con.execute("SELECT trace_id, any_value(run_id) FROM rank_runs GROUP BY 1").fetchall())
    if wanted in runs:
        return wanted, ""
    by_trace = {of_trace[t] for t in of_trace if t == wanted} or {of_trace[t] for t in of_trace if t.startswith(wanted)}
    matches = by_trace or {r for r in runs if wanted in r}
    if len(matches) == 1:
        return matches.pop(), ""
    if not runs:
        return None, "the lake holds no distributed run (no trace with communication kernels)"
    return None, f"--run {wanted!r} matches {len(matches)} runs; runs: {', '.join(runs[:10])}"


def write_run(con, run_id: str, out: str | Path) -> tuple[int, int]:
    """Write the run's ranks to `out` (gzip when it ends in .gz); returns (events, collective flows)."""
    members = run_traces(con, run_id)
    con.execute("CREATE OR REPLACE TEMP TABLE _run_export (member INTEGER, ts_ns BIGINT, pid BIGINT, event JSON)")
    for i, (trace_id, _, _) in enumerate(members):
        con.execute("""INSERT INTO _run_export SELECT ?, ts_ns, CAST(json_extract_string(event, '$.pid') AS BIGINT), event
                       FROM chrome_trace_events(?)""", [i, trace_id])
    con.execute("CREATE OR REPLACE TEMP TABLE _run_members (member INTEGER, trace_id VARCHAR, label VARCHAR)")
    con.executemany("INSERT INTO _run_members VALUES (?, ?, ?)",
                    [(i, t, f"rank {rank}" if ranks == 1 else t) for i, (t, rank, ranks) in enumerate(members)])
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _run_clock AS
        SELECT m.*, coalesce(t.clock_offset_ns - min(t.clock_offset_ns) OVER (), 0)
                    - coalesce(o.applied_offset_ns, 0) AS shift_ns
        FROM _run_members m JOIN traces t USING (trace_id)
        LEFT JOIN rank_clock_offsets o ON o.trace_id = m.trace_id AND o.run_id = {sql_string(run_id)};
        CREATE OR REPLACE TEMP TABLE _run_pids AS
        SELECT member, pid, kind, CAST(row_number() OVER (ORDER BY member, kind, pid) AS BIGINT) AS new_pid
        FROM (SELECT member, pid, CASE WHEN pid = {ANALYSIS_PID} THEN 2
                                       WHEN bool_or(json_extract_string(event, '$.cat') IN {GPU_CATS}) THEN 1 ELSE 0 END AS kind
              FROM _run_export GROUP BY member, pid)""")
    flows = con.execute("SELECT count(DISTINCT instance) FROM collective_flow_points WHERE run_id = ? AND hops > 1",
                        [run_id]).fetchall()[0][0]
    files = [r[0] for r in con.execute("SELECT file_name FROM traces JOIN _run_members USING (trace_id) "
                                       "ORDER BY member").fetchall()]
    events = write_document(out, {"displayTimeUnit": "ms", "exportedBy": "tracelake", "run": run_id,
                                  "sourceFiles": files}, con.execute("""
        WITH events AS (
            SELECT e.ts_ns + c.shift_ns AS ts_ns,
                   json_merge_patch(json_merge_patch(json_merge_patch(e.event, json_object('pid', p.new_pid)),
                       CASE WHEN c.shift_ns <> 0 AND json_extract(e.event, '$.ts') IS NOT NULL
                            THEN json_object('ts', _chrome_trace_us(e.ts_ns + c.shift_ns)) ELSE '{}' END),
                       CASE WHEN json_extract_string(e.event, '$.cat') = 'ac2g'
                            THEN json_object('id', c.member * 4294967296 + CAST(json_extract_string(e.event, '$.id') AS BIGINT))
                            ELSE '{}' END) AS event
            FROM _run_export e JOIN _run_clock c USING (member) JOIN _run_pids p USING (member, pid)
            WHERE NOT (json_extract_string(e.event, '$.ph') = 'M' AND json_extract_string(e.event, '$.name') = 'process_name')
            UNION ALL
            SELECT NULL, to_json({'ph': 'M', 'name': 'process_name', 'pid': p.new_pid, 'tid': 0,
                                  'args': {'name': c.label || ' · ' || CASE p.kind WHEN 2 THEN 'tracelake analysis'
                                                                       WHEN 1 THEN 'GPU ' || p.pid
                                                                       ELSE 'process ' || p.pid END}})
            FROM _run_pids p JOIN _run_clock c USING (member)
            UNION ALL
            SELECT NULL, to_json({'ph': 'M', 'name': 'process_sort_index', 'pid': new_pid, 'tid': 0,
                                  'args': {'sort_index': new_pid}})
            FROM _run_pids
            UNION ALL
            SELECT f.start_ns + c.shift_ns,
                   json_merge_patch(to_json({
                       'ph': CASE WHEN f.hop = 0 THEN 's' WHEN f.hop = f.hops - 1 THEN 'f' ELSE 't' END,
                       'cat': 'collective', 'name': 'collective', 'id': f.instance, 'pid': p.new_pid,
                       'tid': f.stream_id, 'ts': _chrome_trace_us(f.start_ns + c.shift_ns),
                       'args': {'operation': f.operation, 'rank': f.rank, 'hop': f.hop, 'wait_ns': f.wait_ns}}),
                       json_object('bp', CASE WHEN f.hop = f.hops - 1 THEN 'e' END))  -- the end binds to the kernel
            FROM collective_flow_points f JOIN _run_clock c USING (trace_id)
            JOIN _run_pids p ON p.member = c.member AND p.pid = f.device_id
            WHERE f.run_id = $run AND f.hops > 1
        )
        SELECT event FROM events ORDER BY ts_ns NULLS FIRST, event""",
        {"run": run_id}))
    for table in ("_run_export", "_run_members", "_run_clock", "_run_pids"):
        con.execute(f"DROP TABLE {table}")
    return events, flows
