"""`tracelake diff` against recorded truth (issue #30): tests/recorded/record_diff.py planted one
cause per variant in a bf16 MLP training loop and timed it with CUDA events inside the recorded
steps (diff_h100_truth.json); each variant was recorded under the PyTorch profiler and under
Nsight Systems. The diff of base against each variant must find the step-time change (within
10 % of the events' change of the median step: events at the boundaries of the steps' ranges, so
the wall time a user reads), name the planted cause among its largest with about the events'
cost, and call base against base (or a second recording of it) noise."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import pty
import random
import subprocess
import sys

import pytest
from conftest import DATA, REPO
from tracelake.analysis import diff_causes, diff_gate, diff_noise
from tracelake.jobs.diff import DiffInputError, diff
from tracelake.jobs.ingest_job import ingest_paths

RECORDED = REPO / "tests" / "recorded"
TRUTH = json.loads((RECORDED / "diff_h100_truth.json").read_text())
FILES = {"torch": "torch-2.11_diff-{}_h100.pt.trace.json.gz", "nsys": "nsys-2025.3.1_diff-{}_h100.sqlite.gz"}
VARIANTS = ["slow-kernel", "host-sync", "fp32-gemm", "pageable", "all"]


def path(source: str, variant: str) -> str:
    return str(RECORDED / FILES[source].format(variant))


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """Every recording in one lake; the sides are named by trace id prefix."""
    where = tmp_path_factory.mktemp("diff") / "lake"
    outcomes = ingest_paths([path(s, v) for s in FILES for v in ["base", "base-repeat", *VARIANTS]], where)
    assert all(o.status == "ok" for o in outcomes)
    return where


_cache: dict = {}


def diffed(lake, source: str, base: str, new: str) -> dict:
    key = (source, base, new)
    if key not in _cache:
        prefix = FILES[source].split("{")[0]
        _cache[key] = diff(f"{prefix}{base}_h100-", f"{prefix}{new}_h100-", lake=lake)
    return _cache[key]


def _truth_change(source: str, variant: str, key: str) -> float:
    return (TRUTH[source][variant][key + "_median"] - TRUTH[source]["base"][key + "_median"]) * 1e6


@pytest.mark.parametrize("source", FILES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_step_time_change_matches_the_events(lake, source, variant):
    r = diffed(lake, source, "base", variant)
    # step_ms: CUDA events at the step range's boundaries, the wall time the diff's steps hold
    # (not gpu_step_ms, the GPU's span from the first launch to the last: host time around it
    # moves from recording to recording, 0.1 to 0.35 ms per step)
    expected = _truth_change(source, variant, "step_ms")
    assert abs(r["step_time_ns"]["change_ns"] - expected) <= 0.10 * abs(expected)
    assert r["steps"]["new"]["steps"] == TRUTH[source][variant]["steps"]  # the same steps as the events
    assert r["noise"]["verdict"] == ("slower" if expected > 0 else "faster")
    # the causes account for the change of the mean step, up to 2 %
    mean_change = r["steps"]["new"]["mean_ns"] - r["steps"]["base"]["mean_ns"]
    assert abs(r["unexplained_ns"]) < 0.02 * mean_change


# planted cause -> (the kinds it may be reported as, a name test, the truth it costs)
PLANTED = {
    "slow_kernel": ({"operator", "kernel"}, lambda n: n == "aten::mm" or n.startswith("nvjet"), "gemm_ms"),
    "fp32_gemm": ({"precision"}, lambda n: n == "aten::mm" or "f32f32" in n, "gemm_ms"),
    "host_sync": ({"sync"}, lambda n: n == "cudaStreamSynchronize", "drain_ms"),
    "pageable": ({"memcpy"}, lambda n: n == "Memcpy HtoD", "copy_ms"),
}


@pytest.mark.parametrize("source", FILES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_planted_cause_is_among_the_top_causes(lake, source, variant):
    r = diffed(lake, source, "base", variant)
    planted = TRUTH[source][variant]["causes"]
    if {"slow_kernel", "fp32_gemm"} <= set(planted):
        planted = [c for c in planted if c != "slow_kernel"]  # the same GEMM: one precision cause
    top = r["causes"][: len(planted) + 2]
    for cause in planted:
        kinds, named, key = PLANTED[cause]
        found = [c for c in top if c["kind"] in kinds and named(c["name"])]
        assert found, f"{cause} not among {[(c['kind'], c['name']) for c in top]}"
        # its cost, per step, is about the events' (the host sync's: the GPU's drain before the optimizer)
        assert found[0]["change_ns"] == pytest.approx(_truth_change(source, variant, key), rel=0.25)


@pytest.mark.parametrize("source", FILES)
@pytest.mark.parametrize("other", ["base", "base-repeat"])
def test_base_against_base_is_within_noise(lake, source, other):
    r = diffed(lake, source, "base", other)
    assert r["noise"]["verdict"] == "within noise"
    assert all(abs(c["change_ns"]) < r["noise"]["spread_ns"] for c in r["causes"])


def cli(*args):
    return subprocess.run([sys.executable, "-m", "tracelake.cli.main", "diff", *map(str, args)],
                          cwd=REPO, capture_output=True, text=True)


GATE = ["--fail-if", "step_time > +5%", "--fail-if", "kernel:* > +10%", "--fail-if", "idle > +2ms",
        "--fail-if", "sync > +500us", "--fail-if", "memcpy > +10%"]


def test_cli_base_against_repeat_passes_the_gate():
    done = cli(path("torch", "base"), path("torch", "base-repeat"), *GATE)
    assert done.returncode == 0, done.stderr
    assert "within noise" in done.stdout and done.stderr == ""


def test_cli_fails_with_one_line_per_condition(lake):
    done = cli("--lake", lake, "torch-2.11_diff-base_h100-", "torch-2.11_diff-all_h100-", *GATE, "--format", "json")
    assert done.returncode == 1
    fired = done.stderr.strip().splitlines()
    assert [line.split(":")[0] for line in fired] == ["FAIL   step_time > +5%", "FAIL   sync > +500us",
                                                      "FAIL   memcpy > +10%"]
    # stdout holds exactly the JSON object, the same as the Python API's
    assert json.loads(done.stdout) == json.loads(json.dumps(diffed(lake, "torch", "base", "all")))


def test_json_object_has_the_issue_keys(lake):
    r = diffed(lake, "nsys", "base", "host-sync")
    assert {"base", "new", "step_time_ns", "causes"} <= r.keys()
    assert set(r["step_time_ns"]) == {"base", "new", "change_ns", "change_pct"}
    kinds = {"kernel", "operator", "precision", "sync", "idle", "memcpy", "communication", "memory"}
    for c in r["causes"]:
        assert set(c) == {"kind", "name", "change_ns", "evidence"} and c["kind"] in kinds
    changes = [abs(c["change_ns"]) for c in r["causes"]]
    assert changes == sorted(changes, reverse=True)
    sync = r["causes"][0]
    assert sync["evidence"]["sync_calls_per_step"]["cudaStreamSynchronize"] == [0, 1.0]


def test_csv_has_a_row_per_cause():
    done = cli(path("nsys", "base"), path("nsys", "pageable"), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert rows[0]["kind"] == "step_time" and rows[-1]["kind"] == "unexplained"
    assert rows[1]["kind"] == "memcpy" and rows[1]["name"] == "Memcpy HtoD"
    assert json.loads(rows[1]["evidence"])["memory_ns_per_step"].keys() == {"pageable -> device",
                                                                             "pinned -> device"}


@pytest.mark.parametrize("args, says", [
    (["missing.json", "other.json"], "missing.json: no such file or folder"),
    ([RECORDED / "record_diff.py", RECORDED / "record_diff.sh"], "record_diff.py: unknown format"),
    ([RECORDED / FILES["torch"].format("base")] * 2 + ["--fail-if", "step_time > 5"], "not METRIC OP VALUE"),
    ([RECORDED / FILES["torch"].format("base")] * 2 + ["--fail-if", "latency > 5%"], "unknown metric"),
])
def test_bad_input_is_one_line_and_exit_2(args, says):
    done = cli(*args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and says in done.stderr and "Traceback" not in done.stderr


def test_api_raises_value_error_naming_the_file():
    import tracelake

    with pytest.raises(ValueError, match="nothing-here"):
        tracelake.diff("nothing-here", path("torch", "base"))
    assert issubclass(DiffInputError, ValueError)


def _brute_force_p(a: list[float], b: list[float]) -> float:
    """The two-sided exact p of the rank-sum test by dealing the pooled values to two sides every
    possible way (mid-ranks for ties): independent of diff_noise's counting."""
    pooled = sorted(a + b)
    rank = {v: sum(i + 1 for i, w in enumerate(pooled) if w == v) / pooled.count(v) for v in pooled}
    ranks = [rank[v] for v in a + b]
    mean = len(a) * (len(pooled) + 1) / 2
    seen = abs(sum(rank[v] for v in a) - mean)
    deals = list(itertools.combinations(range(len(pooled)), len(a)))
    return sum(abs(sum(ranks[i] for i in d) - mean) >= seen - 1e-9 for d in deals) / len(deals)


