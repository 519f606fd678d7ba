"""tracelake.reports: HTML pages and e-mail of a lake's traces and runs, rendered from a DuckDB connection."""
