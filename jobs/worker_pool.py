"""The process pool of the batch job's ingest tasks and of the report pages.

Workers come from a fork server, not from the calling process: forking a process whose polars,
Arrow or DuckDB thread pools are running can deadlock the child (seen in the test suite). Each
worker's initializer (process_settings.start_worker) makes the process-wide settings before the
worker imports anything heavy; this module imports nothing heavy either.

No worker outlives the process that made the pool:
- Killed parent (even kill -9): each worker holds the read end of a pipe whose only write end is
  in the parent; a watch thread in the worker sees it close and ends the worker at once. (The
  workers are children of the fork server, not of the parent, so PR_SET_PDEATHSIG cannot do it;
  and they hold the fork server's own liveness pipe, so the fork server and the resource tracker
  go when the workers have gone.)
- Ctrl-C: workers ignore SIGINT (blocked from their birth until they ignore it, _fork_server);
  the parent gets KeyboardInterrupt, and leaving the pool's
  `with` block on any exception kills the workers and cancels the queued tasks instead of
  waiting for them. A killed task's partial output is cleaned up by the next run
  (layout.prepare_for_writing).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor

from .process_settings import start_worker


def _start_worker(workers: int, parent_alive) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since birth: see _fork_server
    threading.Thread(target=_exit_with_parent, args=(parent_alive,), daemon=True,
                     name="tracelake-parent-watch").start()
    start_worker(workers)


def _exit_with_parent(parent_alive) -> None:
    try:
        parent_alive.recv_bytes()  # nothing is ever sent: returns only by EOF, when the parent is gone
    except (EOFError, OSError):
        pass
    os._exit(1)


def _fork_server(method: str) -> None:
    """Start the fork server (if it is not running yet) with SIGINT blocked. The workers it forks
    inherit the blocked signal until their initializer ignores it: a Ctrl-C that reaches a worker
    while it starts (the fork server restores Python's handler in each child) is discarded
    instead of printing a KeyboardInterrupt traceback from the worker's bootstrap."""
    if method != "forkserver":
        return
    from multiprocessing import forkserver

    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class WorkerPool(ProcessPoolExecutor):
    """A ProcessPoolExecutor whose workers end with their parent, and are killed (not awaited)
    when its `with` block is left by an exception (KeyboardInterrupt included)."""

    def __init__(self, workers: int):
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        _fork_server(method)
        watch, self._parent_alive = context.Pipe(duplex=False)
        super().__init__(max_workers=workers, mp_context=context, initializer=_start_worker,
                         initargs=(workers, watch))
        self._watch = watch

    def submit(self, fn, /, *args, **kwargs):
        """As ProcessPoolExecutor.submit, which may start a worker; a Ctrl-C during it is raised
        when it returns, so that the worker it started is one kill_workers knows and kills (one
        interrupted half-way was left to fail alone, printing a traceback)."""
        if threading.current_thread() is not threading.main_thread():
            return super().submit(fn, *args, **kwargs)
        interrupted = []
        previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
        try:
            return super().submit(fn, *args, **kwargs)
        finally:
            signal.signal(signal.SIGINT, previous)
            if interrupted and callable(previous):
                previous(signal.SIGINT, None)  # Python's default handler raises KeyboardInterrupt
            elif interrupted and previous == signal.SIG_DFL:
                raise KeyboardInterrupt

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.kill_workers()
        else:
            self.shutdown(wait=True)
        self._watch.close()
        self._parent_alive.close()  # after shutdown: idle workers exit on their own first
        return False

    def kill_workers(self) -> None:
        """Kill the workers, cancel the queued tasks, and wait (up to 10 s) for the executor's
        manager thread to see them gone. Not waited for, that thread closed its wake-up pipe while
        Python's exit hook (concurrent.futures.process._python_exit, unlocked in 3.11) was writing
        to it: an OSError traceback after the interrupt's one line (seen in CI)."""
        manager = getattr(self, "_executor_manager_thread", None)
        for process in list((getattr(self, "_processes", None) or {}).values()):
            try:
                process.kill()
            except (OSError, ValueError):
                pass
        self.shutdown(wait=False, cancel_futures=True)
        if manager is not None and manager is not threading.current_thread():
            manager.join(timeout=10)


def process_pool(workers: int) -> WorkerPool:
    return WorkerPool(workers)
