"""The `tracelake` commands, a module each: NAME, its arguments (add_parser(sub)) beside what it does
(run(args), which returns the exit code). cli/main.py builds the parser from COMMANDS, in this
order (the order `tracelake --help` lists them), and runs the one the command line names.

The parser is built at every start-up, `tracelake --help`'s too: a command module imports at its
top only what its arguments need, and what the command runs with (DuckDB, polars, the jobs) in
run(). Lines holding a file name or a trace string are printed with terminal.say (control
characters escaped); file-system errors about outputs and Ctrl-C are turned into one line by
cli/main.py.
"""

from . import callctx, compact, diff, export, ingest, mail, mcp, relink, report, run, sql, stats, whatif

COMMANDS = (ingest, stats, diff, sql, relink, compact, callctx, export, whatif, run, report, mail, mcp)
