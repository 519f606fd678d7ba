"""The generated docs are current: docs/schema.md, docs/cli.md and docs/views.md are what `make docs`
(tools/make_docs.py) writes now, bench/RESULTS.md is what `make bench` renders from bench/results/, and
every link into the generated references names an anchor they have."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys

import pytest
from conftest import REPO


def _generate():
    spec = importlib.util.spec_from_file_location("make_docs", REPO / "tools" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def outputs() -> dict:
    return _generate().outputs()


@pytest.mark.parametrize("name", ["schema.md", "cli.md", "views.md"])
def test_generated_doc_is_current(outputs, name):
    path = REPO / "docs" / name
    assert path.read_text(encoding="utf-8") == outputs[path], f"docs/{name} is stale: run `make docs`"


def test_bench_results_are_rendered_from_the_stored_cases():
    sys.path.insert(0, str(REPO))
    try:
        bench = importlib.import_module("bench.__main__")
    finally:
        sys.path.remove(str(REPO))
    assert (REPO / "bench" / "RESULTS.md").read_text(encoding="utf-8") == bench.render(), \
        "bench/RESULTS.md is rendered from bench/results/ (bench/__main__.py): change those, then render it again"


_LINK = re.compile(r"\]\((?:docs/)?(views|cli|schema)\.md#([\w-]+)\)")


def test_links_into_the_references_resolve(outputs):
    anchors = {}
    for name in ("views", "cli", "schema"):
        text = outputs[REPO / "docs" / f"{name}.md"]
        ids = set(re.findall(r'<a id="([\w-]+)"></a>', text))
        for heading in re.findall(r"^#+ (.+)$", text, re.M):  # GitHub's anchors of headings
            ids.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
        anchors[name] = ids
    broken = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target, anchor in _LINK.findall(doc.read_text(encoding="utf-8")):
            if anchor not in anchors[target]:
                broken.append(f"{doc.relative_to(REPO)}: {target}.md#{anchor}")
    assert not broken, broken
