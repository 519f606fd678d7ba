"""The exit codes of the `tracelake` command (cli/main.py documents when each is used)."""

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141  # 141: as a tool that SIGPIPE ended
EXIT_LAKE_BUSY = 75  # --no-wait and another process writes the lake (sysexits' EX_TEMPFAIL: try again later)
