"""tracelake benchmarks: `make bench` (python -m bench) writes bench/RESULTS.md."""
