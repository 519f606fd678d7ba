#!/bin/sh
# Make tests/old_lakes/<commit>.tar.gz: the lake an earlier tracelake (commit of main) writes for
# the small sample trace, as tests/test_lake_upgrade.py opens it with today's tracelake.
#   sh tests/old_lakes/make.sh <commit>      (from the repository root; needs the .venv of `make setup`)
# The trace is read from /tmp/tracelake-old-lake-fixture/<commit>/ (the lake records that path; the
# test puts the file back there to check that `tracelake run` reads it again). The database file
# (tracelake.duckdb, 1.6 MB of views) is left out: every tracelake rebuilds it from the Parquet.
set -e
c=$1
repo=$(pwd)
old=/tmp/old-$c
git worktree add --detach "$old" "$c" >/dev/null
python3 -m venv "$old/.venv"
echo "$repo/.venv/lib/python3.11/site-packages" > "$old/.venv/lib/python3.11/site-packages/deps.pth"
"$old/.venv/bin/python" -m pip install -q --no-deps -e "$old"
src=/tmp/tracelake-old-lake-fixture/$c
mkdir -p "$src"
cp tests/data/torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz "$src/"
work=$(mktemp -d)
TRACELAKE_CACHE=$work/cache "$old/.venv/bin/tracelake" ingest "$src" --lake "$work/lake"
tar czf "tests/old_lakes/$c.tar.gz" -C "$work" --exclude=tracelake.duckdb --exclude=.lock lake
rm -rf "$work" "$src"
git worktree remove --force "$old"
