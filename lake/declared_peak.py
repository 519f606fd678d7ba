"""The peak MFU is counted against, when the user declares it (`--peak`, `tracelake.set_peak`):
a precision the model intends ('bf16', 'fp32', ...) or a rate in TFLOP/s. It reaches the view
`mfu` as the DuckDB variable `tracelake_peak`, set on every connection the lake opens
(planner_settings), and the job's worker processes through their environment."""

from __future__ import annotations

import os

ENV_PEAK = "TRACELAKE_PEAK"
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")  # = gpu_peaks.peak_tflops_of


def parse(text: str) -> str:
    """A precision name or a positive number of TFLOP/s, as the variable holds it; ValueError else."""
    value = text.strip().lower()
    if value in PRECISIONS:
        return value
    try:
        rate = float(value)
    except ValueError:
        raise ValueError(f"peak {text!r}: expected one of {', '.join(PRECISIONS)} or a rate in TFLOP/s") from None
    if not rate > 0:
        raise ValueError(f"peak {text!r}: a rate must be > 0 TFLOP/s")
    return repr(rate)


def declare(text: str | None) -> None:
    """Declare the peak for this process and the workers it starts (None: the trace's own)."""
    if text is None:
        os.environ.pop(ENV_PEAK, None)
    else:
        os.environ[ENV_PEAK] = parse(text)


def apply(con) -> None:
    """Set `tracelake_peak` on `con` from the declaration, if any."""
    value = os.environ.get(ENV_PEAK)
    if value:
        con.execute("SET VARIABLE tracelake_peak = ?", [parse(value)])
