"""Record Holistic Trace Analysis' communication/computation overlap as a golden CSV.

Runs in HTA's own virtualenv:  ../hta-venv/bin/python bench/hta/comm_comp_overlap.py TRACE_OR_DIR OUT.csv
Output: get_comm_comp_overlap(visualize=False) with TraceAnalysis(include_last_profiler_step=True):
columns rank, comp_comm_overlap_pctg.
"""

import os
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis


def main(trace: str, out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trace_dir = trace
        if not os.path.isdir(trace):
            os.symlink(os.path.abspath(trace), os.path.join(tmp, os.path.basename(trace)))
            trace_dir = tmp
        df = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True).get_comm_comp_overlap(visualize=False)
    df.to_csv(out, index=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
