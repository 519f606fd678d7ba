"""Progress of a batch run: one rewritten status line on a terminal, plain log lines otherwise.

A run has three stages: ingest (a line per file when not a terminal, else files done and events/s),
derive (the materialized views of the new traces, then the database), reports (pages done of all,
with the time left on a terminal). When not a terminal each stage says one line as it starts; the
last line counts the files and gives the time of the whole run.
"""

from __future__ import annotations

import sys
import time

from ..ingest.printable import terminal_text


def eta_text(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class Progress:
    def __init__(self, quiet: bool = False, verbose: bool = False, stream=None):
        self.stream = stream or sys.stderr
        self.quiet, self.verbose = quiet, verbose
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self.events = 0
        self.errors = 0
        self.pages_t0 = self.t0

    def update(self, outcome, done: int, total: int) -> None:
        self.events += outcome.events
        if outcome.status == "error":
            self.errors += 1
            self._line(f"error  {outcome.error}", force=True)
        elif self.verbose or (not self.tty and not self.quiet):
            if outcome.status == "skipped":  # its error names the file
                self._line(f"skip   {outcome.error}")
            else:
                extra = {"ok": f" -> {outcome.trace_id} ({outcome.events:,} events, {outcome.seconds:.2f} s)",
                         "alias": f" = {outcome.trace_id} (the same bytes: not read again)"}.get(outcome.status, "")
                self._line(f"{outcome.status:<6} {outcome.path}{extra}")
            if self.verbose:
                for w in outcome.warnings:
                    self._line(f"       warning: {w}")
        if self.tty and not self.quiet:
            rate = self.events / max(time.perf_counter() - self.t0, 1e-9)
            self._status(f"[{done}/{total}] {self.events:,} events, {rate:,.0f} events/s, {self.errors} errors")

    def stage(self, text: str) -> None:
        """A stage starts: its line (not a terminal), or the status line says it (a terminal)."""
        if self.quiet:
            return
        if self.tty:
            self._status(text)
        else:
            self._line(text)

    def pages(self, done: int, total: int) -> None:
        """Report pages written so far; on a terminal with the time left at the rate so far."""
        if done == 0:
            self.pages_t0 = time.perf_counter()
            self.stage(f"reports: {total} page{'s' * (total != 1)}")
        if not self.tty or self.quiet or done == 0:
            return
        elapsed = time.perf_counter() - self.pages_t0
        left = f", about {eta_text(elapsed / done * (total - done))} left" if done < total else ""
        self._status(f"reports: {done}/{total} pages{left}")

    def _status(self, text: str) -> None:
        self.stream.write("\r\x1b[K" + terminal_text(text))
        self.stream.flush()

    def _line(self, text: str, force: bool = False) -> None:
        if self.quiet and not force:
            return
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(terminal_text(text) + "\n")
        self.stream.flush()

    def finish(self, summary, seconds: float | None = None) -> None:
        """The last line: the files by status and the time of the whole run (`seconds`, default
        since this Progress was made)."""
        if self.tty and not self.quiet:
            self.stream.write("\r\x1b[K")
        if not self.quiet:
            seconds = time.perf_counter() - self.t0 if seconds is None else seconds
            counts = ", ".join(f"{summary.count(s)} {s}" for s in ("ok", "alias", "unchanged", "skipped", "removed",
                                                                             "error")
                               if summary.count(s))
            self.stream.write(terminal_text(f"{counts or 'nothing to do'} in {seconds:.1f} s; "
                                            f"lake: {summary.lake}") + "\n")
            self.stream.flush()
