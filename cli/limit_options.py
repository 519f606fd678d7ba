"""The limit options of `ingest`, `run` and `report`: the inflate limits (ingest/reading.py enforces
them) and the memory budget (lake/memory_budget.py)."""

from __future__ import annotations

import os

from ..ingest.reading import ENV_MAX_INFLATED, ENV_MAX_RATIO, Limits, parse_size
from ..lake.memory_budget import ENV_MAX_MEMORY


def _size(text: str) -> str:
    parse_size(text)  # a ValueError here is reported by argparse as a usage error
    return text


def add_limit_options(parser) -> None:
    default = Limits()
    parser.add_argument("--max-inflated", type=_size, metavar="SIZE",
                        help=f"largest text a gzip file may inflate to, or a JSON file may hold (default "
                             f"{default.max_inflated_bytes >> 30}G, or ${ENV_MAX_INFLATED})")
    parser.add_argument("--max-inflate-ratio", type=int, metavar="N",
                        help=f"largest inflated / compressed size of a gzip file above "
                             f"{default.ratio_floor_bytes >> 20} MiB (default {default.max_inflate_ratio}, "
                             f"or ${ENV_MAX_RATIO})")


def add_memory_option(parser) -> None:
    parser.add_argument("--max-memory", type=_size, metavar="SIZE",
                        help=f"memory the job may use, shared among its worker processes: DuckDB spills "
                             f"to a temporary folder beyond half a process's share, and views are derived "
                             f"in batches that fit (default: no limit, or ${ENV_MAX_MEMORY}); decoding one "
                             f"trace file is not bounded by it")


def apply_memory_option(args) -> None:
    """Put --max-memory where the job's processes read it (their environment), before any starts."""
    if getattr(args, "max_memory", None):
        os.environ[ENV_MAX_MEMORY] = args.max_memory


def limits_of(args) -> Limits:
    """The limits the options ask for, over the environment's, over the defaults."""
    return Limits.from_environment(args.max_inflated, args.max_inflate_ratio)
