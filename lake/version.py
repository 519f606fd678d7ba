"""tracelake's version: pyproject.toml's, read from the installed package's metadata
(docs/packaging.md). The lake records the version that wrote each trace and its database;
ingest and reports get it passed as a value."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tracelake")
except PackageNotFoundError:  # a source tree that was never installed (pip install -e .)
    __version__ = "0+unknown"