def test_exact_rank_test_p_values():
    # complete separation: only the two most extreme of C(n, n1) dealings are as far from the mean
    assert diff_noise.rank_test([1, 2, 3, 4], [5, 6, 7, 8])[0] == pytest.approx(2 / math.comb(8, 4))  # 0.029
    assert diff_noise.rank_test([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])[0] == pytest.approx(2 / math.comb(10, 5))  # 0.008
    assert diff_noise.rank_test([1, 2, 3], [4, 5, 6])[:2] == pytest.approx((0.1, 0.1))
    assert diff_noise.rank_test([1, 2, 3], [1, 2, 3])[0] == 1.0
    rng = random.Random(49)
    for n1, n2 in ((4, 4), (5, 3), (6, 7)):  # ties: values from a few levels only
        a, b = [rng.choice([1, 2, 3, 4]) for _ in range(n1)], [rng.choice([2, 3, 4, 5]) for _ in range(n2)]
        assert diff_noise.rank_test(a, b)[0] == pytest.approx(_brute_force_p(a, b)), (a, b)


def test_verdicts_from_few_steps():
    base, slower = [100.0, 101, 102, 103, 104], [112.0, 113, 114, 115, 116]  # every new step slower, +11 %
    assert diff_noise.verdict(base, slower)["verdict"] == "slower"  # p = 2/252
    assert diff_noise.verdict(base[:4], slower[:4])["verdict"] == "slower"  # p = 2/70 < 0.05
    assert diff_noise.verdict(slower[:4], base[:4])["verdict"] == "faster"
    for n1, n2 in ((3, 3), (1, 5), (5, 1), (2, 5)):  # no outcome could reach p < 0.05
        assert diff_noise.verdict(base[:n1], slower[:n2])["verdict"] == diff_noise.INCONCLUSIVE
    assert diff_noise.verdict(base[:3], [v + 1 for v in base[:3]])["verdict"] == "within noise"  # under the floor
    mixed = [99.0, 103.5, 112, 113, 114]  # the median +10 %, beyond the IQR, but steps that overlap
    assert diff_noise.verdict(base, mixed)["verdict"] == "within noise"
    assert diff_noise.verdict(base, mixed)["p_value"] == pytest.approx(_brute_force_p(base, mixed))
    assert _brute_force_p(base, mixed) > 0.05


