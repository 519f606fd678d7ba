"""Worker processes a reader may use for one big file, lent by the job that runs the reader.

The reader decides how to split its work (kineto/parallel.py); the job decides how processes
start and end (jobs/worker_pool.py: workers that end with their parent and on Ctrl-C), and lends
that pool maker for the files it reads: `with lending(make_pool): ingest_file(...)`. Without a
lender (a library call of ingest_file) a reader works in the calling process alone.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager

PoolMaker = Callable[[int], Executor]  # workers -> a pool of that many processes (a context manager)

_LENDER: contextvars.ContextVar[PoolMaker | None] = contextvars.ContextVar("tracelake_pool_maker", default=None)


@contextmanager
def lending(make_pool: PoolMaker) -> Iterator[None]:
    """Readers called inside the block may start pools with make_pool."""
    token = _LENDER.set(make_pool)
    try:
        yield
    finally:
        _LENDER.reset(token)


def lender() -> PoolMaker | None:
    """The pool maker lent to this reader, or None."""
    return _LENDER.get()
