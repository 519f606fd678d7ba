"""`tracelake diff` output: the terminal table, CSV and JSON of a diff result (jobs/diff.py); its HTML page
is reports/render.diff_report."""

from __future__ import annotations

import csv
import json

from ..reports.diff_page import evidence_text

TABLE_CAUSES = 15  # causes listed in the table (all of them in JSON and CSV)


def as_json(result: dict) -> str:
    return json.dumps(result, indent=1) + "\n"


def as_csv(result: dict, out) -> None:
    """One row for the step time, one per cause, one for what the causes leave unexplained."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["kind", "name", "change_ns", "base_ns", "new_ns", "evidence"])
    st = result["step_time_ns"]
    w.writerow(["step_time", "median of the steady steps", st["change_ns"], st["base"], st["new"],
                json.dumps({"steps": result["steps"], "noise": result["noise"]})])
    for c in result["causes"]:
        ev = c["evidence"]
        w.writerow([c["kind"], c["name"], c["change_ns"], ev["base_ns_per_step"], ev["new_ns_per_step"],
                    json.dumps(ev)])
    w.writerow(["unexplained", "change of the mean step not in a cause", result["unexplained_ns"], "", "", ""])


def _ms(ns: float) -> str:
    return f"{ns / 1e6:+.3f}" if ns else "0"


def _box(table: str) -> str:
    """A table without format_table's row count line."""
    lines = table.rstrip("\n").split("\n")
    return "\n".join(lines[:-1] if not lines[-1].startswith("└") else lines)


def as_table(result: dict, width: int | None) -> str:
    from .table_format import format_table

    steps, noise = result["steps"], result["noise"]
    b, n = steps["base"], steps["new"]
    lines = [f"base  {result['base']}  ({b['steps']} steady steps)",
             f"new   {result['new']}  ({n['steps']} steady steps)", ""]
    rows = [(label, round(b[key] / 1e6, 3), round(n[key] / 1e6, 3), round((n[key] - b[key]) / 1e6, 3),
             round(100 * (n[key] - b[key]) / b[key], 1) if b[key] else None)
            for label, key in (("median", "median_ns"), ("p90", "p90_ns"), ("IQR (spread)", "iqr_ns"))]
    lines.append("Step time (steady state, ms)")
    lines.append(_box(format_table(["", "base", "new", "change", "change_pct"], rows, width, percent=True)))
    lines.append(f"Verdict: {noise['verdict']} ({noise['why']}; Mann-Whitney U p = {noise['p_value']:.2g}, "
                 f"{noise['method']}; spread {noise['spread_ns'] / 1e6:.3f} ms; test: {noise['test']})")
    lines.append("")
    causes = result["causes"]
    lines.append("Causes, largest first (ms per steady step)")
    if causes:
        rows = [(c["kind"], c["name"], round(c["change_ns"] / 1e6, 3), round(c["evidence"]["base_ns_per_step"] / 1e6, 3),
                 round(c["evidence"]["new_ns_per_step"] / 1e6, 3), evidence_text(c["evidence"]))
                for c in causes[:TABLE_CAUSES]]
        lines.append(_box(format_table(["kind", "name", "change", "base", "new", "evidence"], rows, width)))
        if len(causes) > TABLE_CAUSES:
            rest = sum(c["change_ns"] for c in causes[TABLE_CAUSES:])
            lines.append(f"... {len(causes) - TABLE_CAUSES} smaller causes ({_ms(rest)} ms together; "
                         "--format json lists all)")
    else:
        lines.append("(none over 1 us per step)")
    lines.append(f"Sum of causes {_ms(result['explained_ns'])} ms; change of the mean step "
                 f"{_ms(n['mean_ns'] - b['mean_ns'])} ms; unexplained {_ms(result['unexplained_ns'])} ms")
    return "\n".join(lines) + "\n"
