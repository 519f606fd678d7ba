"""Helpers for the tests that use a lake from several real `tracelake` processes (issue #32)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from conftest import DATA

TRACELAKE = str(Path(sys.executable).with_name("tracelake"))
SMALL = DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz"  # 707 events
MNIST = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"  # 13,819 events


def folder_with(tmp: Path, name: str, *files: Path) -> Path:
    """A folder holding copies of `files` (a run keys its traces by path)."""
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy(f, d / f.name)
    return d


def tracelake(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([TRACELAKE, *map(str, args)], capture_output=True, text=True, timeout=600, **kwargs)


def start(*args, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([TRACELAKE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


def row_counts(lake: Path) -> dict[tuple[str, str], int]:
    """(table or derived/<view>@<fingerprint>, trace_id) -> rows, read from every loose partition's
    Parquet footer: what the lake holds, independent of its database."""
    out = {}
    for f in Path(lake).rglob("trace_id=*/*.parquet"):
        folder = str(f.parent.parent.relative_to(lake))
        if not folder.startswith("."):
            out[(folder, f.parent.name.removeprefix("trace_id="))] = pq.read_metadata(f).num_rows
    return out


def wait_for_lock_holder(lake: Path, pid: int, timeout: float = 120) -> dict:
    """Block until the lake's lock file names `pid` (the process holds the writer lock)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            info = json.loads((Path(lake) / ".lock").read_text() or "null")
        except (OSError, ValueError):
            info = None
        if info and info.get("pid") == pid:
            return info
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never took the lock of {lake}")
