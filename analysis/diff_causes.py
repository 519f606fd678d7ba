"""The causes of a step-time change between two sides (`tracelake diff`, docs/diff.md).

Each side is a list of trace ids. Its figures come from the per-trace views steady_steps,
steady_gpu_work, steady_collectives, steady_idle and steady_syncs (sql/analysis/), summed over the side's traces
and divided by its number of steady steps (all ranks): ns per steady step, so that sides with
different step counts compare, and causes add up to a change of the mean step time.

A step's wall time is its GPU busy time plus its GPU idle time, so every nanosecond of GPU
work and idle time is given to exactly one cause:
- GPU work launched by an operator whose inputs changed type (the tensor types of its calls of
  one shape, or of all its changed calls, differ between the sides: bf16 on both sides in calls
  of another arity is no precision change): 'precision', removed and added calls netted in one
  cause per operator;
- GPU work of operator calls whose shapes exist on one side only: 'operator' (one cause per
  operator name; the evidence lists the shapes);
- the rest by operation name: kernels ('kernel'; the GEMM kernels that run on CUDA cores in fp32
  and exist on one side only are one 'precision' cause, net of the Tensor Core GEMM calls they
  replaced), copies and memsets ('memcpy', by direction and memory kind);
- collectives (steady_collectives) as 'communication', split as collective_instance_ranks
  splits them: the transfer once all ranks had joined, by operation ('all_reduce'), and the
  time ranks waited for the last to arrive, by that rank ('wait for rank 3'): a straggler's
  cost is the waiting it caused the others;
- idle time by what the launching thread did meanwhile (steady_idle; HOST_KINDS): a data-loading
  range, a synchronizing call and the late launches after it, an OS-runtime sleep or blocking
  call, no operator at all, else 'idle' by why the GPU waited.
The peak allocated GPU memory of the steady steps (memory_peaks) explains no step time: when it
differs by MIN_MEMORY_BYTES or more, a 'memory' cause with change_ns 0 follows the timed causes,
the peaks of both sides in its evidence.
Evidence is typed one way per key: times and bytes are int (ns, bytes per step), counts per step
and percentages float, names str (None where a side has none).
Overlapping GPU work (several streams) is counted in each operation: that overlap, and the
difference between the median and mean step, is what the causes leave unexplained.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from typing import Any

from ..lake.sql_literal import sql_string

# A GEMM kernel that runs on CUDA cores in fp32 (FFMA), from its name: cuBLAS/CUTLASS 'sgemm',
# xmma 'f32f32_f32f32 ... ffma'. A Tensor Core GEMM says hmma/wgmma/tf32/bf16/f16/nvjet.
_FP32_GEMM = re.compile(r"sgemm|gemm.*ffma|ffma.*gemm", re.IGNORECASE)
# a GEMM kernel of any precision, by its name (cuBLAS, cuBLASLt nvjet, CUTLASS, xmma)
_GEMM = re.compile(r"gemm|nvjet|cutlass|xmma", re.IGNORECASE)
MIN_CAUSE_NS = 1000  # causes under 1 us per step are not listed (their sum stays in unexplained)
MIN_MEMORY_BYTES = 1 << 20  # a peak that moved less than 1 MiB is not listed
# the kinds of GPU idle time, by what the launching thread did meanwhile (steady_idle)
HOST_KINDS = ("data_loading", "sync", "host_sleep", "host_blocking", "host_idle", "idle")


def trace_list(ids: list[str]) -> str:
    """A SQL list literal of trace ids."""
    return "(" + ", ".join(sql_string(t) for t in ids) + ")"


def side_figures(con, trace_ids: list[str]) -> dict:
    """The side's steady steps (wall times; and one per step of the run, for the noise test) and its
    GPU work, idle time and syncs per step."""
    where = f"trace_id IN {trace_list(trace_ids)}"
    walls = [r[0] for r in con.execute(f"SELECT wall_ns FROM steady_steps WHERE {where} ORDER BY ALL").fetchall()]
    # the noise test's samples: a step of the run once, its ranks' walls averaged (diff_noise)
    samples = [r[0] for r in con.execute(f"SELECT avg(wall_ns) FROM steady_steps WHERE {where} "
                                         f"GROUP BY step, step_index ORDER BY 1").fetchall()]
    n = max(len(walls), 1)
    work = con.execute(f"SELECT op_class, name, memory, launcher, launcher_shapes, launcher_dtypes, "
                       f"sum(calls), sum(duration_ns), sum(bytes) FROM steady_gpu_work WHERE {where} "
                       f"GROUP BY ALL").fetchall()
    idle = con.execute(f"SELECT kind, name, sum(gaps), sum(idle_ns) FROM steady_idle WHERE {where} "
                       f"GROUP BY ALL").fetchall()
    syncs = con.execute(f"SELECT name, sum(calls) FROM steady_syncs WHERE {where} GROUP BY ALL").fetchall()
    comm = con.execute(f"SELECT rank, operation, last_rank, calls, transfer_ns, wait_ns, skew_ns, bytes, kernel "
                       f"FROM steady_collectives WHERE {where}").fetchall()
    # the highest allocated level of any GPU in a steady step (NULL: no allocator events recorded)
    peak = con.execute(f"""SELECT max(m.peak_allocated_bytes) FROM memory_peaks m JOIN steady_steps s
                            ON m.trace_id = s.trace_id AND m.pid = s.pid AND m.step_start_ns = s.start_ns
                            WHERE m.{where} AND m.device_type = 'cuda'""").fetchone()[0]
    return {"walls": walls, "step_samples": samples, "steps": n, "peak_allocated_bytes": peak,
            "work": [(c, nm, mem, ln, sh, dt, calls / n, ns / n, (b or 0) / n)
                     for c, nm, mem, ln, sh, dt, calls, ns, b in work],
            "idle": {(k, nm): (gaps / n, ns / n) for k, nm, gaps, ns in idle},
            "syncs": {nm: calls / n for nm, calls in syncs},
            "collectives": [(rank, op, last, calls / n, transfer / n, wait / n, skew or 0, (b or 0) / n, kernel, calls)
                            for rank, op, last, calls, transfer, wait, skew, b, kernel in comm]}


def per_step(count: float) -> float:
    """A count per step in the evidence: always a float (2 decimals), so that every cause's evidence
    has one type per key (polars.DataFrame(result["causes"]) refuses ints and floats mixed)."""
    return round(float(count), 2)


def _cause(kind: str, name: str, base: float, new: float, evidence: dict) -> dict:
    return {"kind": kind, "name": name, "change_ns": round(new - base),
            "evidence": {"base_ns_per_step": round(base), "new_ns_per_step": round(new), **evidence}}


def _operator_groups(base_work, new_work) -> dict:
    """row -> (kind, operator name) for the GPU work that a precision or operator cause takes."""
    keys: dict[str, defaultdict[str, set]] = {side: defaultdict(set) for side in ("base", "new")}
    for side, work in (("base", base_work), ("new", new_work)):
        for _c, _nm, _mem, ln, sh, dt, *_ in work:
            if ln is not None and sh is not None:
                keys[side][ln].add((sh, dt))
    claims = {}
    for op in keys["base"].keys() | keys["new"].keys():
        b, n = keys["base"][op], keys["new"][op]
        only_b, only_n = b - n, n - b
        if not only_b and not only_n:
            continue
        # the same shapes whose inputs changed type
        retyped = {sh for sh in {s for s, _ in only_b} & {s for s, _ in only_n}
                   if _input_types({k for k in only_b if k[0] == sh}) != _input_types({k for k in only_n if k[0] == sh})}
        claims.update({(op, *k): ("precision", op) for k in only_b | only_n if k[0] in retyped})
        rest = {k for k in only_b | only_n if (op, k[0], k[1]) not in claims}
        types_b = _input_types({k for k in rest if k in only_b})
        types_n = _input_types({k for k in rest if k in only_n})
        kind = "precision" if types_b and types_n and types_b != types_n else "operator"
        claims.update({(op, sh, dt): (kind, op) for sh, dt in rest})
    return claims


def _net_fp32_gemms(groups: dict) -> None:
    """Merge the kernel groups of fp32 GEMMs on CUDA cores that run on one side only (by name) into
    one 'precision' cause, named after the largest, netted against the GEMM calls they replaced: the
    calls that Tensor Core GEMM kernels run on both sides lost (fp32 added) or gained (fp32 removed),
    at those kernels' mean time per call, move from their 'kernel' causes into it."""
    fp32 = sorted((k for k, g in groups.items() if k[0] == "kernel" and _FP32_GEMM.search(k[1])
                   and not (g["base"] and g["new"])), key=lambda k: (-abs(groups[k]["new"] - groups[k]["base"]), k))
    if not fp32:
        return
    net: dict[str, Any] = {"base": 0.0, "new": 0.0, "calls": [0.0, 0.0], "ops": set(), "bytes": [0.0, 0.0], "memory": ({}, {}),
           "kernels": []}
    for k in fp32:
        g = groups.pop(k)
        for i, side in enumerate(("base", "new")):
            net[side] += g[side]
            net["calls"][i] += g["calls"][i]
        net["ops"] |= g["ops"]
        net["kernels"].append(f"{'new' if g['new'] else 'base'}: {k[1]} x{per_step(max(g['calls']))}")
    added = net["new"] > net["base"]
    i, side = (0, "base") if added else (1, "new")  # the side whose GEMMs ran the replaced calls
    for k, g in sorted(groups.items(), key=lambda kg: repr(kg[0])):
        if k[0] != "kernel" or not _GEMM.search(k[1]) or not (g["calls"][0] and g["calls"][1]):
            continue
        replaced = g["calls"][i] - g["calls"][1 - i]
        if replaced <= 0:
            continue
        ns = replaced * g[side] / g["calls"][i]
        g[side] -= ns
        g["calls"][i] -= replaced
        net[side] += ns
        net["kernels"].append(f"{side} (replaced): {k[1]} x{per_step(replaced)}")
    groups[("precision", fp32[0][1])] = net


