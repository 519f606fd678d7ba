#!/usr/bin/env bash
# The device command behind nsys-2025.3.1_gpu-metrics_* and nsys-2025.3.1_resnet50-train-bf16-shapes_*
# (one H100, PyTorch 2.11, Nsight Systems 2025.3.1). Run from the repository root on the GPU machine
# with OUT set; the Nsight importer needs libdw.so.1 and libelf.so.1 in .devlibs
# (../shared/docs/gpu-traces.md).
set -u
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
S=$(dirname "$0")/record_gpu_metrics.py
G=$(python3 -c "import torch; print('h100' if 'H100' in torch.cuda.get_device_name() else 'h200')")
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
QI=/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter
mkdir -p /tmp/extra
$NS/nsys profile --gpu-metrics-set=help > /tmp/extra/gpu-metrics-sets.txt 2>&1
$NS/nsys profile --gpu-metrics-devices=help > /tmp/extra/gpu-metrics-devices.txt 2>&1
nvidia-smi -q > /tmp/extra/nvidia-smi-q.txt 2>&1
export_one() {  # name: import if needed, export to sqlite, NVIDIA's kernel summary beside it
  [ -f /tmp/$1.nsys-rep ] || $QI --input-file /tmp/$1.qdstrm
  $NS/nsys export --type sqlite -o /tmp/$1.sqlite -f true /tmp/$1.nsys-rep
  $NS/nsys stats --report cuda_gpu_kern_sum,cuda_gpu_mem_size_sum --format csv --output /tmp/extra/$1 /tmp/$1.sqlite
}
n=nsys-2025.3.1_gpu-metrics_$G
$NS/nsys profile -o /tmp/$n -f true -t cuda,nvtx -s none --cpuctxsw=none \
    --gpu-metrics-devices=0 --gpu-metrics-frequency=5000 \
    --capture-range=cudaProfilerApi --capture-range-end=stop env OUT=$OUT python3 $S metrics
export_one $n
rows=$(python3 -c "import sqlite3; print(sqlite3.connect('/tmp/$n.sqlite').execute('select count(*) from GPU_METRICS').fetchone()[0])" 2>&1)
echo "GPU_METRICS rows (capture range): $rows"
case "$rows" in ''|*[!0-9]*|0)
  echo "no metrics inside the capture range: again without it"
  $NS/nsys profile -o /tmp/$n -f true -t cuda,nvtx -s none --cpuctxsw=none \
      --gpu-metrics-devices=0 --gpu-metrics-frequency=5000 env OUT=$OUT python3 $S metrics
  export_one $n ;;
esac
gzip -9 -c /tmp/$n.sqlite > $OUT/$n.sqlite.gz
c=nsys-2025.3.1_resnet50-train-bf16-shapes_$G
$NS/nsys profile -o /tmp/$c -f true -t cuda,nvtx -s none --cpuctxsw=none --pytorch=autograd-shapes-nvtx \
    env OUT=$OUT python3 $S convs
export_one $c
gzip -9 -c /tmp/$c.sqlite > $OUT/$c.sqlite.gz
tar czf $OUT/extra.tar.gz -C /tmp extra
ls -la $OUT /tmp/*.sqlite
