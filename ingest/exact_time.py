"""Exact conversion of JSON number text in microseconds to integer nanoseconds.

Kineto writes `ts`/`dur` as microseconds with a nanosecond fraction ("1719853884123456.789").
Such an absolute timestamp has 19 significant digits, more than a float64 holds (15-17), so
parsing it as a float shifts it by tens of ns. We convert from the number's text instead, with
an exact decimal parse at three fraction digits (Arrow, then polars). Anything that parse cannot
take exactly (more than three fraction digits, blanks) goes through decimal.Decimal and is
rounded half-to-even to the nanosecond; values outside int64 ns become null. Durations, which
are small, have a float64 fast path that is proven exact where it is used (duration_us_to_ns).

The number text comes from the JSON decoder itself (kineto/decode.py decodes `ts`/`dur` with
msgspec's float_hook=str, which hands over the float literal exactly as written).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc


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
    Lists of texts go to Arrow without a Python object made per value. Arrow's decimal parse at
    three fraction digits takes the common case in one exact pass; it refuses anything it would
    round (more fraction digits, out of range, blanks), and those lists take the general path.
    """
    return _text_to_ns(_texts(values))


def duration_us_to_ns(values: list) -> pa.Array:
    """us_to_ns for values expected below 2**48 ns (3.2 days), like durations: 2x faster.

    Parsed as float64 (correctly rounded) and scaled by 1000: the result is then within 1/16 ns
    of the exact value, so where it lies within 1/4 ns of an integer that integer is also the
    exact value rounded half-to-even. Lists with any value outside those bounds (more than three
    fraction digits, large values) take us_to_ns's exact path.
    """
    text = _texts(values)
    try:
        scaled = pc.multiply(text.cast(pa.float64()), _THOUSAND_F)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _text_to_ns(text)
    ns = pc.round(scaled)
    exact = pc.and_(pc.less(pc.abs(pc.subtract(scaled, ns)), _QUARTER), pc.less(pc.abs(ns), _FLOAT_EXACT_BELOW))
    if pc.all(exact).as_py() is False:
        return _text_to_ns(text)
    return ns.cast(pa.int64())


def _text_to_ns(text: pa.Array) -> pa.Array:
    """Number texts -> ns: Arrow's exact decimal parse, else the general path."""
    try:
        return pc.multiply(text.cast(_US_DECIMAL), _THOUSAND).cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _text_series_to_ns(pl.Series(text))


_US_DECIMAL = pa.decimal128(19, 3)  # µs with ns fraction; 16 integer digits hold epoch µs
_THOUSAND = pa.scalar(1000, pa.decimal128(4, 0))
# Arrow scalars made once: converting a Python number on each call costs a (failing) import of
# dateutil inside pyarrow, 500 times per reference trace (34 ms).
_THOUSAND_F, _QUARTER, _FLOAT_EXACT_BELOW = pa.scalar(1000.0), pa.scalar(0.25), pa.scalar(2.0**48)


def _texts(values: list) -> pa.Array:
    try:
        return pa.array(values, pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # integers (or odd values) among the texts
        return pa.array([_as_text(v) for v in values], pa.string())


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
