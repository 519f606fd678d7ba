"""tracelake.cli: the `tracelake` command: its arguments (main), one function per command
(commands), and what they print (output, table_format, terminal, progress, stats, diff_output)."""
