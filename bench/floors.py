"""What the targets of issue #29 that stay missed would need: for each, the part of the command no
design can skip, measured against the same peer in the same run (fresh processes, as users run them).

- `tracelake run ../shared/traces` (targets: HTA's parse + kernel + temporal breakdown >= 10x the run
  without reports, >= 3x with them). The floor: the 37 files decoded into their base tables (Arrow,
  in memory; nothing written, no calling context, critical path, derived view or page) by 2 fresh
  processes, the files shared out by size as the run's workers share them (one thread each, as
  `run` sets them), against one HTA process over the 18 PyTorch targets (bench/run.py's). HTA / the
  floor is the best ratio any run on this machine could reach.
- `tracelake ingest` of the 89 MB trace (target: HTA's parse >= 5x). Paired with HTA's parse (the
  process of bench/cli.py): `tracelake ingest` as it is, and a fresh process doing what it does less
  the calling context and the critical path (decode, base tables written and published, database):
  what ingest would cost if those two analyses were built on first use instead.
- `tracelake stats FILE` with its default reports, 22 MB trace (target: TraceLens's perf report >= 5x).
  Paired with TraceLens (bench/tracelens.py's command): `tracelake stats` as it is, and a fresh process
  doing what the defaults need before any view is evaluated (decode; the critical path and calling
  context, which the findings read): HTA / that is the best ratio with views that cost nothing.
- Start-up: a fresh Python that imports the packages every command loads (polars, pyarrow, DuckDB,
  msgspec), best of 5: the floor against a native tool (`nsys stats` on the GPU machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .cli import _HTA as HTA_PARSE
from .cli import best
from .common import HTA_PYTHON, REPO, SHARED, TRACELENS_PYTHON, compile_package, load_average, paired, verdict
from .kineto_ingest import REFERENCE as PYTORCH
from .run import _hta as hta_corpus
from .tracelens import TRACES as TRACELENS_TRACES
from .tracelens import _tracelens

TRACELAKE = [str(Path(sys.executable).with_name("tracelake"))]

_DECODE = """
import sys
from tracelake.jobs.process_settings import prefer_jemalloc
prefer_jemalloc()
from tracelake.ingest.dispatch import ingest_file
for path in sys.argv[1:]:
    try:
        ingest_file(path)
    except Exception:  # the corpus holds files every reader refuses; the run pays for finding out too
        pass
"""

_INGEST_WITHOUT_ANALYSES = """
import sys
from pathlib import Path
from tracelake.jobs.process_settings import prefer_jemalloc
prefer_jemalloc()
from tracelake.ingest.dispatch import ingest_file
from tracelake.lake.database import update_database
from tracelake.lake.version import __version__
from tracelake.lake.writer import write_trace
r = ingest_file(sys.argv[1])
write_trace(Path(sys.argv[2]), r.trace_id, r.tables, tracelake_version=__version__)
update_database(sys.argv[2])
"""

_STATS_NEEDS = """
import sys
from concurrent.futures import ThreadPoolExecutor
from tracelake.jobs.process_settings import prefer_jemalloc
prefer_jemalloc()
from tracelake.analysis import callctx_build, critpath_build
from tracelake.ingest.dispatch import ingest_file
r = ingest_file(sys.argv[1])
with ThreadPoolExecutor(2) as pool:  # side by side, as stats builds them
    for f in [pool.submit(callctx_build.build, r.tables), pool.submit(critpath_build.build, r.tables)]:
        f.result()
