#!/usr/bin/env bash
# Regenerates the HTA golden files in this folder (needs ../hta-venv, see bench/hta/kernel_breakdown.py).
# Run from the repository root: bash tests/golden/hta/make_goldens.sh
set -euo pipefail
SHARED=${TRACELAKE_CORPUS:-../shared}
for stem in torch-2.11_mnist-cnn-train_h100.pt.trace torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace \
            torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace torch-2.11_gpt2-small-train-bf16_h100.pt.trace \
            hta_v100_resnet_ns_resolution_rank0.pt.trace hta_a100_trace_diff_control_rank3 \
            tracelens_h100_timesformer_inference_pystack; do
  ../hta-venv/bin/python bench/hta/kernel_breakdown.py "$SHARED/traces/pytorch/$stem.json.gz" \
    "tests/golden/hta/${stem%.pt.trace}.kernel_breakdown.csv" > /dev/null 2>&1 || echo "HTA failed on $stem"
done
