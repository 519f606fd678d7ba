"""tracelake.analysis: the lake's DuckDB database, the SQL catalog and the command line."""

__version__ = "0.1.0"
