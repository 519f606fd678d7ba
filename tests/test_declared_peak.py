"""--peak and tracelake.set_peak: MFU against a declared peak (issue #48 item 4)."""

import os

import pytest
import tracelake
from test_judgments import trace_file
from tracelake.cli.main import main
from tracelake.lake import declared_peak

GPU_BOUND = trace_file("gpu-bound", "kineto", "heavy")  # records shapes: MFU is modelled


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    out = tmp_path_factory.mktemp("peak") / "lake"
    assert main(["ingest", str(GPU_BOUND), "--lake", str(out), "-q"]) == 0
    return out


def _mfu(lake):
    with tracelake.open(lake) as con:
        return con.execute("SELECT peak_precision, peak_tflops, median(mfu_pct) AS mfu, "
                           "any_value(mfu_unreliable) AS why FROM mfu GROUP BY ALL").fetchone()


def test_declared_precision_and_rate(lake):
    try:
        assert _mfu(lake)[:2] == ("bf16", pytest.approx(989.4, rel=0.01))  # the trace's own: its bf16 GEMMs
        tracelake.set_peak("fp32")  # 67 TFLOP/s: 12 TFLOP in 19 ms cannot be under it
        assert _mfu(lake)[0] == "fp32" and _mfu(lake)[2] is None and _mfu(lake)[3] == "over 100 %"
        tracelake.set_peak(None)
        _, peak, bf16, _ = _mfu(lake)
        tracelake.set_peak(2 * peak)  # twice the bf16 peak: half the MFU
        assert _mfu(lake)[2] == pytest.approx(bf16 / 2, rel=1e-6)
    finally:
        tracelake.set_peak(None)
    assert declared_peak.ENV_PEAK not in os.environ


def test_cli_refuses_an_unknown_peak(capsys):
    with pytest.raises(SystemExit):
        main(["stats", str(GPU_BOUND), "--peak", "fp13"])
    assert "expected one of fp64" in capsys.readouterr().err
