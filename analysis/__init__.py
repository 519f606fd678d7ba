"""tracelake.analysis: builds the lake's DuckDB database and runs the jobs (ingest, run, reports) and the CLI.

The version is pyproject.toml's, read from the installed package's metadata (docs/packaging.md);
ingest and reports get it passed as a value.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tracelake")
except PackageNotFoundError:  # a source tree that was never installed (pip install -e .)
    __version__ = "0+unknown"
