"""tracelake.jobs: what users run, as functions: ingest files into a lake (ingest_job), the batch
job (run_job, derive_job), the report pages (report_job), the diff of two traces or runs (diff)
and the Perfetto export (trace_export, run_export), with their worker pool and process settings.
The CLI (cli/) and the Python API (__init__.py) call them."""
