#!/usr/bin/env bash
# The device command that made the single-GPU recordings in this folder (one H100, PyTorch 2.11,
# Nsight Systems 2025.3.1). Run from the repository root on the GPU machine with OUT set; the
# Nsight importer needs libdw.so.1 and libelf.so.1 in .devlibs (see ../shared/docs/gpu-traces.md).
set -u
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
S=tests/recorded/record_single_gpu.py
OUT=$OUT python3 $S ops gpt resnet critpath graphs
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
QI=/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter
for mode in node graph; do
  n=nsys-2025.3.1_graphs-manual-replay-${mode}_h100
  $NS/nsys profile -o /tmp/$n -f true -t cuda,nvtx,osrt -s none --cpuctxsw=none --cuda-graph-trace=$mode \
      env OUT=$OUT python3 $S graphs-nsys
  [ -f /tmp/$n.nsys-rep ] || $QI --input-file /tmp/$n.qdstrm
  $NS/nsys export --type sqlite -o /tmp/$n.sqlite -f true /tmp/$n.nsys-rep
  # NVIDIA's own summaries of the same export: the oracle for the tests
  $NS/nsys stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_trace --format csv --output $OUT/$n /tmp/$n.sqlite
  gzip -9 -c /tmp/$n.sqlite > $OUT/$n.sqlite.gz
done
