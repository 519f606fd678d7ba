"""How much one answer of the MCP server may hold and cost (`tracelake mcp --max-rows ...`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_rows: int = 100  # rows of a table in an answer
    max_chars: int = 20_000  # characters of an answer (about 5,000 tokens)
    time_limit_s: float = 30.0  # a tool call's queries, together; then DuckDB is interrupted
    memory_limit: str = "25%"  # DuckDB's memory_limit (a size, or a share of the machine's memory)
    cell_chars: int = 200  # characters of one value in a table
