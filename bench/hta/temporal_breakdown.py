"""Record Holistic Trace Analysis' temporal breakdown of a trace (one file, or a directory of rank
files) as a golden CSV, or the exception HTA raised.

Runs in HTA's own virtualenv, never in tracelake's:
    ../hta-venv/bin/python bench/hta/temporal_breakdown.py TRACE_OR_DIR OUT.csv
Output: HTA's get_temporal_breakdown(visualize=False) with TraceAnalysis(include_last_profiler_step=True),
columns rank, idle_time_us, compute_time_us, non_compute_time_us, kernel_time_us and the *_pctg ones;
or one line 'HTA crashed: <exception>' when it fails.
"""

import os
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis


def main(trace: str, out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.isdir(trace):
            trace_dir = trace
        else:
            os.symlink(os.path.abspath(trace), os.path.join(tmp, os.path.basename(trace)))
            trace_dir = tmp
        try:
            df = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True).get_temporal_breakdown(
                visualize=False)
        except Exception as e:  # noqa: BLE001 - recording the crash is the point
            with open(out, "w") as f:
                f.write(f"HTA crashed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
            return
    df.columns = [c.replace("(us)", "_us").replace("(%)", "_pctg") for c in df.columns]
    df.to_csv(out, index=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