def test_noise_samples_and_floor():
    base = [1000.0 + i for i in range(10)]
    new = [1015.0 + i for i in range(10)]  # +1.5 %: beyond the IQR (4.5), p < 0.01
    assert diff_noise.rank_test(base, new)[0] < diff_noise.ALPHA
    assert diff_noise.verdict(base, new)["verdict"] == "within noise"  # under the 2 % floor
    assert diff_noise.verdict(base, new, floor_pct=1.0)["verdict"] == "slower"
    # without the floor, the rank test alone decides a shift inside the IQR (4 of 9)
    shifted = [v + 4 for v in base]
    p = diff_noise.rank_test(base, shifted)[0]
    assert diff_noise.verdict(base, shifted, floor_pct=0)["verdict"] == ("slower" if p < diff_noise.ALPHA else "within noise")
    assert diff_noise.verdict(base, [v + 1 for v in base], floor_pct=0)["verdict"] == "within noise"  # p > 0.05


def test_conditions_parse_and_fire():
    c = diff_gate.parse("kernel:nvjet* >= -2.5ms")
    assert (c.metric, c.pattern, c.op, c.value, c.percent) == ("kernel", "nvjet*", ">=", -2.5e6, False)
    r = {"steps": {"base": {"median_ns": 100, "p90_ns": 100}, "new": {"median_ns": 110, "p90_ns": 110}},
         "noise": {"verdict": "slower", "why": "p = 0.008 < 0.05", "spread_ns": 50},
         "causes": [{"kind": "kernel", "name": "k", "change_ns": 10,
                     "evidence": {"base_ns_per_step": 0, "new_ns_per_step": 10}},
                    {"kind": "kernel", "name": "j", "change_ns": 20,
                     "evidence": {"base_ns_per_step": 100, "new_ns_per_step": 120}}]}
    fired = diff_gate.check(diff_gate.parse("step_time > +5%"), r)
    assert fired.failed and "verdict slower (p = 0.008 < 0.05)" in fired.line
    assert diff_gate.check(diff_gate.parse("step_time > +10%"), r) is None
    # a cause that appears from nothing is beyond the noise however small: +inf %
    assert "absent from base" in diff_gate.check(diff_gate.parse("kernel:k > +10%"), r).line
    # one on both sides counts only beyond the steps' spread
    assert diff_gate.check(diff_gate.parse("kernel:j > +10%"), r) is None
    r["noise"]["spread_ns"] = 19
    assert diff_gate.check(diff_gate.parse("kernel:j > +10%"), r).failed
    r["noise"]["verdict"] = "within noise"
    assert diff_gate.check(diff_gate.parse("step_time > +5%"), r) is None
    r["noise"]["verdict"] = diff_noise.INCONCLUSIVE
    undecided = diff_gate.check(diff_gate.parse("step_time > +5%"), r)
    assert not undecided.failed and diff_noise.INCONCLUSIVE in undecided.line


