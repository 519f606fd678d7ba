#!/usr/bin/env bash
# Regenerates tests/golden/hta/*.temporal_breakdown.csv (needs ../hta-venv, see bench/hta/temporal_breakdown.py).
# Run from the repository root: bash tests/golden/hta/make_temporal_goldens.sh
set -uo pipefail
SHARED=${TRACELAKE_CORPUS:-../shared}
for f in "$SHARED"/traces/pytorch/*.json.gz "$SHARED"/traces/pytorch/torch-2.11_gpt2-ddp-2rank_h200x2; do
  stem=$(basename "$f"); stem=${stem%.json.gz}; stem=${stem%.pt.trace}
  timeout 600 ../hta-venv/bin/python bench/hta/temporal_breakdown.py "$f" "tests/golden/hta/$stem.temporal_breakdown.csv" \
    > /dev/null 2>&1 || echo "HTA did not finish: $stem" > "tests/golden/hta/$stem.temporal_breakdown.csv"
done
# Communication/computation overlap on the traces with communication kernels:
for f in "$SHARED"/traces/pytorch/torch-2.11_gpt2-ddp-2rank_h200x2 "$SHARED"/traces/pytorch/hta_a100_trace_diff_control_rank3.json.gz \
         "$SHARED"/traces/pytorch/hta_v100_spmd_dhen_rank1_memory_large.json.gz; do
  stem=$(basename "$f"); stem=${stem%.json.gz}
  ../hta-venv/bin/python bench/hta/comm_comp_overlap.py "$f" "tests/golden/hta/$stem.comm_comp_overlap.csv" > /dev/null 2>&1
done
