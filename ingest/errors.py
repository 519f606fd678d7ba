"""The one error type ingesters raise for bad input: a file, a one-line problem and its kind."""

from __future__ import annotations

from enum import StrEnum

from .printable import path_text


class ErrorKind(StrEnum):
    """What kind of failure it is; the batch job decides by kind (jobs/run_job.py), never by message."""

    NOT_A_TRACE = "not_a_trace"  # the file is something else (a config.json, an unrelated SQLite database)
    BAD_TRACE = "bad_trace"  # a trace tracelake cannot read: empty, truncated, damaged, an unexported report
    INTERNAL = "internal"  # tracelake failed on it (an unexpected exception, the lake not writable)


class TraceError(Exception):
    """A trace file could not be ingested. str() is the one-line message shown to users."""

    def __init__(self, path: str, problem: str, kind: ErrorKind = ErrorKind.BAD_TRACE):
        super().__init__(f"{path_text(path)}: {problem}")
        self.path = path
        self.problem = problem
        self.kind = kind
