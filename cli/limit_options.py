"""The inflate-limit options of `ingest` and `run` (ingest/reading.py enforces the limits)."""

from __future__ import annotations

from ..ingest.reading import ENV_MAX_INFLATED, ENV_MAX_RATIO, Limits, parse_size


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


def limits_of(args) -> Limits:
    """The limits the options ask for, over the environment's, over the defaults."""
    return Limits.from_environment(args.max_inflated, args.max_inflate_ratio)
