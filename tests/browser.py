"""Opening report pages in Debian's chromium (installed by .ci/run) at 1000 px, a mail client's
width, and checking what every page must be: no console errors, no request but the page itself,
every chart decoded to a real image, nothing wider than the page (no horizontal scrolling, no
section or top-level table wider than its box)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def chromium():
    """A headless chromium browser; fails in CI and skips elsewhere when it is not installed."""
    from playwright.sync_api import sync_playwright

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            yield browser
        finally:
            browser.close()


def _watch(page) -> tuple[list[str], list[str]]:
    """Console errors/warnings, page errors and failed loads; every request the page makes."""
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("request", lambda r: requests.append(r.url))
    return problems, requests


def open_checked(browser, path: Path):
    """The page at `path`, opened at 1000 px and checked (module doc); the caller closes it."""
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    problems, requests = _watch(page)
    uri = path.resolve().as_uri()
    page.goto(uri, wait_until="load")
    assert problems == [], (path.name, problems)
    assert requests == [uri], (path.name, requests)
    sizes = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.naturalWidth)")
    assert all(w > 100 for w in sizes), (path.name, sizes)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1000, path.name
    wide = page.eval_on_selector_all(
        "section, main > table", "els => els.filter(e => e.scrollWidth > e.clientWidth + 1)"
        ".map(e => e.dataset.section || e.tagName)")
    assert wide == [], (path.name, wide)
    return page
