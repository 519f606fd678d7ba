"""Sizes in bytes as people write them (options, environment variables) and read them (messages)."""

from __future__ import annotations

import re

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """'512M', '16G', '2T', '1048576' -> bytes (binary units; a trailing 'B'/'iB' is allowed)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not m:
        raise ValueError(f"not a size: {text!r} (examples: 512M, 16G)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def format_size(n: int) -> str:
    """16 GiB, 102.7 MiB, 512 bytes."""
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit]:
            return f"{n / _UNITS[unit]:.1f}".removesuffix(".0") + f" {unit}iB"
    return f"{n:,} bytes"
