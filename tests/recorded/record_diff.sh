#!/usr/bin/env bash
# The device command that made the diff recordings (issue #30): every variant of record_diff.py
# under the PyTorch profiler, then each under Nsight Systems 2025.3.1 (steps are NVTX ranges; the
# capture range is the script's cudaProfilerStart/Stop). Run from the folder holding
# record_diff.py with OUT set and libdw.so.1 / libelf.so.1 in $DEVLIBS (../shared/docs/gpu-traces.md).
# Everything comes back as one tar ($OUT/diff.tar): a device call returns at most 8 files.
set -u
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=${DEVLIBS:-$PWD/.devlibs}:${LD_LIBRARY_PATH:-}
R=/tmp/diff; mkdir -p $R
OUT=$R python3 record_diff.py torch
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
QI=/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
for v in base base-repeat slow-kernel host-sync fp32-gemm pageable all; do
  n=nsys-2025.3.1_diff-${v}_$GPU
  $NS/nsys profile -o /tmp/$n -f true -t cuda,nvtx -s none --cpuctxsw=none \
      --capture-range=cudaProfilerApi --capture-range-end=stop env OUT=$R python3 record_diff.py nsys $v
  [ -f /tmp/$n.nsys-rep ] || $QI --input-file /tmp/$n.qdstrm
  $NS/nsys export --type sqlite -o /tmp/$n.sqlite -f true /tmp/$n.nsys-rep
  gzip -9 -c /tmp/$n.sqlite > $R/$n.sqlite.gz
done
ls -la $R
tar -cf $OUT/diff.tar -C $R .
