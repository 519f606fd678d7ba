"""`--peak` of the commands that show MFU (stats, sql, run, report): the peak it is counted against
(lake/declared_peak.py)."""

from __future__ import annotations

import argparse

from ..lake import declared_peak


def _peak(text: str) -> str:
    try:
        return declared_peak.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_peak_option(parser) -> None:
    parser.add_argument("--peak", type=_peak, metavar="PRECISION|TFLOPS",
                        help="the peak MFU is counted against: the precision the model intends "
                             f"({', '.join(declared_peak.PRECISIONS)}) or a rate in TFLOP/s (default: the "
                             "precision that holds most of the trace's modelled FLOPs)")


def apply_peak_option(args) -> None:
    """Declare --peak for this process and its workers, before any connection opens."""
    if getattr(args, "peak", None):
        declared_peak.declare(args.peak)
