"""Exact conversion of JSON number text in microseconds to integer nanoseconds.

Kineto writes `ts`/`dur` as microseconds with a nanosecond fraction ("1719853884123456.789").
Such an absolute timestamp has 19 significant digits, more than a float64 holds (15-17), so
parsing it as a float shifts it by tens of ns. We convert from the number's text instead, with
polars' exact decimal parse at three fraction digits. Anything that parse cannot take exactly
(more than three fraction digits, blanks) goes through decimal.Decimal and is rounded
half-to-even to the nanosecond; values outside int64 ns become null.

The number text comes from the JSON decoder itself (kineto_decode decodes `ts`/`dur` with
msgspec's float_hook=str, which hands over the float literal exactly as written).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

import polars as pl
import pyarrow as pa


def _slow_us_text_to_ns(text: str | None) -> int | None:
    if text is None or text == "" or text == "null":
        return None
    try:
        value = Decimal(text) * 1000
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    ns = int(value.to_integral_value(rounding=ROUND_HALF_EVEN))
    return ns if -(2**63) <= ns < 2**63 else None


def us_to_ns(values: list) -> pa.Array:
    """µs values as the Kineto decoder leaves them -> int64 ns (null where not a number).

    A JSON float arrives as its number text (msgspec's float_hook=str), an integer as int;
    None is a missing value and anything else (bools, lists, non-numeric strings) is null.
    Lists of texts go to Arrow without a Python object made per value.
    """
    if not values:
        return pa.array([], pa.int64())
    try:
        text = pa.array(values, pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # integers (or odd values) among the texts
        text = pa.array([_as_text(v) for v in values], pa.string())
    return _text_series_to_ns(pl.Series(text))


def _as_text(value) -> str | None:
    if type(value) is str:
        return value
    if type(value) is int:
        return str(value)
    return None


def _text_series_to_ns(series: pl.Series) -> pa.Array:
    # Polars parses decimal text exactly (no float in between) but truncates past the scale:
    # a second parse at scale 9 finds the values with more than three fraction digits, which
    # (like exponents with fractions, blanks, out-of-range values) take the exact slow path.
    at_ns = series.cast(pl.Decimal(38, 3), strict=False)
    at_9 = series.cast(pl.Decimal(38, 9), strict=False)
    ns = (at_ns * 1000).cast(pl.Int64, strict=False)
    needs_slow = (ns.is_null() | (at_ns.cast(pl.Decimal(38, 9), strict=False) != at_9).fill_null(True)) & series.is_not_null()
    if needs_slow.any():
        idx = needs_slow.arg_true().to_list()
        values = ns.to_list()
        for i in idx:
            values[i] = _slow_us_text_to_ns(series[i])
        ns = pl.Series(values, dtype=pl.Int64)
    return ns.to_arrow()
