"""Exact conversion of JSON number text in microseconds to integer nanoseconds.

Kineto writes `ts`/`dur` as microseconds with a nanosecond fraction ("1719853884123456.789").
Such an absolute timestamp has 19 significant digits, more than a float64 holds (15-17), so
parsing it as a float shifts it by tens of ns. We convert from the number's text instead:
integer part * 1000 + the first three fraction digits. Anything else (exponents, more than three
fraction digits) goes through decimal.Decimal and is rounded half-to-even to the nanosecond.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

import polars as pl
import pyarrow as pa

from .raw_text import texts

_PLAIN = r"^(-?)(\d{1,15})(?:\.(\d{0,3}))?$"


def _slow_us_text_to_ns(text: str | None) -> int | None:
    if text is None or text == "" or text == "null":
        return None
    try:
        value = Decimal(text) * 1000
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return int(value.to_integral_value(rounding=ROUND_HALF_EVEN))


def raw_us_to_ns(raws: list) -> pa.Array:
    """µs number texts as bytes-like objects (msgspec.Raw; empty = missing) -> int64 ns.

    No Python object is made per value (see raw_text).
    """
    if not raws:
        return pa.array([], pa.int64())
    return _text_series_to_ns(pl.Series(texts(raws)))


def us_text_to_ns(texts: list[bytes | None] | pa.Array) -> pa.Array:
    """Vectorized: µs number texts (bytes or str, None for missing) -> int64 ns (null if not a number)."""
    if not isinstance(texts, pa.Array):
        texts = pa.array(texts, type=pa.binary())
    return _text_series_to_ns(pl.Series(texts.cast(pa.string()) if texts.type != pa.string() else texts))


def _text_series_to_ns(series: pl.Series) -> pa.Array:
    parts = series.str.extract_groups(_PLAIN)
    sign = parts.struct.field("1")
    whole = parts.struct.field("2").cast(pl.Int64)
    frac = parts.struct.field("3").fill_null("").str.pad_end(3, "0").cast(pl.Int64)
    ns = whole * 1000 + frac
    ns = pl.select(pl.when(sign == "-").then(-ns).otherwise(ns)).to_series()
    needs_slow = ns.is_null() & series.is_not_null()
    if needs_slow.any():
        idx = needs_slow.arg_true().to_list()
        values = ns.to_list()
        for i in idx:
            values[i] = _slow_us_text_to_ns(series[i])
        ns = pl.Series(values, dtype=pl.Int64)
    return ns.to_arrow()
