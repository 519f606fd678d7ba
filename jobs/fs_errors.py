"""The one place where a file-system error about an output (the lake, the reports folder, an -o
file) becomes the one-line message users see, instead of a traceback."""

from __future__ import annotations

import errno
import json
import os
import re

from ..ingest.printable import path_text

_PLAIN: dict[int | None, str] = {
    errno.ENOTDIR: "a part of this path is a regular file, not a directory",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOSPC: "no space left on device",
    errno.EFBIG: "file too large",
    errno.EISDIR: "is a directory",
}


def describe(e: OSError) -> str:
    """'<path>: <what is wrong>' for an OSError (the path as UTF-8 text, no traceback)."""
    problem = _PLAIN.get(e.errno) or e.strerror or str(e)
    if e.errno == errno.EEXIST and e.filename is not None and not os.path.isdir(e.filename):
        problem = "exists and is not a directory"
    if e.filename is None:
        return problem
    where = path_text(e.filename)
    if e.filename2 is not None:
        where += f" -> {path_text(e.filename2)}"
    return f"{where}: {problem}"


def io_error_line(e: BaseException) -> str | None:
    """'<path>: <what is wrong>' for DuckDB's I/O errors (a full disk while it writes Parquet or
    a database: its message carries a JSON object with the file and errno), else None."""
    if type(e).__name__ not in ("IOException", "IOError") or "duckdb" not in type(e).__module__:
        return None
    text = str(e)
    found = re.search(r"\{.*\}", text)
    try:
        detail = json.loads(found.group(0)) if found else {}
    except ValueError:
        detail = {}
    message = detail.get("exception_message") or text.removeprefix("IO Error: ")
    code = int(detail["errno"]) if str(detail.get("errno", "")).isdigit() else None
    path = re.search(r'file "([^"]+)"', message)
    problem = _PLAIN.get(code) or message.split(": ")[-1].strip() or message
    return f"{path.group(1)}: {problem}" if path else " ".join(message.split())
