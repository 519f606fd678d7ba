#!/bin/bash
# The GPU machine's run of bench/nsys_stats_vs_tracelake.py (issue #29), as recorded in
# bench/results/nsys_stats_vs_tracelake.json. Run in the repository root there, with $OUT set.
#
# The image has no duckdb, polars or ADBC, and a call carries at most 64 MiB: the wheels of tracelake
# (`pip wheel --no-deps .` here) and of duckdb, polars + polars-runtime-32, adbc-driver-sqlite/-manager,
# orjson, isal, msgspec (`pip download --no-deps --python-version 3.12 --platform manylinux...`) were
# unzipped into one folder, their .so files stripped (strip --strip-unneeded), tarred, xz'd (48 MiB) and
# split in two parts: part-aa went over in one call (copied to /tmp), part-ab with the exports in the
# next, while the machine was still warm. The image sets PYTHONDONTWRITEBYTECODE=1: the site is
# byte-compiled first, as pip does when it installs.
set -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f /tmp/part-aa ] || { echo "COLD: /tmp/part-aa missing"; exit 3; }
mkdir -p /tmp/site /tmp/ex
cat /tmp/part-aa "$HERE/part-ab" | xz -d | tar -xf - -C /tmp/site || exit 4
python3 -m compileall -q -j 8 /tmp/site > /dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
for f in "$HERE"/*.sqlite.gz; do gunzip -c "$f" > /tmp/ex/"$(basename "$f" .gz)"; done
cp "$HERE"/*.sqlite /tmp/ex/
NS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64
{ date -u; nproc; nvidia-smi -L; uptime; $NS/nsys --version
  for m in "import polars" "import adbc_driver_sqlite.dbapi" "import tracelake.cli.commands"; do
    /usr/bin/time -f "%e s  $m" python3 -c "$m"; done; } 2>&1 | tee "$OUT/env.txt"
python3 bench/nsys_stats_vs_tracelake.py --nsys $NS/nsys --tracelake 'python3 -m tracelake.cli.main' --runs 3 \
  /tmp/ex/nsys-2025.3.1_gpt2-train-pystacks_h100.sqlite /tmp/ex/nsys-2025.3.1_gpt2-ddp-2rank_h200x2.sqlite \
  /tmp/ex/nsys-2025.3.1_cnn-train-pageable_h100.sqlite /tmp/ex/nsys-2025.3.1_resnet50-train-nvtx_h100.sqlite \
  2>&1 | tee "$OUT/table.md"
uptime | tee -a "$OUT/env.txt"
