"""The index pairs a run only with an earlier run of the same program (run_comparison, issue #49):
same GPU model, as many ranks (the same rank for a rank's own file), shared operator and range
names. On corpus traces that the kernel-name rule (Jaccard >= 0.5) used to pair:

- GPT-2 DDP on 2 H200s with GPT-2 on one H100 (kernel-name similarity 0.95);
- GPT-2 on one H200 with that DDP run (0.99);
- llama3-sim with pytorch-nvtx-demo, both on an RTX 4060 Ti (0.67);
- rank 0 and rank 1 of that DDP run, their files kept in folders of their own (rank_runs then
  makes each a run of one trace).

The recorded MLP and its second recording (tests/recorded) are the same program and pair, and
the pair says why."""

from __future__ import annotations

import shutil

import pytest
from conftest import REPO
from tracelake.cli.main import main
from tracelake.lake.database import connect

pytestmark = pytest.mark.corpus

TORCH, NSYS = "traces/pytorch", "traces/nsys"
DDP = f"{TORCH}/torch-2.11_gpt2-ddp-2rank_h200x2"


@pytest.fixture(scope="module")
def con(corpus, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pairing")
    for rank in (0, 1):  # one rank's file alone in a folder: a run of its own
        (tmp / f"apart{rank}").mkdir()
        shutil.copy(corpus / DDP / f"rank{rank}.pt.trace.json.gz", tmp / f"apart{rank}" / f"gpt2-ddp-rank{rank}.pt.trace.json.gz")
    inputs = [corpus / f"{TORCH}/torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",
              corpus / f"{TORCH}/torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz", corpus / DDP,
              corpus / f"{NSYS}/nsys-2024.6.2_llama3-sim_rtx4060ti.sqlite",
              corpus / f"{NSYS}/nsys-2024.6.2_pytorch-nvtx-demo_rtx4060ti.sqlite",
              tmp / "apart0", tmp / "apart1",
              REPO / "tests/recorded/torch-2.11_diff-base_h100.pt.trace.json.gz",
              REPO / "tests/recorded/torch-2.11_diff-base-repeat_h100.pt.trace.json.gz"]
    assert main(["ingest", *map(str, inputs), "--lake", str(tmp / "lake"), "-q"]) == 0
    db = connect(tmp / "lake")
    yield db
    db.close()


def _kernel_similarity(con, run_a: str, run_b: str) -> float:
    """The old rule's figure, from the kernels table: shared kernel names / all of both runs'."""
    names = {}
    for run in (run_a, run_b):
        names[run] = {n for (n,) in con.execute(
            "SELECT DISTINCT k.name FROM runs r, unnest(r.trace_ids) u(t) JOIN kernels k ON k.trace_id = u.t "
            "WHERE r.first_file = ?", [run]).fetchall()}
    return len(names[run_a] & names[run_b]) / len(names[run_a] | names[run_b])


def test_only_the_same_program_is_paired(con):
    pairs = con.execute("""SELECT a.first_file, b.first_file, c.paired_because FROM run_comparison c
                           JOIN runs a ON a.run_id = c.run_id JOIN runs b ON b.run_id = c.previous_run_id""").fetchall()
    assert len(pairs) == 1, pairs
    new, base, why = pairs[0]
    assert {new, base} == {"torch-2.11_diff-base_h100.pt.trace.json.gz", "torch-2.11_diff-base-repeat_h100.pt.trace.json.gz"}
    assert why.startswith("program names differ (diff-base")
    assert "same GPU (H100 80GB HBM3)" in why and "100 % of operators and ranges shared" in why


@pytest.mark.parametrize("run_a, run_b", [
    ("rank0.pt.trace.json.gz", "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz"),  # the DDP run: H200 x2 / H100
    ("torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz", "rank0.pt.trace.json.gz"),  # 1 rank / 2
    ("nsys-2024.6.2_llama3-sim_rtx4060ti.sqlite", "nsys-2024.6.2_pytorch-nvtx-demo_rtx4060ti.sqlite"),
    ("gpt2-ddp-rank0.pt.trace.json.gz", "gpt2-ddp-rank1.pt.trace.json.gz"),  # two ranks of one run
])
def test_strangers_alike_by_kernel_names_are_not_paired(con, run_a, run_b):
    assert _kernel_similarity(con, run_a, run_b) >= 0.5  # the old rule paired them
    ids = {f: r for f, r in con.execute("SELECT first_file, run_id FROM runs").fetchall()}
    assert con.execute("SELECT count(*) FROM run_comparison WHERE [run_id, previous_run_id] IN (?, ?)",
                       [[ids[run_a], ids[run_b]], [ids[run_b], ids[run_a]]]).fetchone()[0] == 0
