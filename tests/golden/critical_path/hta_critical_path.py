"""Record Holistic Trace Analysis' critical path (traceinsight 0.6.1) of every ProfilerStep of a
PyTorch trace as golden CSVs, or the exception HTA raised.

Runs in HTA's own virtualenv, never in tracelake's (make_goldens.sh has the exact commands):
    /work/hta-venv/bin/python tests/golden/critical_path/hta_critical_path.py TRACE OUT_PREFIX [DATA_LOAD_EVENT]
For each CPU-side 'ProfilerStep#N' annotation it calls
    TraceAnalysis(trace_dir=..., include_last_profiler_step=True).critical_path_analysis(
        rank=RANK, annotation="ProfilerStep", instance_id=I[, data_load_events=[DATA_LOAD_EVENT]])
with I the position of that CPU annotation among the trace's events whose name contains
'ProfilerStep' (HTA's own instance numbering, which also counts the GPU-side copies), and writes
- OUT_PREFIX.summary.csv: step, ok, path_us, and us per HTA bound_by class (the summary() numbers
  before HTA turns them into percentages), edge count;
- OUT_PREFIX.edges.csv.gz: the path's edges in order: step, order, type, weight_us, bound_by,
  src_ts_us, dst_ts_us, attributed event name, stream.
HTA 0.6.1 keeps times as integer microseconds from the trace's first event, so the columns are
*_us: path_us, per-class *_us, weight_us, src_ts_us/dst_ts_us (relative to HTA's trace start).
"""

import logging
import os
import sys
import tempfile

import pandas as pd
from hta.trace_analysis import TraceAnalysis

logging.disable(logging.WARNING)


def main(trace: str, out_prefix: str, data_load_event: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(trace), os.path.join(tmp, os.path.basename(trace)))
        analyzer = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
        rank = next(iter(analyzer.t.traces))
        df = analyzer.t.get_trace(rank)
        symbols = analyzer.t.symbol_table
        names = symbols.get_sym_table()
        step_ids = {i for i, s in enumerate(names) if "ProfilerStep" in s}
        steps = df[df["name"].isin(step_ids)].reset_index(drop=True)
        cats = steps["cat"].map(lambda c: names[c])
        summary_rows, edge_rows = [], []
        for position in steps.index[cats == "user_annotation"]:
            step = names[steps.loc[position, "name"]]
            try:
                graph, ok = analyzer.critical_path_analysis(
                    rank=rank, annotation="ProfilerStep", instance_id=int(position),
                    data_load_events=[data_load_event] if data_load_event else None)
            except Exception as e:  # noqa: BLE001 - recording the crash is the point
                summary_rows.append({"step": step, "ok": False,
                                     "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
                continue
            if not ok:
                summary_rows.append({"step": step, "ok": False, "error": "critical_path() returned False"})
                continue
            breakdown = graph.get_critical_path_breakdown()
            row = {"step": step, "ok": True, "error": "", "path_us": int(breakdown["duration"].sum()),
                   "edges": len(breakdown)}
            for bound, ns in breakdown.groupby("bound_by")["duration"].sum().items():
                row[f"{bound or 'dependency'}_us"] = int(ns)
            summary_rows.append(row)
            nodes = graph.critical_path_nodes
            for order, (u, v) in enumerate(zip(nodes, nodes[1:])):
                e = graph.edges[u, v]["object"]
                ev = graph.get_event_attribution_for_edge(e)
                name, stream = "", None
                if ev is not None and ev >= 0:
                    name = names[graph.trace_df.name.loc[ev]]
                    stream = int(graph.trace_df.stream.loc[ev])
                edge_rows.append({"step": step, "order": order, "type": e.type.value.removeprefix("critical_path_"),
                                  "weight_us": int(graph.edges[u, v]["weight"]),
                                  "bound_by": graph.bound_by({"type": e.type.value, "s_name": name,
                                                              "stream": stream if stream is not None else -1})
                                  if name or e.type.value.endswith("delay") else "",
                                  "src_ts_us": int(graph.node_list[u].ts), "dst_ts_us": int(graph.node_list[v].ts),
                                  "src_is_start": graph.node_list[u].is_start,
                                  "dst_is_start": graph.node_list[v].is_start,
                                  "name": name, "stream": stream})
    pd.DataFrame(summary_rows).fillna(0).to_csv(out_prefix + ".summary.csv", index=False)
    pd.DataFrame(edge_rows).to_csv(out_prefix + ".edges.csv.gz", index=False)


if __name__ == "__main__":
    main(*sys.argv[1:4])
