"""tracelake.ingest: trace files (Nsight Systems SQLite, PyTorch Chrome JSON) -> unified Parquet tables."""