"""

_IMPORTS = "import polars, pyarrow, pyarrow.compute, duckdb, msgspec"


def _shares(paths: list[str], workers: int) -> list[list[str]]:
    """The files shared out by size, largest first, each to the least loaded worker."""
    load = [(0, i) for i in range(workers)]
    out: list[list[str]] = [[] for _ in range(workers)]
    for p in sorted(paths, key=lambda p: -os.path.getsize(p)):
        size, i = min(load)
        out[i].append(p)
        load[i] = (size + os.path.getsize(p), i)
    return out


def _decode_floor(paths: list[str], workers: int) -> float:
    """Wall seconds of `workers` fresh processes decoding their share of `paths`, one thread each."""
    env = {**os.environ, "POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", _DECODE, *share], cwd=REPO, env=env)
             for share in _shares(paths, workers) if share]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("decode floor: a process failed")
    return time.perf_counter() - t0


def _run_rows() -> list[tuple[str, str]]:
    from tracelake.ingest.discover import discover

    paths = [p for p in discover([str(SHARED / "traces")]) if not p.endswith((".nsys-rep", ".qdrep"))]
    _decode_floor(paths[:2], 1)  # warm-up: the files and the package into the page cache
    floor = _decode_floor(paths, 2)
    one = _decode_floor(paths, 1)
    rows = [(f"`run` floor: the {len(paths)} files of ../shared/traces decoded into base tables in memory, "
             "nothing else (2 processes; 1 process)", f"{floor:.1f} s; {one:.1f} s")]
    if HTA_PYTHON.exists():
        t_hta, n, crashed = hta_corpus()
        rows.append((f"  HTA parse + kernel + temporal breakdown, {n} PyTorch targets ({crashed} crashed), one process",
                     f"{t_hta:.1f} s"))
        best = t_hta / floor
        rows.append(("  HTA / the floor: the best ratio a run can reach (targets >= 10 without reports, "
                     ">= 3 with them)", f"{best:.1f}"))
        rows.append(("  time left for everything else (calling context, critical path, Parquet, derived views, "
                     "database) at 10x; for it and the reports at 3x",
                     f"{t_hta / 10 - floor:.1f} s; {t_hta / 3 - floor:.1f} s"))
    return rows


def _ingest_rows(tmp: Path) -> list[tuple[str, str]]:
    if not HTA_PYTHON.exists():
        return [("`ingest` vs HTA", f"not measured: no {HTA_PYTHON}")]
    path = str(SHARED / PYTORCH)
    hta = [str(HTA_PYTHON), "-c", HTA_PARSE, path]
    t_ingest, t_hta, ratio = paired(lambda i: TRACELAKE + ["ingest", "-q", path, "--lake", str(tmp / f"a{i}")], hta)
    t_bare, t_hta2, ratio2 = paired(lambda i: [sys.executable, "-c", _INGEST_WITHOUT_ANALYSES, path,
                                               str(tmp / f"b{i}")], hta)
    return [
        ("`tracelake ingest` 89 MB trace, new lake (process, median of 3 paired runs); HTA's parse (same pairs); "
         "HTA / it (target >= 5)", f"{t_ingest:.2f} s; {t_hta:.2f} s; {ratio:.1f} ({verdict(ratio, 5, True)})"),
        ("  the same less the calling context and the critical path (decode, base tables written, database); "
         "HTA's parse; HTA / it", f"{t_bare:.2f} s; {t_hta2:.2f} s; {ratio2:.1f} ({verdict(ratio2, 5, True)})"),
    ]


def _stats_rows(tmp: Path) -> list[tuple[str, str]]:
    if not TRACELENS_PYTHON.exists():
        return [("`stats` vs TraceLens", f"not measured: no {TRACELENS_PYTHON}")]
    size, rel = TRACELENS_TRACES[0]
    path = str(SHARED / rel)
    t_stats, t_tl, ratio = paired(TRACELAKE + ["stats", path], _tracelens(path, tmp / "tl1"))
    t_need, t_tl2, ratio2 = paired([sys.executable, "-c", _STATS_NEEDS, path], _tracelens(path, tmp / "tl2"))
    return [
        (f"`tracelake stats FILE`, default reports, {size} trace (process, median of 3 paired runs); TraceLens's "
         "perf report (same pairs); TraceLens / it (target >= 5)",
         f"{t_stats:.2f} s; {t_tl:.2f} s; {ratio:.1f} ({verdict(ratio, 5, True)})"),
        ("  what the defaults need before any view: decode, calling context and critical path (the findings "
         "read them); TraceLens; TraceLens / it: the best ratio with views that cost nothing",
         f"{t_need:.2f} s; {t_tl2:.2f} s; {ratio2:.1f} ({verdict(ratio2, 5, True)})"),
    ]


def run() -> list[tuple[str, str]]:
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-floors-"))
    rows = [("machine load (1, 5, 15-minute load average) at the start", load_average())]
    try:
        rows.append(("fresh Python importing polars, pyarrow, DuckDB and msgspec (best of 5)",
                     f"{best(lambda i: [sys.executable, '-c', _IMPORTS], 5):.2f} s"))
        rows += _ingest_rows(tmp)
        rows += _stats_rows(tmp)
        rows += _run_rows()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows.append(("machine load at the end", load_average()))
    return rows
