"""tracelake.reports: HTML pages and e-mail of a lake's traces and runs."""

from tracelake.ingest.arrow_memory import prefer_jemalloc

prefer_jemalloc()
