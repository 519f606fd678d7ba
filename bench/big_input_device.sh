#!/bin/bash
# The GPU machine's run of the big_input ingest (issue #51 item 2: one big file on all cores), as
# recorded in bench/RESULTS.md (big_input_16_cores). Run in the repository root there, with $OUT set.
#
# The image has no duckdb, polars, msgspec or isal: their wheels and tracelake's (`pip wheel --no-deps .`)
# were unzipped into one folder here, .so files stripped, tarred and xz'd (47 MiB), and split in two:
# .whl/a/part-aa went over in one call (copied to /tmp), .whl/b/part-ab with the 89 MB reference trace
# (torch-2.11_gpt2-train-12steps-stacks_h200_large, .whl/b) in the next, while the machine was warm.
# The big trace is made there as bench/big_input.py makes it (12 copies: 0.88 GB of JSON).
set -o pipefail
[ -f /tmp/part-aa ] || { echo "COLD: /tmp/part-aa missing"; exit 3; }
mkdir -p /tmp/site /tmp/big
cat /tmp/part-aa .whl/b/part-ab | xz -d | tar -xf - -C /tmp/site || exit 4
python3 -m compileall -q -j 16 /tmp/site > /dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 - <<'PY' || exit 5
from pathlib import Path
import bench.big_input as b
b.REFERENCE = Path(".whl/b/torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz")
print("made", b.big_trace(Path("/tmp/big/big.pt.trace.json")))
PY
{ date -u; nproc; uptime; python3 -c "import pyarrow, polars, duckdb; print(pyarrow.__version__, polars.__version__, duckdb.__version__)"; } 2>&1 | tee "$OUT/env.txt"
for cores in 1 2 4 8 16; do
  rm -rf /tmp/lake-$cores
  /usr/bin/time -f "cores $cores: %e s, peak RSS %M KiB (the CLI process)" env TRACELAKE_CORES=$cores \
    python3 -m tracelake.cli.main ingest /tmp/big/big.pt.trace.json --lake /tmp/lake-$cores -q 2>&1 | tee -a "$OUT/ingest.txt"
done
/usr/bin/time -f "run --no-reports, 16 cores: %e s, peak RSS %M KiB" \
  python3 -m tracelake.cli.main run /tmp/big --no-reports --out /tmp/run16 2>&1 | tee -a "$OUT/ingest.txt"
uptime | tee -a "$OUT/env.txt"
