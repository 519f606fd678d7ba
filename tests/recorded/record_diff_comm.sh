#!/usr/bin/env bash
# The device command behind torch-2.11_diff-comm-* (issue #30) and nsys-2025.3.1_roofline_* (issue #31),
# on 2 GPUs of one host (PyTorch 2.11, Nsight Systems 2025.3.1). Run from the folder holding the
# scripts with OUT set; the Nsight importer needs libdw.so.1 / libelf.so.1 in $DEVLIBS
# (../shared/docs/gpu-traces.md). Everything comes back as one tar ($OUT/rec.tar).
set -u
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=${DEVLIBS:-$PWD/.devlibs}:${LD_LIBRARY_PATH:-}
R=/tmp/rec; mkdir -p $R
OUT=$R torchrun --nproc_per_node=2 record_diff_comm.py
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
QI=/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100 || echo h200)
n=nsys-2025.3.1_roofline_$G
$NS/nsys profile -o /tmp/$n -f true -t cuda,nvtx -s none --cpuctxsw=none --pytorch=autograd-shapes-nvtx \
    --gpu-metrics-devices=0 --gpu-metrics-frequency=10000 \
    --capture-range=cudaProfilerApi --capture-range-end=stop env OUT=$R CUDA_VISIBLE_DEVICES=0 python3 record_roofline.py
[ -f /tmp/$n.nsys-rep ] || $QI --input-file /tmp/$n.qdstrm
$NS/nsys export --type sqlite -o /tmp/$n.sqlite -f true /tmp/$n.nsys-rep
gzip -9 -c /tmp/$n.sqlite > $R/$n.sqlite.gz
ls -laR $R
tar -cf $OUT/rec.tar -C $R .
