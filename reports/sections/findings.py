"""Every finding rule that fired, most flagged time first, with an example and what to do."""

from __future__ import annotations

from ..page import Page

NAME = "findings"
TITLE = "Findings"
VIEWS = ("findings_by_rule",)


def build(page: Page) -> dict | None:
    rows = page.sql("""SELECT rule, severity, occurrences AS n, total_ns, example, advice FROM findings_by_rule
                       WHERE trace_id = $trace ORDER BY total_ns DESC NULLS LAST, rule""").to_dicts()
    return {"rows": rows} if rows else None
