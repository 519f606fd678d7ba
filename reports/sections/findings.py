"""Every finding rule that fired, most flagged time first, with an example and what to do; with
the page's Perfetto export (page.export), where the example is in it (at_ns: its start - the
trace's start, the export's zero)."""

from __future__ import annotations

from ..page import Page

NAME = "findings"
TITLE = "Findings"
VIEWS = ("findings_by_rule",)


def build(page: Page) -> dict | None:
    rows = page.sql("""SELECT rule, severity, occurrences AS n, total_ns, example, advice,
                              example_start_ns - $origin AS at_ns
                       FROM findings_by_rule
                       WHERE trace_id = $trace ORDER BY total_ns DESC NULLS LAST, rule""",
                    {"origin": page.origin_ns}).to_dicts()
    return {"rows": rows, "export": page.export} if rows else None
