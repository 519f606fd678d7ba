"""CUDA API calls by total time (api_summary, as nsys stats cuda_api_sum)."""

from __future__ import annotations

from ..page import Page

NAME = "api"
TITLE = "CUDA API"
VIEWS = ("api_summary",)


def build(page: Page) -> dict | None:
    rows = page.sql("""SELECT name, time_pct, total_ns, num_calls, avg_ns, max_ns FROM api_summary
                       WHERE trace_id = $trace ORDER BY total_ns DESC, name, num_calls LIMIT 15""").to_dicts()
    return {"rows": rows} if rows else None
