"""tracelake.ingest: trace files (Nsight Systems SQLite, PyTorch Chrome JSON) -> unified Parquet tables."""

from tracelake.ingest.arrow_memory import prefer_jemalloc

prefer_jemalloc()