def _input_types(calls: set[tuple]) -> frozenset[str]:
    """The tensor types among the inputs of these (shapes, dtypes) calls: launcher_dtypes is a JSON
    list with '' for an input that is no tensor (a list of types for a tensor list). A call with more or fewer inputs of the same
    types (eager against compiled) has the same types."""
    return frozenset(t for _, dt in calls if dt for t in _tensor_types(json.loads(dt)))


def _tensor_types(value) -> list[str]:
    """The type names in a launcher_dtypes value (a list of inputs; a tensor list input is a list)."""
    if isinstance(value, list):
        return [t for v in value for t in _tensor_types(v)]
    return [value] if isinstance(value, str) and value else []


def _canonical(rows) -> list:
    """Rows in one order whatever order a query returned them in (the evidence lists follow it)."""
    return sorted(rows, key=repr)


class _Sums(defaultdict):
    """Lists of float terms by key, added up exactly at the end (`totals`): a float sum's last bit,
    so a rounded nanosecond, depends on the order of its terms, and rows that tie in a view's
    attribution (which operator launched a kernel) can come in another order from one process
    to the next; math.fsum's correctly rounded sum does not depend on it."""

    def __init__(self):
        super().__init__(list)

    def totals(self) -> dict:
        return {k: math.fsum(v) for k, v in self.items()}


