"""The `tracelake` command line. Exit codes: 0 all good, 1 some inputs failed, 2 usage error (or an
output that cannot be written), 130 interrupted (Ctrl-C), 141 the reader of standard output went
away (`| head`; nothing is printed), 75 another process is writing the lake (with --no-wait:
lake/lock.py). File-system errors about outputs, bad inflate limits and Ctrl-C end in one line
each, here in `main`.

This module builds the parser from the commands' own (cli/commands/: a module per command, its
arguments beside what it does), parses the arguments and sets the process-wide settings
(process_settings.py) before anything heavy is imported, then runs the command.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import NoReturn

from ..jobs.process_settings import prefer_jemalloc, use_cores
from .commands import COMMANDS
from .exit_codes import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_LAKE_BUSY, EXIT_USAGE
from .limit_options import apply_memory_option
from .peak_option import apply_peak_option
from .terminal import say

BY_NAME = {command.NAME: command for command in COMMANDS}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracelake", description="Offline analysis of GPU deep-learning traces.",
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example: tracelake run /data/profiles --out results/   "
                                       "(then open results/reports/index.html)\n"
                                       "         tracelake stats report.sqlite --report cuda_gpu_kern_sum\n"
                                       "`tracelake COMMAND --help` shows each command's options and an example.")
    p.add_argument("--version", action=_Versions, nargs=0, help="show the versions of tracelake, DuckDB, polars "
                   "and pyarrow and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return p


class _Versions(argparse.Action):
    """--version: tracelake's and the libraries' versions, what a bug report needs."""

    def __call__(self, parser, namespace, values, option_string=None):
        import platform
        from importlib.metadata import PackageNotFoundError, version

        from ..lake.version import __version__

        parts = [f"tracelake {__version__}"]
        for name in ("duckdb", "polars", "pyarrow"):
            try:
                parts.append(f"{name} {version(name)}")
            except PackageNotFoundError:
                parts.append(f"{name} (not installed)")
        parts.append(f"Python {platform.python_version()}")
        print(", ".join(parts))
        parser.exit()


# Commands whose process ends without Python's teardown once they return (from the command line
# only: main(argv) returns as usual). They leave no worker process, thread, connection or
# temporary file behind them, and freeing every module and object one by one, which nothing
# needs at the end of a process, took 70-100 ms of `tracelake ingest` of the 89 MB reference trace
# and 60-80 ms of `tracelake stats` of it (2 cores), and 1.9-2.0 s of `tracelake mcp` after its
# client closed standard input (the MCP SDK's modules), which a client waits out.
QUICK_EXIT = frozenset({"ingest", "stats", "mcp"})


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code = _run(args)
    if argv is None and args.command in QUICK_EXIT:
        _exit_now(code)
    return code


def _exit_now(code: int) -> NoReturn:
    """End the process now: the atexit handlers run and the output is flushed, the rest of the
    interpreter's teardown is skipped (os._exit)."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
    os._exit(code)


def _run(args) -> int:
    # the errors caught below, imported once the arguments are parsed: they load lake/layout.py and
    # the installed version's metadata (importlib.metadata), ~24 ms of a `tracelake --help` of ~94
    from ..ingest.reading import BadLimits
    from ..jobs import fs_errors
    from ..lake.format_version import LakeTooNew
    from ..lake.lock import LakeBusy, LakeReadOnly

    prefer_jemalloc()  # before the commands import pyarrow
    apply_memory_option(args)  # before any worker process starts
    apply_peak_option(args)
    use_cores(getattr(args, "jobs", None))

    warnings.formatwarning = lambda message, *_, **__: f"warning  {message}\n"  # one line, no source line
    sys.unraisablehook = _unraisable_interrupt_unsaid

    try:
        with lake_lock(args):
            return BY_NAME[args.command].run(args)
    except LakeBusy as e:
        say(f"error  {e}; try again later, or leave out --no-wait to wait for it", err=True)
        return EXIT_LAKE_BUSY
    except (LakeReadOnly, LakeTooNew) as e:
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    except BrokenPipeError:  # `tracelake sql ... | head`: the reader has what it wanted; nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush goes nowhere
        return EXIT_BROKEN_PIPE
    except OSError as e:  # an output that cannot be written (read-only, under a file, full disk)
        say(f"error  {fs_errors.describe(e)}", err=True)
        return EXIT_USAGE
    except BadLimits as e:  # TRACELAKE_MAX_INFLATED / _RATIO set to something that is not a number
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted: workers stopped; a re-run cleans up and carries on", err=True)
        return EXIT_INTERRUPTED
    except Exception as e:
        line = fs_errors.io_error_line(e)  # DuckDB could not write a file (a full disk): one line
        if line is None:
            raise
        say(f"error  {line}", err=True)
        return EXIT_USAGE


def _unraisable_interrupt_unsaid(unraisable) -> None:
    """A Ctrl-C that lands where Python cannot raise it (a callback of the import system, while a
    worker starts) is left to the one line `_run` says of the interrupt, not printed as 'Exception
    ignored in ...' with a traceback; any other unraisable error is printed as Python does."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def lake_lock(args):
    """The writer lock of the lake a writing command writes (lake/lock.py), held for the whole
    command (`run`: its reports too); a no-op for the others and for a folder that is no lake yet
    where the command needs one (compact, relink say so themselves)."""
    import contextlib
    from pathlib import Path

    from ..lake import layout
    from ..lake.lock import writer_lock

    if not hasattr(args, "no_wait"):
        return contextlib.nullcontext()
    lake = Path(args.out) / "lake" if args.command == "run" else Path(args.lake)
    if args.command in ("compact", "relink") and not layout.is_lake(lake):
        return contextlib.nullcontext()
    return writer_lock(lake, wait=not args.no_wait, on_wait=lambda line: say(f"waiting  {line}", err=True))


if __name__ == "__main__":
    sys.exit(main())
