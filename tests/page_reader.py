"""Reading a rendered report page back as a reader sees it: its sections, the summary cards, the
tables and the tables beside each chart (<figure data-chart>), with the raw value each number
cell carries (data-value). The page-truth tests compare these with the views and the oracles."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Cell:
    text: str
    value: str | None  # data-value: the number behind the text (None: a text cell)


@dataclass
class Table:
    headers: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)

    def column(self, header: str) -> list[Cell]:
        i = self.headers.index(header)
        return [r[i] for r in self.rows]


@dataclass
class Page:
    sections: list[str] = field(default_factory=list)  # data-section names, in page order
    metrics: dict[str, str] = field(default_factory=dict)  # data-metric -> data-value
    tables: dict[str, list[Table]] = field(default_factory=dict)  # section -> its tables (not in figures)
    figures: dict[str, Table] = field(default_factory=dict)  # data-chart -> the table beside the chart
    images: dict[str, int] = field(default_factory=dict)  # data-chart -> number of <img> in the figure


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.section = None
        self.figure = None
        self.table: Table | None = None
        self.row: list[Cell] | None = None
        self.cell: list | None = None  # [text parts, value, is header]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-metric" in a:
            self.page.metrics[a["data-metric"]] = a.get("data-value")
        if tag == "section" and "data-section" in a:
            self.section = a["data-section"]
            self.page.sections.append(self.section)
            self.page.tables.setdefault(self.section, [])
        elif tag == "figure" and "data-chart" in a:
            self.figure = a["data-chart"]
            self.page.images[self.figure] = 0
        elif tag == "img" and self.figure:
            self.page.images[self.figure] += 1
        elif tag == "table":
            self.table = Table()
        elif tag == "tr" and self.table is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = [[], a.get("data-value"), tag == "th"]

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[0].append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            text = " ".join("".join(self.cell[0]).split())
            if self.cell[2]:
                self.table.headers.append(text)
            else:
                self.row.append(Cell(text, self.cell[1]))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.table.rows.append(self.row)
            self.row = None
        elif tag == "table" and self.table is not None:
            if self.figure:
                self.page.figures[self.figure] = self.table
            elif self.section:
                self.page.tables[self.section].append(self.table)
            self.table = None
        elif tag == "figure":
            self.figure = None
        elif tag == "section":
            self.section = None


def read(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    return reader.page
