"""Write-then-rename, the one way tracelake replaces a file that readers may open at any time (a
page, an export, the lake's database, lake.json, the compaction manifest, a catalog template): the
new content goes to a hidden temporary file in the same folder, which is renamed onto the target
(`os.replace`: atomic within one file system), so a reader sees the old file or the new one, never
half of one. Whatever goes wrong before the rename (an error, a full disk, Ctrl-C), the temporary
file is removed and the target is left as it was. Nothing is fsynced: a crash of the process
cannot leave half a file; a crash of the machine is not guarded against."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path


def temp_path(path: Path) -> Path:
    """The temporary file `replacing` writes for `path`: beside it, hidden, and unique per process
    and thread (`.<name>.<pid>.<thread>.tmp`, which the report job's clean-up looks for)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


@contextlib.contextmanager
def replacing(path: str | Path, sidecars: tuple[str, ...] = ()) -> Iterator[Path]:
    """Yields the temporary path to write; when the block ends normally, renames it onto `path`.
    On any exception the temporary file is removed and the exception goes on. `sidecars`: suffixes
    of files the writer may leave beside the temporary one (DuckDB's '.wal'), removed either way.
    The folder must exist."""
    tmp = temp_path(Path(path))
    tmp.unlink(missing_ok=True)  # left by a killed process that had the same pid
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # the original error matters, not this one
            tmp.unlink(missing_ok=True)
        raise
    finally:
        for suffix in sidecars:
            with contextlib.suppress(OSError):
                Path(f"{tmp}{suffix}").unlink(missing_ok=True)


def write_text(path: str | Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8), atomically."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
