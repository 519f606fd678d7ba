#!/usr/bin/env bash
# The device command behind torch-2.11_parallel-* (issue #53), on 2 GPUs of one host (PyTorch 2.11,
# NCCL, NVLink multicast off). Run from the repository root with OUT set; each variant runs in its own
# torchrun under a time cap, so one that fails leaves the others. Everything comes back as one tar
# ($OUT/rec.tar) with the log. About 2-3 minutes on 2 H100s (5 variants x 20-30 s); at most 5 x 65 s.
set -u
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCH_NCCL_ENABLE_TIMING=1  # Work.get_duration(): CUDA events on NCCL's stream around each collective
R=/tmp/rec; mkdir -p $R
nvidia-smi topo -m > $R/topology.txt 2>&1
port=29511  # a port per run: a run killed by its time cap may leave its port in use
for v in ${VARIANTS:-ddp-small-buckets ddp-large-buckets fsdp2-prefetch fsdp2-no-prefetch pipeline-gpipe}; do
    echo "== $v" | tee -a $R/log.txt
    port=$((port + 1))
    OUT=$R timeout 65 torchrun --nproc_per_node=2 --master_port=$port tests/recorded/record_parallel.py $v >> $R/log.txt 2>&1 \
        || echo "$v failed: $?" | tee -a $R/log.txt
done
tail -40 $R/log.txt
ls -laR $R
tar -cf $OUT/rec.tar -C $R .
