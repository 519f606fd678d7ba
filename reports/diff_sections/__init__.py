"""The sections of a diff page, in page order: the trace page's unit (reports/sections), built from
a DiffPage (reports/diff_page.py) instead of a trace. A section is a module (or, for the sections of
one kind of cause, an object of diff_sections/kinds.py) with NAME, TITLE, VIEWS (the views it reads
beyond the diff object: jobs/diff.PAGE_VIEWS holds them), build(page) -> dict | None (None: the
diff has nothing for it), and a template: TEMPLATE, else templates/diff_sections/<NAME>.html.j2,
that shows the dict as `s`. Charts are Figures (reports/figure.py): the chart and the table of
exactly the rows it draws."""

from __future__ import annotations

from . import causes, kinds, memory, steady, step_time

DIFF_SECTIONS = [step_time, causes, *kinds.SECTIONS, memory, steady]


def views() -> list[str]:
    """Every view a section reads, each once, in page order."""
    return list(dict.fromkeys(v for section in DIFF_SECTIONS for v in section.VIEWS))
