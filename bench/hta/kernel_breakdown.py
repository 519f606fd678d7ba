"""Record Holistic Trace Analysis' kernel breakdown of one trace file as a golden CSV.

Runs in HTA's own virtualenv, never in tracelake's:
    ../hta-venv/bin/python bench/hta/kernel_breakdown.py TRACE.json.gz OUT.csv
(venv: python3 -m venv ../hta-venv && ../hta-venv/bin/pip install traceinsight==0.6.1 psutil pyyaml)

Output columns: kernel_name, kernel_type, rank, sum_us, max_us, min_us, mean_us, std_us, as HTA's
get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10**6) returns them,
with TraceAnalysis(include_last_profiler_step=True).
"""

import os
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis


def main(trace: str, out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(trace), os.path.join(tmp, os.path.basename(trace)))
        analysis = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
        _, metrics = analysis.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10**6)
    metrics = metrics.rename(columns={"sum (us)": "sum_us", "max (us)": "max_us", "min (us)": "min_us",
                                      "mean (us)": "mean_us", "stddev": "std_us"})
    metrics.to_csv(out, index=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