def test_a_new_sync_fires_a_cause_gate(lake):
    """The planted .item() sync appears from nothing: its gate fires even when the sync is smaller
    than the steps' spread."""
    r = diffed(lake, "torch", "base", "host-sync")
    sync = next(c for c in r["causes"] if c["kind"] == "sync")
    assert sync["evidence"]["base_ns_per_step"] == 0
    r = {**r, "noise": {**r["noise"], "spread_ns": 10 * sync["change_ns"]}}
    assert diff_gate.check(diff_gate.parse(f"sync > +{sync['change_ns'] // 2000}us"), r).failed


def test_terminal_table_has_its_line_breaks():
    """On a terminal (a pseudo-terminal here), the table is its lines, as in a pipe: not one line
    of escaped '\\n' (issue #49)."""
    trace = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI with the terminal as its standard output
        os.chdir(REPO)
        os.execve(sys.executable, [sys.executable, "-m", "tracelake.cli.main", "diff", str(trace), str(trace)],
                  {**os.environ, "COLUMNS": "150"})
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    seen = b"".join(chunks).decode()
    piped = cli(trace, trace).stdout
    assert "\\n" not in seen
    # the terminal turns each line break into CR LF; the text is the pipe's, line for line
    assert seen.replace("\r\n", "\n").splitlines()[:3] == piped.splitlines()[:3]
    assert seen.count("\r\n") == piped.count("\n") > 10


def _types(value, path: str, seen: dict) -> None:
    """Each key path's value types (list items at 'path[]'; dict keys that are names, such as the
    sync calls of sync_calls_per_step, at 'path.*'), None left out."""
    if isinstance(value, dict):
        for k, v in value.items():
            _types(v, f"{path}.{'*' if path.endswith('per_step') else k}", seen)
    elif isinstance(value, list):
        for v in value:
            _types(v, f"{path}[]", seen)
    elif value is not None:
        seen.setdefault(path, set()).add(type(value).__name__)


