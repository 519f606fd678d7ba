"""`make check`'s type check: mypy over the installed package `tracelake`, with a burn-down list.

mypy cannot follow setuptools' editable install (an import hook maps `tracelake.lake` onto `lake/`,
`tracelake` onto `api/`: docs/packaging.md), so the package is laid out for it as links in
build/typecheck/tracelake/ and checked there (settings: [tool.mypy] in pyproject.toml); the errors
are reported under their files in the checkout.

.ci/mypy-baseline.txt lists the errors each file had when the check was introduced, as counts. It
only shrinks: the check fails on an error in a file not listed, on a file with more errors than
listed, and on one with fewer (lower its count: `python .ci/typecheck.py --update` lowers every
count that can be, and never raises one).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / "build" / "typecheck"
BASELINE = REPO / ".ci" / "mypy-baseline.txt"
_ERROR = re.compile(r"^tracelake/(\S+?\.py):\d+: error: ")


def _package_dirs() -> dict[str, str]:
    """'tracelake.lake' -> 'lake', 'tracelake' -> 'api', from pyproject.toml."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return pyproject["tool"]["setuptools"]["package-dir"]


def lay_out() -> None:
    """build/typecheck/tracelake/: the root package's modules and a link per subpackage."""
    package = ROOT / "tracelake"
    shutil.rmtree(package, ignore_errors=True)
    package.mkdir(parents=True)
    for name, folder in _package_dirs().items():
        if name == "tracelake":
            for f in sorted((REPO / folder).glob("*.py")):
                (package / f.name).symlink_to(f)
        else:
            (package / name.removeprefix("tracelake.")).symlink_to(REPO / folder, target_is_directory=True)


def checkout_path(packaged: str) -> str:
    """'lake/database.py' (as under build/typecheck/tracelake/) -> its path in the checkout."""
    dirs = _package_dirs()
    head, _, rest = packaged.partition("/")
    if rest and f"tracelake.{head}" in dirs:
        return f"{dirs[f'tracelake.{head}']}/{rest}"
    return f"{dirs['tracelake']}/{packaged}"


def run_mypy() -> tuple[list[str], Counter]:
    """mypy's error lines (paths in the checkout) and the count per file."""
    lay_out()
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
         "--cache-dir", str(REPO / ".mypy_cache"), "--no-pretty", "--no-error-summary", "-p", "tracelake"],
        cwd=ROOT, capture_output=True, text=True)
    if out.returncode not in (0, 1) or out.stderr.strip():
        sys.exit(f"mypy failed to run (exit {out.returncode}):\n{out.stderr}{out.stdout}")
    lines, counts = [], Counter()
    for line in out.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            path = checkout_path(m.group(1))
            counts[path] += 1
            lines.append(path + line[m.end(1):])
    return lines, counts


def read_baseline() -> dict[str, int]:
    out = {}
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            count, path = line.split()
            out[path] = int(count)
    return out


def write_baseline(baseline: dict[str, int]) -> None:
    head = [line for line in BASELINE.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    body = [f"{n:>3} {path}" for path, n in sorted(baseline.items()) if n]
    BASELINE.write_text("\n".join(head + body) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    lines, counts = run_mypy()
    baseline = read_baseline()
    if "--update" in argv:
        lowered = {path: min(n, counts.get(path, 0)) for path, n in baseline.items()}
        write_baseline(lowered)
        baseline = lowered
    problems = []
    for path in sorted(set(counts) | set(baseline)):
        have, allowed = counts.get(path, 0), baseline.get(path, 0)
        if have > allowed:
            problems.append(f"{path}: {have} type errors, {allowed} allowed by .ci/mypy-baseline.txt:")
            problems.extend(f"  {line}" for line in lines if line.startswith(path + ":"))
        elif have < allowed:
            problems.append(f"{path}: {have} type errors, .ci/mypy-baseline.txt still allows {allowed}: lower it "
                            "(`.venv/bin/python .ci/typecheck.py --update`)")
    print("\n".join(problems) if problems else
          f"mypy: {sum(counts.values())} known errors in {len(counts)} files (.ci/mypy-baseline.txt), none new")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
