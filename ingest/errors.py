"""The one error type ingesters raise for bad input: a file and a one-line problem."""

from __future__ import annotations

from .printable import path_text


class TraceError(Exception):
    """A trace file could not be ingested. str() is the one-line message shown to users."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path_text(path)}: {problem}")
        self.path = path
        self.problem = problem
