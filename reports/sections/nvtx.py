"""GPU time by range (nvtx_gpu_summary): NVTX ranges and PyTorch annotations with the GPU span of
the work they launched."""

from __future__ import annotations

from ..page import Page

NAME = "nvtx"
TITLE = "GPU time by range (NVTX / annotations)"
VIEWS = ("nvtx_gpu_summary",)


def build(page: Page) -> dict | None:
    rows = page.sql("""SELECT range, style, instances, total_proj_ns, total_range_ns, total_gpu_ops
                       FROM nvtx_gpu_summary WHERE trace_id = $trace
                       ORDER BY total_proj_ns DESC, range, style, instances, total_range_ns LIMIT 15""").to_dicts()
    return {"rows": rows} if rows else None
