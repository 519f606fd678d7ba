"""Big inputs within a memory budget (issue #32, class 6), the many-ranks half: a 64-rank PyTorch
run made by re-ranking the smallest real multi-rank recording (tests/recorded/
torch-2.11_diff-comm-base-2rank_h200x2, two ranks of 1.4k events each on an H200 pair). Rank r is
a copy of recorded rank r % 2 with distributedInfo (rank, world_size, the process group's size
and ranks), the collectives' 'Rank' / 'Group size' / 'Process Group Ranks', its host pid/tid and
its GPU (device r % 8, as on 8-GPU hosts) rewritten; timestamps are kept, so all 64 files overlap
in time and, lying in one folder with one world size, form one run in rank_runs. The files are
written gzipped under a temporary folder (never in the repository). Then `tracelake run DIR --out
OUT --jobs 2` (ingest, derive, one page per rank and the index) runs in a fresh process, once for
8 ranks and once for 64, to see what grows with the rank count.

Memory: the peak RSS (VmHWM) of every process of the run is read from /proc while it lives (the
CLI process, the fork server's pool workers), and the largest is checked against ru_maxrss of all
its waited processes (this process is made their subreaper, so the pool workers, children of the
fork server that the CLI does not wait for, are counted too)."""

from __future__ import annotations

import ctypes
import gzip
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgspec

from .common import REPO

RECORDING = REPO / "tests" / "recorded" / "torch-2.11_diff-comm-base-2rank_h200x2"
RANKS = (8, 64)
GPUS_PER_HOST = 8
_PR_SET_CHILD_SUBREAPER = 36


def rank_doc(doc: dict, rank: int, world: int) -> dict:
    """`doc` (one recorded rank) as rank `rank` of `world`."""
    dist = doc["distributedInfo"]
    old_device, new_device = dist["rank"], rank % GPUS_PER_HOST
    host_pids = {e["pid"] for e in doc["traceEvents"] if e.get("cat") == "cpu_op"}
    new_host = 10_000 + rank
    ranks_text = str(list(range(world)))

    def pid(p):
        if p in host_pids:
            return new_host
        if isinstance(p, int) and not isinstance(p, bool) and p in (old_device, new_device):
            return new_device if p == old_device else old_device  # swap GPU lanes
        return p

    events = []
    for e in doc["traceEvents"]:
        e = dict(e)
        if e.get("ph") == "M" and e.get("name", "").startswith("process_") and e.get("pid") not in host_pids:
            events.append(e)  # "GPU n" labels stay with pid n
            continue
        if "pid" in e:
            e["pid"] = pid(e["pid"])
        if e.get("tid") in host_pids:
            e["tid"] = new_host
        args = e.get("args")
        if isinstance(args, dict):
            args = dict(args)
            if args.get("device") in (old_device, new_device):
                args["device"] = new_device if args["device"] == old_device else old_device
            if "Rank" in args:
                args["Rank"] = rank
            if "Group size" in args:
                args["Group size"] = world
            if "Process Group Ranks" in args:
                args["Process Group Ranks"] = ranks_text
            if e.get("name") == "thread_name" and isinstance(args.get("name"), str):
                for h in host_pids:
                    args["name"] = args["name"].replace(f"thread {h} ", f"thread {new_host} ")
            e["args"] = args
        events.append(e)
    out = dict(doc)
    out["distributedInfo"] = {**dist, "rank": rank, "world_size": world,
                              "pg_config": [{**pg, "pg_size": world, "ranks": list(range(world))}
                                            for pg in dist.get("pg_config", [])]}
    out["trace_id"] = f"{rank:032X}"
    out["traceName"] = f"rank{rank}.pt.trace.json"
    out["traceEvents"] = events
    return out


def big_run(folder: Path, ranks: int) -> tuple[list[int], list[int]]:
    """Write `ranks` rank files into `folder`; returns (gzipped sizes, events per rank)."""
    folder.mkdir(parents=True)
    recorded = [msgspec.json.decode(gzip.decompress((RECORDING / f"rank{r}.pt.trace.json.gz").read_bytes()))
                for r in (0, 1)]
    sizes, events = [], []
    for rank in range(ranks):
        doc = rank_doc(recorded[rank % 2], rank, ranks)
        data = gzip.compress(msgspec.json.encode(doc), compresslevel=6)
        (folder / f"rank{rank}.pt.trace.json.gz").write_bytes(data)
        sizes.append(len(data))
        events.append(len(doc["traceEvents"]))
    return sizes, events


