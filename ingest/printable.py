"""Untrusted text made safe to show: file names that are not UTF-8, and control characters.

- path_text: a file name as valid UTF-8 text. Python holds undecodable bytes of a file name as
  lone surrogates, which Parquet, JSON and HTML writers cannot encode; they become `\\xNN`.
  Used wherever a path is stored or written (the `traces.path` column, error messages, reports).
- terminal_text: text safe to print on a terminal, on one line: control characters (C0, DEL,
  C1, which can move the cursor, erase lines or forge output) and Unicode bidirectional
  overrides become escapes (`\\n`, `\\x1b`, `\\u202e`). Used wherever a name or any string from
  a trace is printed (progress lines, errors, warnings, `tracelake sql` tables).
- terminal_lines: text of several lines made safe line by line: its line breaks are kept (the
  `tracelake diff` table, `callctx` output on a terminal).
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def path_text(path) -> str:
    text = str(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _escape(m: re.Match) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def terminal_text(text) -> str:
    return _CONTROL.sub(_escape, path_text(text))


def terminal_lines(text: str) -> str:
    return "\n".join(map(terminal_text, text.split("\n")))
