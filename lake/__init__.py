"""tracelake.lake: the lake, one home for it. Where its files go (layout), how a trace is written
into it all or nothing (writer, with the tables' schema), how its Parquet is scanned (scan), the
SQL catalog of views (catalog), the per-trace derived tables (derive, served_views), compaction
(compact) and the DuckDB database over it all (database; scoped: the same views over a few traces
in memory). ingest/ writes into the lake; analysis/, jobs/, cli/ and reports read from it; it
imports none of them (docs/architecture.md)."""