def _descendants(root: int) -> dict[int, int]:
    """{pid: depth below `root`} of the processes whose parent chain reaches `root` (the fork
    server, a child, has depth 1 and its pool workers depth 2), or this process (subreaper)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier, depth = {root: 0}, {root, os.getpid()}, 0
    while frontier:
        depth += 1
        frontier = {p for p, pp in parents.items() if pp in frontier and p not in found and p != os.getpid()}
        found.update((p, depth) for p in frontier)
    return found


def _hwm_mib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) // 1024
    except (OSError, StopIteration, ValueError):
        return None


def measured_tree(cmd: list[str]) -> tuple[float, int, dict[str, int], int]:
    """Run `cmd`: (seconds, peak RSS in MiB of its largest process by ru_maxrss, {role: largest
    VmHWM in MiB seen among the processes of that role}, exit code). Roles: the CLI process, its
    children (the fork server, the resource tracker), the pool workers (the fork server's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    peaks: dict[int, int] = {}
    roles = {}
    done = threading.Event()
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def sample():
        while not done.wait(0.1):
            for p, depth in _descendants(child.pid).items():
                roles.setdefault(p, ("CLI process", "its children", "pool workers")[min(depth, 2)])
                if (mib := _hwm_mib(p)) is not None:
                    peaks[p] = max(mib, peaks.get(p, 0))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = rc = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - t0
    maxrss = usage.ru_maxrss
    while True:  # the fork server (with its workers' usage) and anything else reparented here
        try:
            maxrss = max(maxrss, os.wait4(-1, 0)[2].ru_maxrss)
        except ChildProcessError:
            break
    done.set()
    sampler.join()
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    if rc:
        print(stderr.decode(errors="replace")[-2000:], file=sys.stderr)
    by_role: dict[str, int] = {}
    for p, mib in peaks.items():
        by_role[roles[p]] = max(by_role.get(roles[p], 0), mib)
    return seconds, maxrss // 1024, by_role, rc


def checked(exe: str, out: Path, ranks: int) -> str:
    """What the lake and the pages say: traces in rank_runs per run, pages written."""
    query = ("SELECT count(DISTINCT run_id) AS runs, count(DISTINCT trace_id) AS traces, "
             "count(DISTINCT rank) AS ranks, min(rank) AS first, max(rank) AS last FROM rank_runs")
    got = json.loads(subprocess.run([exe, "sql", "--lake", str(out / "lake"), "--format", "json", query],
                                    capture_output=True, text=True, check=True).stdout)[0]
    pages = len(list((out / "reports" / "traces").glob("*.html")))
    index = (out / "reports" / "index.html").exists()
    ok = (got["runs"], got["traces"], got["ranks"], got["first"], got["last"], pages, index) == (
        1, ranks, ranks, 0, ranks - 1, ranks, True)
    return (f"{'right' if ok else 'WRONG'}: rank_runs has {got['runs']} run of {got['traces']} traces "
            f"(ranks {got['first']}..{got['last']}); {pages} pages + {'index' if index else 'NO index'}")


def run() -> list[tuple[str, str]]:
    exe = str(Path(sys.executable).with_name("tracelake"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="tracelake-ranks-") as tmp:
        tmp = Path(tmp)
        for ranks in RANKS:
            sizes, events = big_run(tmp / f"r{ranks}", ranks)
            if ranks == max(RANKS):
                rows.insert(0, ("input", f"{ranks} rank files of {min(events):,}-{max(events):,} events "
                             f"({sum(events):,} in all), {min(sizes) / 1e3:.0f}-{max(sizes) / 1e3:.0f} KB "
                             f"gzipped each ({sum(sizes) / 1e6:.1f} MB), re-ranked from {RECORDING.name}"))
            out = tmp / f"out{ranks}"
            s, rss, roles, rc = measured_tree([exe, "run", str(tmp / f"r{ranks}"), "--out", str(out),
                                               "--jobs", "2", "-q"])
            per_role = ", ".join(f"{role} {mib:,} MiB" for role, mib in sorted(roles.items()))
            rows.append((f"tracelake run --jobs 2, {ranks} ranks (ingest, derive, {ranks} pages + index)",
                         f"{s:.1f} s, peak RSS {rss:,} MiB (largest process; by role: {per_role}), exit {rc}"))
            rows.append((f"  result, {ranks} ranks", checked(exe, out, ranks) if rc == 0 else "run failed"))
    return rows
