"""Headless Chromium for the page's browser tests, driven by selenium from the test's own event
loop (every driver call runs in a thread: a blocking call on the loop would stall the server
the browser is talking to).

Chromium and its driver come from the distribution (``apt-get install chromium
chromium-driver``; `make test` installs them when it runs as root). Without them the tests skip
with `MISSING`'s line, the same line `make test` prints; they never pass without a browser.
Selenium is told both paths, so its manager never downloads a browser or a driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

ARTIFACTS = Path(__file__).parent / "artifacts"
"""Screenshots of the browser tests (ignored by git)."""

_NEEDED = {"chromium": "chromium", "chromedriver": "chromium-driver"}


def missing() -> str | None:
    """The line saying what the browser tests lack, or ``None`` when they can run."""
    lacking = [package for command, package in _NEEDED.items() if shutil.which(command) is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        lacking.append("selenium (pip install -e '.[dev]')")
    if not lacking:
        return None
    return (
        f"browser tests skip: {' and '.join(lacking)} missing "
        "(as root: apt-get install -y chromium chromium-driver)"
    )


class Browser:
    """One headless Chromium page; every call runs in a thread."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(function, *args)

    async def get(self, url: str) -> None:
        await self.call(self.driver.get, url)

    async def js(self, script: str, *args: Any) -> Any:
        return await self.call(self.driver.execute_script, script, *args)

    async def console_errors(self) -> list[dict[str, Any]]:
        entries = await self.call(self.driver.get_log, "browser")
        return [entry for entry in entries if entry.get("level") == "SEVERE"]

    async def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        await self.call(self.driver.save_screenshot, str(path))
        print(f"screenshot: {path}")
        return path


@contextlib.asynccontextmanager
async def chromium(width: int = 1600, height: int = 1000) -> AsyncIterator[Browser]:
    """A headless Chromium page, or a skip saying what is missing."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in (
        "--headless=new",
        "--no-sandbox",  # the tests may run as root, where Chromium's sandbox refuses to start
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver"))
    driver = await asyncio.to_thread(webdriver.Chrome, options=options, service=service)
    try:
        yield Browser(driver)
    finally:
        await asyncio.to_thread(driver.quit)


GRID = """
const out = {seq: +document.body.dataset.seq, loaded: window.__loaded === true, nodes: {}};
for (const cell of document.querySelectorAll('[data-node]')) {
  const squares = [...cell.querySelectorAll('.gpu')];
  out.nodes[cell.dataset.node] = {
    held: cell.dataset.held || null,
    jobs: squares.map((s) => s.dataset.job || null),
    colours: squares.map((s) => getComputedStyle(s).backgroundColor),
  };
}
out.free = getComputedStyle(document.querySelector('#legend .gpu')).backgroundColor;
return out;
"""
"""The page's grid as data: for each node cell, who holds it and each GPU square's job and
computed colour; the free colour; ``data-seq``; and whether ``window.__loaded`` (set by the
test once) survived, which a reload would have cleared."""


def expected_squares(node: dict[str, Any]) -> list[str | None]:
    """A `NodeView`'s GPU squares as the page draws them: each job's amount in turn, then
    free ones."""
    squares: list[str | None] = [
        share["job"] for share in node["jobs"] for _ in range(share["amount"])
    ]
    return (squares + [None] * node["capacity"])[: node["capacity"]]


def check_grid(grid: dict[str, Any], snapshot: dict[str, Any]) -> None:
    """The grid shows ``snapshot``'s nodes exactly: one cell per node, each square's job, one
    colour per job and grey for free, and the reservations' marks."""
    assert sorted(grid["nodes"]) == sorted(node["name"] for node in snapshot["nodes"])
    colour_of: dict[str, str] = {}
    for node in snapshot["nodes"]:
        cell = grid["nodes"][node["name"]]
        assert cell["jobs"] == expected_squares(node), node["name"]
        assert cell["held"] == node["held"], node["name"]
        for job, colour in zip(cell["jobs"], cell["colours"], strict=True):
            if job is None:
                assert colour == grid["free"], node["name"]
            else:
                assert colour_of.setdefault(job, colour) == colour, job
                assert colour != grid["free"], job
