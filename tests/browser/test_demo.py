"""`sponsorbot demo` as a user meets it: start it, sign in, see data, get content on the phone."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from playwright.async_api import Browser

from sponsorbot.demo.setup import OWNER_EMAIL, OWNER_PASSWORD
from tests.browser.kit import NEEDS_CHROMIUM, shot
from tests.processes import free_port, start_demo

READY_WITHIN_S = 30.0

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    NEEDS_CHROMIUM,
]


@dataclass
class Running:
    """A started demo: its process, what it printed, and how long it took to be ready."""

    proc: subprocess.Popen[str]
    data_dir: Path
    panel: str
    phone: str
    code: str
    seconds: float


def _leftovers(data_dir: Path) -> list[str]:
    """Processes still naming the demo's data dir or ports (children, PostgreSQL)."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(data_dir) in cmdline:
            found.append(f"{proc.info['pid']}: {cmdline}")
    return found


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Running]:
    data_dir = tmp_path / "demo"
    port, sim_port = free_port(), free_port()
    began = time.monotonic()
    proc = start_demo(data_dir, port, sim_port)
    assert proc.stdout is not None
    printed = []
    try:
        for line in proc.stdout:
            printed.append(line)
            if "Ctrl-C stops everything" in line:
                break
        seconds = time.monotonic() - began
        text = "".join(printed)
        assert "Ctrl-C stops everything" in text, text
        phone = re.search(r"Phone:\s+(\S+)", text)
        code = re.search(r"start code (\S+)", text)
        assert phone and code, text
        assert OWNER_EMAIL in text and OWNER_PASSWORD in text
        yield Running(
            proc, data_dir, f"http://127.0.0.1:{port}", phone.group(1), code.group(1), seconds
        )
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    assert proc.returncode == 0, "".join(printed) + proc.stdout.read()
    deadline = time.monotonic() + 10
    while _leftovers(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _leftovers(data_dir) == []


async def test_the_demo_signs_in_shows_data_and_gates_content(
    demo: Running, chromium: Browser
) -> None:
    from playwright.async_api import expect

    assert demo.seconds < READY_WITHIN_S, f"ready after {demo.seconds:.1f} s"
    # The panel and the phone in contexts of their own: the panel's sign-in stays out of the phone.
    async with (
        await chromium.new_context(viewport={"width": 1280, "height": 900}) as panel_context,
        await chromium.new_context() as phone_context,
    ):
        page = await panel_context.new_page()
        await page.goto(f"{demo.panel}/")
        await page.fill("#f-email", OWNER_EMAIL)
        await page.fill("#f-password", OWNER_PASSWORD)
        await page.click("main button.primary")
        await expect(page).to_have_url(f"{demo.panel}/")
        main = page.locator("main")
        for bot in ("@cinema_vault_bot", "@study_notes_bot", "@music_box_bot"):
            await expect(main).to_contain_text(bot)
        # A month of history: every bot had visitors, and sent messages in the last day.
        figures = [int(n) for n in re.findall(r"Visitors today\s+(\d+)", await main.inner_text())]
        assert len(figures) == 3 and sum(figures) > 0, figures
        await shot(page, "demo-dashboard")

        phone = await phone_context.new_page()
        await phone.goto(demo.phone)
        await phone.fill("#payload", demo.code)
        await phone.click("#open")
        gate = phone.locator(".msg.bot").last
        await expect(gate.locator("button.inline").first).to_be_visible()
        # Join each channel through the gate's buttons (the private one takes a request).
        joins = gate.locator("button.inline", has_text="↗")
        expected = ["Joined: member", "Joined: pending"]
        assert await joins.count() == len(expected)
        for n, status in enumerate(expected):
            await joins.nth(n).click()
            await expect(phone.locator("#status")).to_have_text(status)
        await gate.locator("button.inline").last.click()
        await expect(phone.locator(".msg.bot .text").last).to_have_text(
            "Episode 1: the pilot", timeout=15_000
        )
