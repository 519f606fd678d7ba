"""Exact µs-text -> ns conversion: the vectorized path against Python's decimal arithmetic."""

import random
from decimal import ROUND_HALF_EVEN, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from tracelake.ingest.exact_time import duration_us_to_ns, us_to_ns

# JSON number texts as profilers write them: optional sign, integer part, optional fraction of any
# length, optional exponent.
number_text = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-"]),
    st.integers(0, 10**19).map(str),
    st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=12).map(lambda f: "." + f)),
    st.one_of(st.just(""), st.integers(-6, 6).map(lambda e: f"e{e}")),
)


def _expected(text: str) -> int | None:
    ns = int((Decimal(text) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))
    return ns if -(2**63) <= ns < 2**63 else None


@settings(max_examples=300, deadline=None)
@given(st.lists(number_text, min_size=1, max_size=50))
def test_text_to_ns_equals_decimal_arithmetic(texts):
    expected = [_expected(t) for t in texts]
    assert us_to_ns(texts).to_pylist() == expected
    assert duration_us_to_ns(texts).to_pylist() == expected


# Durations as profilers write them: mostly short, three fraction digits or fewer, now and then
# a long fraction or a large value (which the float fast path must hand to the exact one).
duration_text = st.builds(
    lambda whole, frac: f"{whole}{frac}",
    st.one_of(st.integers(0, 10**6), st.integers(0, 10**13)).map(str),
    st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=3).map(lambda f: "." + f),
              st.text("0123456789", min_size=4, max_size=9).map(lambda f: "." + f)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(duration_text, min_size=1, max_size=50))
def test_duration_fast_path_equals_decimal_arithmetic(texts):
    assert duration_us_to_ns(texts).to_pylist() == [_expected(t) for t in texts]


def test_known_cases():
    cases = {
        "1719853884123456.789": 1719853884123456789,  # 19 digits: a float64 parse is off by ~100 ns
        "0.0005": 0,  # half to even
        "0.0015": 2,
        "-3.5": -3500,
        "1e3": 1000000,
        "9223372036854775.808": None,  # past int64 ns
        "abc": None,
    }
    for convert in (us_to_ns, duration_us_to_ns):
        got = convert(list(cases) + [None, 12, True, [1]]).to_pylist()
        assert got == list(cases.values()) + [None, 12000, None, None]
    assert duration_us_to_ns(["7.776", "0.5", "12"]).to_pylist() == [7776, 500, 12000]


def test_duration_fast_path_on_many_short_values():
    rng = random.Random(7)
    texts = [f"{rng.randrange(10**rng.randrange(1, 12))}.{rng.randrange(1000):03d}" for _ in range(20000)]
    assert duration_us_to_ns(texts).to_pylist() == [_expected(t) for t in texts]
