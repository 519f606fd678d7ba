"""Every code block of README.md and docs/*.md that a reader would run is run (issue #49).

- ```python blocks run, each in a fresh interpreter, in a scratch folder laid out as the docs
  say (docs/python.md, "Running the examples"): `tests/` is the repository's tests folder (the
  sample traces in tests/data, the recorded pairs in tests/recorded) and `traces/` a copy of
  tests/data; what a block writes (lake/, out/) it makes there. A block passes when it exits 0.
- ```sh blocks: every `tracelake ...` command line (continuation lines joined, comments dropped)
  is parsed by the CLI's own argument parser, which must accept it. Synopsis lines (holding
  `[` or `|`) and other programs (make, duckdb, dask, pip) are not checked; nor is the CI example
  (```yaml), whose tracelake line is the sh block's above it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import DATA, REPO
from tracelake.analysis import diff_gate
from tracelake.cli.main import build_parser

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)


def blocks(language: str) -> list[tuple[str, str]]:
    """(file:line, code) of each block of that language, dedented (blocks inside list items)."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in _BLOCK.finditer(text):
            if m.group(2) == language:
                line = text[: m.start()].count("\n") + 1
                out.append((f"{doc.relative_to(REPO)}:{line}", textwrap.dedent(m.group(3))))
    return out


def test_the_docs_have_blocks_of_each_kind():
    # the extraction finds them: a renamed fence must not silence this test
    assert len(blocks("python")) >= 3 and len(blocks("sh")) >= 5


@pytest.mark.parametrize("where, code", blocks("python"), ids=[w for w, _ in blocks("python")])
def test_python_block_runs(where, code, tmp_path):
    (tmp_path / "tests").symlink_to(REPO / "tests")
    shutil.copytree(DATA, tmp_path / "traces", ignore=shutil.ignore_patterns("oracles"))
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{where}:\n{done.stderr[-3000:]}"


def commands() -> list[tuple[str, list[str]]]:
    out = []
    for where, code in blocks("sh"):
        pending = ""
        for line in code.replace("\\\n", " ").splitlines():
            line = pending + line.split(" #")[0]
            try:
                words = shlex.split(line)
            except ValueError:  # a quoted argument goes on over the next line
                pending = line + "\n"
                continue
            pending = ""
            if words and words[0].endswith("tracelake") and "[" not in line and "|" not in line:
                out.append((where, words[1:]))
    return out


@pytest.mark.parametrize("where, args", commands(), ids=[f"{w} {' '.join(a[:2])}" for w, a in commands()])
def test_sh_command_parses(where, args):
    parser = build_parser()
    parser.exit_on_error = False
    try:
        parsed = parser.parse_args(args)
    except SystemExit as e:  # subparsers still exit on a bad argument
        pytest.fail(f"{where}: tracelake {' '.join(args)}: exit {e.code}")
    for condition in getattr(parsed, "fail_if", None) or []:  # parsed by the command, not by argparse
        diff_gate.parse(condition)