def causes(base: dict, new: dict) -> list[dict]:
    """The causes of the change from `base` to `new` (side_figures), largest |change_ns| first.
    The same rows in any order give the same causes."""
    # communication kernels are the collectives' (communication_causes), not kernels or operators
    base = {**base, "work": _canonical(w for w in base["work"] if w[0] != "communication")}
    new = {**new, "work": _canonical(w for w in new["work"] if w[0] != "communication")}
    claims = _operator_groups(base["work"], new["work"])
    sums: dict[tuple, dict] = defaultdict(lambda: {"ns": (_Sums(), _Sums()), "ops": set()})
    for i, (side, work) in enumerate((("base", base["work"]), ("new", new["work"]))):
        for op_class, name, memory, ln, sh, dt, calls, ns, nbytes in work:
            claim = claims.get((ln, sh, dt))
            if claim:
                key = claim
            elif op_class == "compute":
                key = ("kernel", name)
            else:
                key = ("memcpy", name)
            acc = sums[key]
            terms = acc["ns"][i]
            terms["time"].append(ns)
            terms["calls"].append(calls)
            terms["bytes"].append(nbytes)
            if memory:
                terms["memory", memory].append(ns)
            if claim or ln is not None:
                acc["ops"].add((side, ln, sh, dt) if claim else (side, ln, None, None))
    groups: dict[tuple, dict] = {}
    for key, acc in sums.items():
        b, n = acc["ns"][0].totals(), acc["ns"][1].totals()
        groups[key] = {"base": b.get("time", 0.0), "new": n.get("time", 0.0), "ops": acc["ops"],
                       "calls": [b.get("calls", 0.0), n.get("calls", 0.0)],
                       "bytes": [b.get("bytes", 0.0), n.get("bytes", 0.0)],
                       "memory": tuple({k[1]: v for k, v in t.items() if isinstance(k, tuple)} for t in (b, n))}
    _net_fp32_gemms(groups)
    out = []
    for (kind, name), g in groups.items():
        ev: dict[str, Any] = {"calls_per_step": [per_step(c) for c in g["calls"]]}
        if kind in ("precision", "operator"):
            ev["launches"] = sorted({f"{s}: {ln} {sh or ''} {dt or ''}".strip() for s, ln, sh, dt in g["ops"]})
        elif g["ops"]:
            ev["launched_by"] = sorted({ln for _, ln, _, _ in g["ops"]})[:5]
        if "kernels" in g:
            ev["kernels"] = g["kernels"]
            ev["note"] = "fp32 GEMMs on CUDA cores (no Tensor Cores), by kernel name, net of the GEMM calls they replaced"
        if kind == "memcpy":
            ev["bytes_per_step"] = [round(b) for b in g["bytes"]]
            ev["memory_ns_per_step"] = {m: [round(g["memory"][0].get(m, 0)), round(g["memory"][1].get(m, 0))]
                                        for m in sorted(g["memory"][0].keys() | g["memory"][1].keys())}
        out.append(_cause(kind, name, g["base"], g["new"], ev))
    for kind, name in base["idle"].keys() | new["idle"].keys():
        gb, b = base["idle"].get((kind, name), (0, 0))
        gn, n = new["idle"].get((kind, name), (0, 0))
        ev = {"gaps_over_10us_per_step": [per_step(gb), per_step(gn)]}
        if kind == "sync":
            counts = {s: [per_step(base["syncs"].get(s, 0)), per_step(new["syncs"].get(s, 0))]
                      for s in sorted(base["syncs"].keys() | new["syncs"].keys())}
            ev["sync_calls_per_step"] = {s: c for s, c in counts.items() if s == name or c[0] != c[1]}
        out.append(_cause(kind, name, b, n, ev))
    out += communication_causes(base.get("collectives", []), new.get("collectives", []))
    out = [c for c in out if abs(c["change_ns"]) >= MIN_CAUSE_NS]
    return sorted(out, key=lambda c: (-abs(c["change_ns"]), c["kind"], c["name"])) + memory_causes(base, new)


