"""Durations in a chosen unit (`tracelake stats --timeunit`, like `nsys stats --timeunit`).

The views hold every duration and timestamp in integer nanoseconds, in columns whose name has an
`ns` word (`total_ns`, `start_ns`, `kernel_ns_per_rank`). In another unit such a column is divided
and renamed, so that the name still says the unit: `total_ns` in usec is `total_us`.
"""

from __future__ import annotations

import re

# --timeunit value -> (the word in column names, nanoseconds per unit); nsys's names
UNITS = {"nsec": ("ns", 1), "usec": ("us", 1_000), "msec": ("ms", 1_000_000), "sec": ("s", 1_000_000_000)}
DEFAULT = "nsec"  # the views' own unit, and nsys stats' default

_NS_WORD = re.compile(r"(?<![A-Za-z0-9])ns(?![A-Za-z0-9])")  # a word of a snake_case name


def is_duration(column: str) -> bool:
    return bool(_NS_WORD.search(column))


def renamed(column: str, unit: str) -> str:
    return _NS_WORD.sub(UNITS[unit][0], column)


def in_unit(rel, unit: str):
    """The DuckDB relation with its nanosecond columns in `unit` (the relation itself for nsec)."""
    word, factor = UNITS[unit]
    if factor == 1 or not any(is_duration(c) for c in rel.columns):
        return rel

    def quoted(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    return rel.project(", ".join(f"{quoted(c)} / {factor} AS {quoted(renamed(c, unit))}" if is_duration(c)
                                 else quoted(c) for c in rel.columns))
