#!/usr/bin/env bash
# The device command that made the judgment recordings (issues #48, #49): every program of
# record_judgments.py without a profiler and under the PyTorch profiler, then each under Nsight
# Systems 2025.3.1 (steps are NVTX ranges `step N`, OS runtime calls traced; the capture range is
# the script's cudaProfilerStart/Stop). Run from the folder holding record_judgments.py with OUT set
# and libdw.so.1 / libelf.so.1 in $DEVLIBS (../shared/docs/gpu-traces.md). Everything comes back as
# two tars ($OUT/judge-torch.tar, $OUT/judge-nsys.tar): a device call returns at most 8 files.
set -u
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=${DEVLIBS:-$PWD/.devlibs}:${LD_LIBRARY_PATH:-}
R=/tmp/judge; mkdir -p $R/torch $R/nsys
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/torch/gpu.csv
OUT=$R/torch timeout ${TORCH_LIMIT:-300} python3 record_judgments.py torch
tar -cf $OUT/judge-torch.tar -C $R/torch .
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
QI=/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
for p in ${NSYS_PROGRAMS:-mlp mlp-repeat mlp-loader-stall mlp-host-sleep mlp-host-syncs mlp-pageable mlp-slow-kernel mlp-fp32-head gpu-bound gpu-bound-fp32-head launch-bound launch-bound-graph}; do
  n=nsys-2025.3.1_judge-${p}_$GPU
  $NS/nsys profile -o /tmp/$n -f true -t cuda,nvtx,osrt -s none --cpuctxsw=none \
      --capture-range=cudaProfilerApi --capture-range-end=stop env OUT=$R/nsys python3 record_judgments.py nsys $p
  [ -f /tmp/$n.nsys-rep ] || $QI --input-file /tmp/$n.qdstrm
  $NS/nsys export --type sqlite -o /tmp/$n.sqlite -f true /tmp/$n.nsys-rep
  gzip -9 -c /tmp/$n.sqlite > $R/nsys/$n.sqlite.gz
  tar -cf $OUT/judge-nsys.tar -C $R/nsys .
done
ls -la $R/torch $R/nsys
