"""Printing to the terminal: every line that holds a file name or a string from a trace goes
through `say`, which escapes control characters (printable.terminal_text), so a name cannot
forge output lines or drive the terminal."""

from __future__ import annotations

import sys

from ..ingest.printable import terminal_text


def say(text: str, err: bool = False) -> None:
    print(terminal_text(text), file=sys.stderr if err else sys.stdout)
