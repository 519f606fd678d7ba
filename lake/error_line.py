"""An exception as the one line a user reads in a warning or an error (ingest, derivation, analyses)."""

from __future__ import annotations


def first_line(e: BaseException, limit: int = 200) -> str:
    """The first non-blank line of the exception's message, at most `limit` characters ('' for none)."""
    return next((line.strip() for line in str(e).splitlines() if line.strip()), "")[:limit]


def error_line(e: BaseException, limit: int = 200) -> str:
    """'ValueError: first line of its message', or just 'AssertionError' for one without a message."""
    first = first_line(e, limit)
    return f"{type(e).__name__}: {first}" if first else type(e).__name__
