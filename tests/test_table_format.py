"""The terminal table of `tracelake sql` / `stats` (cli/table_format.py)."""

from __future__ import annotations

from tracelake.cli.table_format import format_table


def test_numbers_right_text_left_null_shown():
    out = format_table(["name", "total_ns", "pct"], [("a", 5, 12.345), ("longer", 12345, None)], width=80)
    assert out.splitlines()[1:5] == [
        "│  name  │ total_ns │  pct  │",
        "├────────┼──────────┼───────┤",
        "│ a      │        5 │ 12.35 │",
        "│ longer │    12345 │  NULL │",
    ]


def test_wide_text_is_cut_to_the_width_numbers_never():
    name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>" * 3
    out = format_table(["total_ns", "name"], [(123456789, name)], width=60)
    lines = out.splitlines()
    assert all(len(line) <= 60 for line in lines), lines
    assert "123456789" in lines[3] and "…" in lines[3]


def test_long_results_are_elided_in_the_middle():
    out = format_table(["i"], [(i,) for i in range(1000)], max_rows=10).splitlines()
    body = [line for line in out if line.startswith("│")][1:]
    assert [b.strip("│ ") for b in body] == ["0", "1", "2", "3", "4", "·", "995", "996", "997", "998", "999"]
    assert out[-1] == "1000 rows (10 shown)"


def test_percentage_columns_read_as_percentages_when_asked():
    rows = [(14.48, 0.9951, 0.03943, 0.0, 0.5, None)]
    columns = ["time_pct", "compute_pct", "idle_pct", "pct", "ratio", "pct_of_path"]
    body = format_table(columns, rows, percent=True).splitlines()[3]
    assert [c.strip() for c in body.strip("│").split("│")] == ["14.5 %", "1.0 %", "0.039 %", "0.0 %", "0.5", "NULL"]
    assert "14.48" in format_table(columns, rows)  # tracelake sql shows the value as DuckDB would


def test_without_a_width_nothing_is_cut():
    name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>" * 3
    out = format_table(["total_ns", "name"], [(123456789, name)])
    assert name in out and "…" not in out