@pytest.mark.parametrize("source", FILES)
def test_causes_are_typed_one_way_per_key(lake, source):
    """polars.DataFrame(result["causes"]) (docs/diff.md) refuses a key that holds ints in one
    cause and floats in another; so does any typed reader of the JSON."""
    import polars

    results = [diffed(lake, source, "base", v) for v in ["base-repeat", *VARIANTS]]
    seen: dict = {}
    for r in results:
        for c in r["causes"]:
            _types(c, "cause", seen)
        _types(r["noise"], "noise", seen)
    assert {path: kinds for path, kinds in seen.items() if len(kinds) > 1} == {}
    assert seen["cause.evidence.calls_per_step[]"] == {"float"} and seen["cause.change_ns"] == {"int"}
    for r in results:
        assert polars.DataFrame(r["causes"]).height == len(r["causes"])


def _work(launcher: str, shapes: str, dtypes: str, ns: float) -> tuple:
    """A steady_gpu_work row per step, as diff_causes.side_figures gives it."""
    return ("compute", f"kernel of {launcher} {shapes}", None, launcher, shapes, dtypes, 1.0, ns, 0.0)


def _side(*work) -> dict:
    return {"work": list(work), "idle": {}, "syncs": {}, "collectives": []}


def test_causes_do_not_depend_on_the_order_of_rows():
    """A query returns rows in any order (DuckDB's threads); the page and the JSON of one diff are
    two queries, and CI once showed them 1 ns apart. These three copies, 35121, 56661 and 57983 ns
    over 10 steps, sum to 14976.5 ns in one order and a bit under it in another."""
    rows = [("copy", "Memcpy HtoD (Pageable -> Device)", memory, None, None, None, 1.0, ns, 0.0)
            for memory, ns in (("pageable", 3512.1), ("pinned", 5666.1), ("device", 5798.3))]
    results = {json.dumps(diff_causes.causes(_side(), _side(*order)))
               for order in itertools.permutations(rows)}
    assert len(results) == 1
    assert json.loads(results.pop())[0]["change_ns"] in (14976, 14977)


def test_causes_do_not_depend_on_which_row_a_tie_gave_the_time():
    """Two processes can attribute the calls of one kernel to its launching operators differently
    where the view's attribution ties (the same kernel time, other launcher names): the rows
    differ, so sorting them does not give one order of terms. The MCP server's diff and the CLI's
    were once 1 ns apart in explained_ns. The kernel's cause is the same whichever launcher holds
    which of the three times (a sum near 14976.5 ns, as in the test above)."""
    times = (3512.1, 5666.1, 5798.3)
    results = set()
    for order in itertools.permutations(times):
        rows = [("compute", "gemm_kernel", None, launcher, None, None, 1.0, ns, 0.0)
                for launcher, ns in zip(("aten::addmm", "aten::linear", "aten::mm"), order)]
        results.add(json.dumps([c["change_ns"] for c in diff_causes.causes(_side(), _side(*rows))]))
    assert len(results) == 1


def test_precision_only_when_input_types_change():
    bf16_2, bf16_3 = '["c10::BFloat16","c10::BFloat16"]', '["c10::BFloat16","c10::BFloat16","c10::BFloat16"]'
    fp32_2 = '["float","float"]'
    base = _side(_work("aten::mm", "[[8,8],[8,8]]", bf16_2, 5000))
    # compiled: another arity and shapes, bf16 on both sides: an operator change, not precision
    r = diff_causes.causes(base, _side(_work("aten::mm", "[[8,8],[8,8],[8]]", bf16_3, 3000)))
    assert [(c["kind"], c["name"], c["change_ns"]) for c in r] == [("operator", "aten::mm", -2000)]
    # the same shapes in fp32: precision, the removed bf16 and the added fp32 calls netted in one cause
    r = diff_causes.causes(base, _side(_work("aten::mm", "[[8,8],[8,8]]", fp32_2, 9000)))
    assert [(c["kind"], c["name"], c["change_ns"]) for c in r] == [("precision", "aten::mm", 4000)]
    # other shapes in fp32 (the only changed calls): precision
    r = diff_causes.causes(base, _side(_work("aten::mm", "[[8,16],[16,8]]", fp32_2, 9000)))
    assert [(c["kind"], c["change_ns"]) for c in r] == [("precision", 4000)]
    # the same shapes and types, but an input that is no tensor now: not precision
    r = diff_causes.causes(base, _side(_work("aten::mm", "[[8,8],[8,8]]", '["c10::BFloat16","c10::BFloat16",""]', 7000)))
    assert [c["kind"] for c in r] == ["operator"]
