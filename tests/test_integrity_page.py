"""The trace page shows the integrity checks that did not pass (trace_integrity) and marks the
numbers that depend on them unreliable; a trace whose checks pass shows neither."""

from __future__ import annotations

import json

import page_reader
from conftest import ingested, rendered_page

PID = 4242


def _trace(unknown_events: int) -> dict:
    events = []
    for i in range(4):  # four ProfilerSteps, a kernel in each
        t = 1_000 * i
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": PID, "tid": 1, "ts": t,
             "dur": 900},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": 1, "ts": t + 10,
             "dur": 5, "args": {"correlation": i + 1}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t + 20, "dur": 300,
             "args": {"device": 0, "stream": 7, "correlation": i + 1}},
        ]
    events += [{"ph": "X", "cat": "npu_tile_op", "name": "tile", "pid": 0, "tid": 9, "ts": 400 + 1_000 * i,
                "dur": 400, "args": {"device": 0, "stream": 9}} for i in range(unknown_events)]
    # a device without a name (as in some ROCm and vLLM traces): no dangling '·' in the header
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": ""}], "traceEvents": events}


def test_a_failed_check_is_shown_and_its_numbers_marked_unreliable(tmp_path, tmp_path_factory):
    files = []
    for name, unknown in (("sound", 0), ("unknown-device-work", 3)):
        path = tmp_path / f"{name}.pt.trace.json"
        path.write_text(json.dumps(_trace(unknown)))
        files.append(path)
    with ingested(tmp_path_factory, "integrity", *files) as con:
        ids = dict(con.execute("SELECT file_name, trace_id FROM traces").fetchall())
        sound = rendered_page(con, ids["sound.pt.trace.json"]).html
        faulty = rendered_page(con, ids["unknown-device-work.pt.trace.json"]).html
    assert "Integrity checks that did not pass" not in sound and ">unreliable<" not in sound
    header = sound[sound.index('<p class="sub">'):]
    assert not header[:header.index("</p>")].rstrip().endswith("·")
    assert 'data-integrity="device_work_analysed"' in faulty
    assert "npu_tile_op (3)" in faulty
    page = page_reader.read(faulty)
    assert page.metrics["gpu_idle_pct"] is not None  # the number is still there, marked
    idle_card = faulty[faulty.index('data-metric="gpu_idle_pct"'):]
    assert idle_card[:idle_card.index("</div></div>")].count(">unreliable<") == 1
    step_card = faulty[faulty.index('data-metric="median_step_ns"'):]
    assert ">unreliable<" not in step_card[:step_card.index("</div></div>")]  # does not depend on it
