#!/bin/sh
# The exact commands that made the golden files in this folder (HTA traceinsight 0.6.1 in its own venv).
# Run from the repository root: sh tests/golden/critical_path/make_goldens.sh
set -e
HTA=/work/hta-venv/bin/python
OUT=tests/golden/critical_path
for name in torch-2.11_mnist-cnn-train_h100 torch-2.11_resnet50-train-fp32-pageable_h100 \
            torch-2.11_gpt2-small-train-bf16_h100 torch-2.11_mlp-compiled-inference-fp16_h100; do
    $HTA $OUT/hta_critical_path.py /work/shared/traces/pytorch/$name.pt.trace.json.gz $OUT/$name
done
$HTA $OUT/hta_critical_path.py /work/shared/traces/pytorch/torch-2.11_gpt2-ddp-2rank_h200x2/rank0.pt.trace.json.gz \
    $OUT/torch-2.11_gpt2-ddp-2rank_h200x2.rank0
# Recorded with CUDA sync events (tests/recorded/README.md)
for name in torch-2.11_critpath-host-sync_h100 torch-2.11_critpath-multistream_h100 \
            torch-2.11_gpt-train-bf16-sdpa_h100; do
    $HTA $OUT/hta_critical_path.py tests/recorded/$name.pt.trace.json.gz $OUT/$name
done
# The data stall as HTA's data-loading event (its data_load_events argument; tracelake's default
# data-loading pattern matches the range name too)
$HTA $OUT/hta_critical_path.py tests/recorded/torch-2.11_critpath-data-stall_h100.pt.trace.json.gz \
    $OUT/torch-2.11_critpath-data-stall_h100.data_load dataloader_stall