def communication_causes(base: list[tuple], new: list[tuple]) -> list[dict]:
    """'communication' causes from two sides' steady_collectives rows (side_figures): the transfer
    time by operation, and the time ranks waited by the rank that arrived last ('wait for rank N',
    with how often that rank was the last to arrive: the straggler)."""
    ops: dict[str, dict] = defaultdict(lambda: {"sums": (_Sums(), _Sums()), "kernels": set()})
    waits: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
    last: dict[int, list[list[int]]] = defaultdict(lambda: [[0, 0, 0], [0, 0, 0]])  # last, matched, skew
    for i, rows in enumerate((base, new)):
        for rank, op, last_rank, calls, transfer, wait, skew, nbytes, kernel, n_calls in _canonical(rows):
            g = ops[op]
            g["sums"][i]["ns"].append(transfer)
            g["sums"][i]["calls"].append(calls)
            g["sums"][i]["bytes"].append(nbytes)
            g["kernels"].add(kernel)
            if last_rank is None:
                continue
            waits[last_rank][i].append(wait)
            if rank is not None:
                last[rank][i][1] += n_calls
                if rank == last_rank:
                    last[rank][i][0] += n_calls
                    last[rank][i][2] += skew
    out = []
    for op, g in ops.items():
        t = [sums.totals() for sums in g["sums"]]
        out.append(_cause("communication", op, t[0].get("ns", 0.0), t[1].get("ns", 0.0), {
            "calls_per_step": [per_step(x.get("calls", 0.0)) for x in t],
            "bytes_per_step": [round(x.get("bytes", 0.0)) for x in t], "kernels": sorted(g["kernels"])[:3]}))
    for r, (b, n) in waits.items():
        counts = last[r]
        out.append(_cause("communication", f"wait for rank {r}", math.fsum(b), math.fsum(n), {
            "note": "time the other ranks waited in collectives this rank arrived last at",
            "arrived_last_pct": [round(100 * c[0] / c[1], 1) if c[1] else None for c in counts],
            "mean_skew_ns": [round(c[2] / c[0]) if c[0] else None for c in counts]}))
    return out


def memory_causes(base: dict, new: dict) -> list[dict]:
    """The 'memory' cause: the steady steps' peak allocated GPU memory, when both sides recorded it
    and it moved by MIN_MEMORY_BYTES or more. It takes no step time (change_ns 0)."""
    b, n = base.get("peak_allocated_bytes"), new.get("peak_allocated_bytes")
    if b is None or n is None or abs(n - b) < MIN_MEMORY_BYTES:
        return []
    return [_cause("memory", "peak allocated GPU memory", 0, 0,
                   {"peak_allocated_bytes": [int(b), int(n)], "change_bytes": int(n - b),
                    "change_pct": round(100 * (n - b) / b, 2) if b else None})]
