"""The lake's writer lock: one writer at a time (docs/lake.md, "Several users of one lake").

Every command that writes a lake (ingest, run, compact, relink, and a reader that has to rebuild
a stale database) holds an exclusive `flock` on `<lake>/.lock` while it writes. The file holds
who took it (pid, host, command, start time) so that a second writer can say who it waits for.

flock is tied to the open file, not to the file's existence: the kernel releases it when the
holder exits for any reason (kill -9, an OOM kill, a power cut of the holder's process), so a
lock can never be stale and nothing has to guess whether a pid is still alive. The file itself
is never removed (removing a lock file while another process waits on it would let two writers
in). Held again by the same process (a job inside a command that holds it), it is a no-op.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import inspect
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from . import format_version

LOCK_FILE = ".lock"
HOLDER_SAYS_S = 2.0  # how long a waiter gives a holder to write who it is before saying "not yet"

_HELD: dict[str, list] = {}  # resolved lake path -> [open lock file, depth]: reentrant within a process


class LakeBusy(Exception):
    """Another process is writing the lake and the caller asked not to wait; str() is one line."""


class LakeReadOnly(Exception):
    """A command that writes the lake on a lake that cannot be written; str() is one line."""


def _holder() -> dict:
    return {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
            "command": " ".join([os.path.basename(sys.argv[0]) or "python", *sys.argv[1:]])[:200]}


def holder_line(lake: Path, info: dict | None) -> str:
    """'<lake> is being written by pid P on HOST (COMMAND) since HH:MM:SS (N s ago)'."""
    if not info:
        return f"{lake} is being written by another process (it has not said which yet)"
    since = info.get("since", time.time())
    ago = max(0, int(time.time() - since))
    return (f"{lake} is being written by pid {info.get('pid')} on {info.get('host')} "
            f"({info.get('command')}) since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))} "
            f"({ago} s ago)")


def read_holder(lake: Path) -> dict | None:
    """What the lock file says about its holder (None: no lock file, or not written yet)."""
    try:
        return json.loads((Path(lake) / LOCK_FILE).read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None


def _say(line: str) -> None:
    print(f"waiting  {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def writer_lock(lake: str | Path, wait: bool = True, on_wait: Callable[[str], None] = _say) -> Iterator[None]:
    """Hold the lake's writer lock. When another process holds it: with `wait`, call
    on_wait(holder line) once and block until it is free; without, raise LakeBusy(holder line).
    Creates the lake folder; an unwritable lake raises the OSError of opening the lock file."""
    lake = Path(lake).resolve()
    key = str(lake)
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    try:
        lake.mkdir(parents=True, exist_ok=True)
        f = open(lake / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held until the with block ends
    except OSError as e:
        if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise LakeReadOnly(f"{lake}: {'read-only file system' if e.errno == errno.EROFS else 'no write permission'}"
                               ": this command writes the lake (reading it works: sql, report -o elsewhere, "
                               "stats without --lake, tracelake.open)") from e
        raise
    try:
        if not _took(f):
            taken, info = _holder_once_said(f, lake)
            if not taken:
                line = holder_line(lake, info)
                if not wait:
                    raise LakeBusy(line)
                on_wait(line)
                fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(json.dumps(_holder()))
        f.flush()
        format_version.check_not_newer(lake)  # a lake of a newer format is not written by this version
        _HELD[key] = [f, 1]
        try:
            yield
        finally:
            del _HELD[key]
            f.truncate(0)  # before the unlock: the next holder writes its own line
            fcntl.flock(f, fcntl.LOCK_UN)
    finally:
        f.close()


def _took(f) -> bool:
    """Take the lock if it is free now."""
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return False
    return True


def _holder_once_said(f, lake: Path) -> tuple[bool, dict | None]:
    """(taken, who holds the lock), waiting up to HOLDER_SAYS_S for a holder that has taken it but
    not yet written who it is (the two are a few instructions apart). taken: the lock came free
    meanwhile and is now ours. Who is None if the holder said nothing in that time."""
    deadline = time.monotonic() + HOLDER_SAYS_S
    while (info := read_holder(lake)) is None and time.monotonic() < deadline:
        time.sleep(0.01)
        if _took(f):
            return True, None
    return False, info


def holds(lake: str | Path) -> bool:
    """Whether this process holds the lake's writer lock."""
    return str(Path(lake).resolve()) in _HELD


def try_lock(lake: str | Path) -> contextlib.AbstractContextManager | None:
    """The writer lock if it is free now (a context manager already entered by the caller's
    `with`); None when another process holds it or the lake cannot be written (its lock file
    cannot be made: a read-only lake). For readers that would write only if nobody else is and
    they can."""
    cm = writer_lock(lake, wait=False)
    try:
        cm.__enter__()
    except (LakeBusy, LakeReadOnly, OSError):
        return None
    return _Entered(cm)


class _Entered(contextlib.AbstractContextManager):
    def __init__(self, cm):
        self._cm = cm

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def writes_lake(lake_of: Callable[[dict], str | Path]) -> Callable:
    """Decorator: the function runs holding the writer lock of lake_of(its bound arguments)."""
    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def locked(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            with writer_lock(lake_of(bound.arguments)):
                return fn(*args, **kwargs)
        return locked
    return wrap
