"""tracelake.analysis: the lake's DuckDB database, the SQL catalog and the command line."""

from tracelake.ingest.arrow_memory import prefer_jemalloc

prefer_jemalloc()

__version__ = "0.1.0"
