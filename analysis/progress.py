"""Progress of a batch run: one rewritten status line on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time

from tracelake.ingest.printable import terminal_text


class Progress:
    def __init__(self, quiet: bool = False, verbose: bool = False, stream=None):
        self.stream = stream or sys.stderr
        self.quiet, self.verbose = quiet, verbose
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self.events = 0
        self.errors = 0

    def update(self, outcome, done: int, total: int) -> None:
        self.events += outcome.events
        if outcome.status == "error":
            self.errors += 1
            self._line(f"error  {outcome.error}", force=True)
        elif self.verbose or (not self.tty and not self.quiet):
            extra = f"-> {outcome.trace_id} ({outcome.events:,} events, {outcome.seconds:.2f} s)" \
                if outcome.status == "ok" else (outcome.error or "")
            self._line(f"{outcome.status:<7}{outcome.path} {extra}")
            if self.verbose:
                for w in outcome.warnings:
                    self._line(f"       warning: {w}")
        if self.tty and not self.quiet:
            rate = self.events / max(time.perf_counter() - self.t0, 1e-9)
            self.stream.write(f"\r[{done}/{total}] {self.events:,} events, {rate:,.0f} events/s, "
                              f"{self.errors} errors ")
            self.stream.flush()

    def _line(self, text: str, force: bool = False) -> None:
        if self.quiet and not force:
            return
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(terminal_text(text) + "\n")

    def finish(self, summary) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\n")
        if not self.quiet:
            counts = ", ".join(f"{summary.count(s)} {s}" for s in ("ok", "unchanged", "skipped", "removed", "error")
                               if summary.count(s))
            self.stream.write(terminal_text(f"{counts or 'nothing to do'} in {summary.seconds:.1f} s; "
                                            f"lake: {summary.lake}") + "\n")
