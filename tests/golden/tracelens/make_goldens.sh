#!/usr/bin/env bash
# Regenerates tests/golden/tracelens/*.kernel_summary.csv.gz: AMD TraceLens's kernel_summary sheet
# (TraceLens_generate_perf_report_pytorch --enable_kernel_summary, CSV output), gzipped unchanged.
# Needs TraceLens in its own virtualenv beside the checkout (never a tracelake dependency):
#   git clone https://github.com/AMD-AGI/TraceLens ../tracelens-src   # recorded at commit 171dd747
#   python3 -m venv ../tracelens-venv && ../tracelens-venv/bin/pip install ../tracelens-src
# Run from the repository root: bash tests/golden/tracelens/make_goldens.sh
set -uo pipefail
SHARED=${TRACELAKE_CORPUS:-../shared}
OUT=tests/golden/tracelens
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for rel in torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz \
           torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz \
           torch-2.11_gpt2-ddp-2rank_h200x2/rank0.pt.trace.json.gz \
           torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz \
           torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz \
           torch-2.11_resnet50-train-bf16-channels-last_h100.pt.trace.json.gz \
           torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz \
           dlrm_8rank_v100/worker0_step_12.1694128201545.pt.trace.json.gz \
           hta_v100_resnet_ns_resolution_rank0.pt.trace.json.gz \
           hta_v100_spmd_dhen_rank1_memory_large.json.gz \
           tracelens_h100_timesformer_inference_pystack.json.gz \
           tracelens_mi300x_resnet_actckpt_train_rank0.json.gz \
           tracelens_mi300x_sd35_xdit_inference_rank0_large.json.gz \
           tracelens_mi300x_vllm_graph_capture_rank0.pt.trace.json.gz; do
  stem=${rel%.json.gz}; stem=${stem%.pt.trace}; stem=${stem//\//.}
  if ../tracelens-venv/bin/TraceLens_generate_perf_report_pytorch --profile_json_path "$SHARED/traces/pytorch/$rel" \
       --output_csvs_dir "$TMP/$stem" --enable_kernel_summary > "$TMP/$stem.log" 2>&1; then
    gzip -n -9 < "$TMP/$stem/kernel_summary.csv" > "$OUT/$stem.kernel_summary.csv.gz"
  else
    echo "TraceLens failed on $rel: $(tail -1 "$TMP/$stem.log")"
  fi
done
