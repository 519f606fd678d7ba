"""Calling-context trees on real traces: totals add up, code gets the GPU time it launched."""

from __future__ import annotations

import json

import pytest
from tracelake.cli.main import main

GEMM = "(gemm|nvjet|cutlass)"


def _trace_id(con, file_name: str) -> str:
    return con.execute("SELECT trace_id FROM traces WHERE file_name = ?", [file_name]).fetchone()[0]


def _share_under(con, trace_id: str, tree: str, leaf_pattern: str, ancestor_pattern: str, category=None) -> float:
    """Share of the GPU time of leaves matching leaf_pattern that has an ancestor matching ancestor_pattern."""
    row = con.execute("""
        WITH leaves AS (
            SELECT n.node_id, l.gpu_ns FROM callctx_leaves l
            JOIN callctx_nodes n USING (trace_id, tree, node_id)
            WHERE l.trace_id = ? AND l.tree = ? AND regexp_matches(n.label, ?)
              AND (? IS NULL OR n.kind = ?)
        ),
        hit AS (
            SELECT DISTINCT a.leaf_id FROM callctx_ancestry a
            JOIN callctx_nodes n ON n.trace_id = a.trace_id AND n.tree = a.tree AND n.node_id = a.node_id
            WHERE a.trace_id = ? AND a.tree = ? AND regexp_matches(n.label, ?)
        )
        SELECT sum(gpu_ns) FILTER (WHERE node_id IN (SELECT leaf_id FROM hit)) / sum(gpu_ns) FROM leaves
    """, [trace_id, tree, leaf_pattern, category, category, trace_id, tree, ancestor_pattern]).fetchone()[0]
    return float(row or 0)


def _check_totals(con):
    rows = con.execute("""
        SELECT t.trace_id, c.tree, c.inclusive_kernel_ns,
               (SELECT coalesce(sum(duration_ns), 0) FROM kernels k WHERE k.trace_id = t.trace_id)
        FROM traces t JOIN callctx_topdown c ON c.trace_id = t.trace_id AND c.node_id = 0""").fetchall()
    assert rows
    for trace_id, tree, root, total in rows:
        assert root == total, (trace_id, tree)
    # identical paths merge: no two siblings share a label
    dup = con.execute("SELECT count(*) FROM (SELECT trace_id, tree, parent_id, label, kind FROM callctx_nodes "
                      "GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
    assert dup == 0


def test_sample_totals_add_up(sample_con):
    _check_totals(sample_con)


@pytest.mark.corpus
def test_corpus_totals_add_up(corpus_con):
    _check_totals(corpus_con)


def test_input_copy_lands_on_the_line_that_copies_the_batch(sample_con):
    # gen_traces.py line 33: x, y = xs.to(dev), ys.to(dev)  (pageable host-to-device copies)
    trace = _trace_id(sample_con, "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz")
    share = _share_under(sample_con, trace, "stack", "^Memcpy HtoD", r"^gen_traces\.py\(33\): resnet_step$")
    assert share > 0.95


@pytest.mark.corpus
def test_gpt2_forward_backward_optimizer_shares(corpus_con):
    trace = _trace_id(corpus_con, "torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz")
    shares = dict(corpus_con.execute(
        "SELECT label, inclusive_pct FROM callctx_topdown WHERE trace_id = ? AND tree = 'stack' AND depth = 2",
        [trace]).fetchall())
    backward = next(v for k, v in shares.items() if "_tensor.py" in k and k.endswith("backward"))
    forward = shares["nn.Module: GPT2LMHeadModel_0"]
    optimizer = next(v for k, v in shares.items() if "optimizer.py" in k)
    # backward kernels run on autograd threads; they are attributed to the loss.backward() frame
    assert 40 < backward < 70 and 25 < forward < 50 and 3 < optimizer < 20
    assert backward + forward + optimizer > 99


@pytest.mark.corpus
def test_nsys_gemms_land_under_aten_matmul_and_autograd_ranges(corpus_con):
    trace = _trace_id(corpus_con, "nsys-2025.3.1_gpt2-train-pystacks_h100.sqlite.gz")
    ops = r"^at::_ops::(addmm|mm|bmm|matmul|linear|baddbmm)(_backward)?::call$"
    assert _share_under(corpus_con, trace, "stack", GEMM, ops, "kernel") > 0.8
    ranges = r"^(aten::(addmm|mm|bmm|matmul|linear)|autograd::engine::evaluate_function: (Addmm|Mm|Bmm)Backward)"
    assert _share_under(corpus_con, trace, "nvtx", GEMM, ranges, "kernel") > 0.8


@pytest.mark.corpus
@pytest.mark.parametrize("file_name", ["hta_a100_trace_diff_control_rank3.json.gz",
                                       "kineto_resnet50_2021jan_array_format.pt.trace.json.gz"])
def test_traces_without_python_stacks_get_operator_chains(corpus_con, file_name):
    trace = _trace_id(corpus_con, file_name)
    kinds = {r[0] for r in corpus_con.execute(
        "SELECT DISTINCT kind FROM callctx_nodes WHERE trace_id = ? AND tree = 'stack'", [trace]).fetchall()}
    assert "op" in kinds and "python" not in kinds
    attributed = corpus_con.execute(
        "SELECT sum(inclusive_ns) FILTER (WHERE kind = 'op' AND depth = 1) / sum(inclusive_ns) FILTER (WHERE node_id = 0) "
        "FROM callctx_topdown WHERE trace_id = ? AND tree = 'stack'", [trace]).fetchone()[0]
    assert attributed > 0.5


def test_exports(sample_lake, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["callctx", "--lake", str(sample_lake), "--trace", "torch-2.11_mnist", "--format", "speedscope",
                 "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    profile = doc["profiles"][0]
    assert profile["unit"] == "nanoseconds" and len(profile["samples"]) == len(profile["weights"]) > 0
    assert all(0 <= i < len(doc["shared"]["frames"]) for s in profile["samples"] for i in s)
    assert main(["callctx", "--lake", str(sample_lake), "--trace", "torch-2.11_mnist"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(";" in line or " " in line for line in lines)
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == profile["endValue"]
    assert main(["callctx", "--lake", str(sample_lake), "--trace", "no-such-trace"]) == 2


@pytest.mark.corpus
def test_cpu_sampling_per_function(corpus_con):
    trace = _trace_id(corpus_con, "nsys-2023.2.3_cutlass-gemm-cpu-sampling_a40.sqlite")
    rows = corpus_con.execute("SELECT symbol, self_samples, total_samples, self_pct FROM cpu_sample_flat "
                              "WHERE trace_id = ? ORDER BY total_samples DESC", [trace]).fetchall()
    samples = corpus_con.execute("SELECT count(*) FROM cpu_samples WHERE trace_id = ?", [trace]).fetchone()[0]
    assert rows and samples == 13303
    assert sum(r[1] for r in rows) == samples  # every sample has exactly one leaf frame
    assert all(r[1] <= r[2] <= samples for r in rows)
