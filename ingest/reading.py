"""The one way tracelake opens an input file: regular files only, and gzip inflated within limits.

- Only regular files are read. A FIFO, socket, device or directory given as (or found as) a trace
  is refused with a one-line TraceError; it is never opened for blocking reads, so nothing can
  hang on it. The check is made before opening and again on the opened descriptor (which is
  opened with O_NONBLOCK, so even a file swapped for a FIFO in between cannot block the open).
- Gzip is inflated within Limits: at most `max_inflated_bytes` in all, and at most
  `max_inflate_ratio` times the compressed size once past `ratio_floor_bytes` (real traces
  inflate 5-30x; a gzip bomb inflates about 1000x). A JSON trace read whole is held to
  `max_inflated_bytes` too. LimitExceeded says which limit and how to raise it: the `--max-inflated`
  / `--max-inflate-ratio` options of `ingest` and `run`, or the TRACELAKE_MAX_INFLATED and
  TRACELAKE_MAX_INFLATE_RATIO environment variables (docs/ingest.md).

The limits in effect are a context variable: `using(limits)` sets them for one file's ingest;
code on helper threads takes them when its work is set up (InflateBudget is built on the
caller's thread).
"""

from __future__ import annotations

import contextvars
import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from ..lake.sizes import format_size, parse_size
from .errors import ErrorKind, TraceError

ENV_MAX_INFLATED = "TRACELAKE_MAX_INFLATED"
ENV_MAX_RATIO = "TRACELAKE_MAX_INFLATE_RATIO"
class BadLimits(ValueError):
    """An inflate limit (option or environment variable) that is not a size or a number."""


@dataclass(frozen=True)
class Limits:
    max_inflated_bytes: int = 16 << 30
    max_inflate_ratio: int = 100
    ratio_floor_bytes: int = 64 << 20  # below this, any ratio is fine (a small file cannot hurt)

    @classmethod
    def from_environment(cls, max_inflated: str | None = None, max_ratio: str | int | None = None) -> Limits:
        """Defaults, overridden by the environment, overridden by the arguments (CLI options)."""
        size = max_inflated or os.environ.get(ENV_MAX_INFLATED)
        ratio = max_ratio or os.environ.get(ENV_MAX_RATIO)
        base = cls()
        try:
            return cls(parse_size(size) if size else base.max_inflated_bytes,
                       int(ratio) if ratio else base.max_inflate_ratio)
        except ValueError as e:
            raise BadLimits(f"inflate limits: {e}") from None

    def allowed(self, compressed_bytes: int) -> int:
        by_ratio = max(self.ratio_floor_bytes, self.max_inflate_ratio * compressed_bytes)
        return min(self.max_inflated_bytes, by_ratio)


_LIMITS: contextvars.ContextVar[Limits | None] = contextvars.ContextVar("tracelake_limits", default=None)


def current_limits() -> Limits:
    return _LIMITS.get() or Limits.from_environment()


@contextmanager
def using(limits: Limits | None):
    token = _LIMITS.set(limits)
    try:
        yield
    finally:
        _LIMITS.reset(token)


class LimitExceeded(TraceError):
    """A file would inflate (or read) past the limits: refused, never retried another way."""


class InflateBudget:
    """Counts inflated bytes of one gzip file against the limits in effect when it was made."""

    def __init__(self, path: str, compressed_bytes: int):
        self.path, self.limits = path, current_limits()
        self.compressed = compressed_bytes
        self.allowed = self.limits.allowed(compressed_bytes)
        self.total = 0

    def count(self, n: int) -> None:
        self.total += n
        if self.total > self.allowed:
            raise LimitExceeded(self.path, f"gzip data inflates past {format_size(self.allowed)} "
                                           f"({self.compressed:,} bytes compressed; {_limit_text(self.limits)}); "
                                           f"refused as a likely gzip bomb: {_raise_hint()}")


def check_text_size(path: str, size: int) -> None:
    """A file read whole into memory (an uncompressed JSON trace) is held to max_inflated_bytes."""
    limits = current_limits()
    if size > limits.max_inflated_bytes:
        raise LimitExceeded(path, f"{size:,} bytes of text is more than the limit of "
                                  f"{format_size(limits.max_inflated_bytes)}: {_raise_hint()}")


def _limit_text(limits: Limits) -> str:
    return (f"limits: {limits.max_inflate_ratio}x the compressed size above {format_size(limits.ratio_floor_bytes)}, "
            f"{format_size(limits.max_inflated_bytes)} in all")


def _raise_hint() -> str:
    return (f"raise the limits with --max-inflated SIZE / --max-inflate-ratio N "
            f"or {ENV_MAX_INFLATED} / {ENV_MAX_RATIO}")


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_input(path: str) -> BinaryIO:
    """The file opened for binary reading; TraceError for anything that is not a readable regular file."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise TraceError(path, f"{_kind(mode)}, not a regular file: only regular files are read",
                             ErrorKind.NOT_A_TRACE)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise TraceError(path, f"cannot read file: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced between the stat and the open
            raise TraceError(path, f"{_kind(mode)}, not a regular file: only regular files are read",
                             ErrorKind.NOT_A_TRACE)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_head(path: str, n: int) -> bytes:
    with open_input(path) as f:
        return _read(path, f, n)


def read_all(path: str) -> bytes:
    """The whole file (a JSON trace's bytes), within the text size limit when not gzip."""
    with open_input(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = _read(path, f, 2)
        if head != b"\x1f\x8b":
            check_text_size(path, size)
        return head + _read(path, f, -1)


def blocks(path: str, block_bytes: int = 1 << 20) -> Iterator[bytes]:
    with open_input(path) as f:
        while block := _read(path, f, block_bytes):
            yield block


def _read(path: str, f: BinaryIO, n: int) -> bytes:
    try:
        return f.read(n)
    except OSError as e:
        raise TraceError(path, f"cannot read file: {e.strerror or e}") from None
