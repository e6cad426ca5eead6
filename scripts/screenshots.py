"""Regenerate the guides' screenshots from the demo, so they follow the panel as it changes.

Run from the repository, in its virtual environment:

    python scripts/screenshots.py

It starts `sponsorbot demo` (embedded PostgreSQL and a simulated Telegram) in a temporary
directory, and for the first-run page a bare `sponsorbot run` on a second empty data directory.
It drives Debian's chromium (`apt-get install chromium`; never a browser downloaded by
Playwright) and writes every image under docs/guide/img/ with the names the guides use, plus the
Persian shop pages docs/screenshots/shop-products-fa.png and shop-payments-fa.png. Emoji need
Debian's `fonts-noto-color-emoji`: without it chromium draws empty boxes, so the script stops
and says so. It takes about a minute and stops everything it started.

The phone pages are captured at the phone's size, not as a whole page: in a whole-page capture
the page's fixed message bar would be drawn across the middle of the chat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, async_playwright, expect

from sponsorbot.demo.setup import OWNER_EMAIL, OWNER_PASSWORD
from sponsorbot.simulator.client import SimulatorClient

ROOT = Path(__file__).resolve().parents[1]
GUIDE_IMAGES = ROOT / "docs" / "guide" / "img"
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
EMOJI_FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
WIDE = {"width": 1280, "height": 860}
PHONE = {"width": 420, "height": 800}
READY_WITHIN_S = 120.0


@dataclass(frozen=True)
class Demo:
    """A started demo: where its panel and phone answer, and the start code it printed."""

    proc: subprocess.Popen[str]
    panel: str
    sim: str
    phone: str
    owner_phone: str
    code: str


@dataclass(frozen=True)
class PanelShot:
    """One panel page: its file name (without -en/-fa), path, languages and capture."""

    name: str
    path: str
    languages: tuple[str, ...] = ("en", "fa")
    height: int = WIDE["height"]
    full_page: bool = False
    folder: Path = GUIDE_IMAGES


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_environ(**extra: str) -> dict[str, str]:
    """This environment without any SPONSORBOT_ setting (the demo must not pick up an
    installation's database), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    env.update(extra)
    return env


def check_machine() -> None:
    """Stop early, saying what to install, when chromium or the emoji font is missing."""
    missing = []
    if not os.path.exists(CHROMIUM):
        missing.append(f"Debian's chromium at {CHROMIUM}: apt-get install chromium")
    if not EMOJI_FONT.exists():
        missing.append(
            "an emoji font, or emoji are drawn as empty boxes: "
            "apt-get install fonts-noto-color-emoji"
        )
    if missing:
        sys.exit("screenshots need:\n  " + "\n  ".join(missing))


def start_demo(data_dir: Path) -> Demo:
    """Start `sponsorbot demo` and wait for its ready banner."""
    port, sim_port = free_port(), free_port()
    command = [sys.executable, "-m", "sponsorbot", "demo", "--data-dir", str(data_dir)]
    command += ["--port", str(port), "--sim-port", str(sim_port)]
    # Our own interpreter and fixed arguments: nothing here comes from outside.
    proc = subprocess.Popen(  # noqa: S603
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_environ()
    )
    assert proc.stdout is not None
    printed = []
    for line in proc.stdout:
        printed.append(line)
        if "Ctrl-C stops everything" in line:
            break
    text = "".join(printed)
    code, phone = re.search(r"start code (\S+)", text), re.search(r"Phone:\s+(\S+)", text)
    owner = re.search(r"Owner:\s+(\S+)", text)
    if code is None or phone is None or owner is None:
        stop(proc, signal.SIGINT)
        sys.exit("the demo did not start:\n" + text)
    sim = f"http://127.0.0.1:{sim_port}"
    return Demo(proc, f"http://127.0.0.1:{port}", sim, phone[1], owner[1], code[1])


def start_empty(data_dir: Path, sim_url: str) -> tuple[subprocess.Popen[bytes], str]:
    """A bare `sponsorbot run` on an empty embedded database: the first-run page is open."""
    port = free_port()
    env = clean_environ(
        SPONSORBOT_DATA_DIR=str(data_dir),
        SPONSORBOT_TELEGRAM_API=sim_url,
        SPONSORBOT_HOST="127.0.0.1",
        SPONSORBOT_PORT=str(port),
        SPONSORBOT_LOG_LEVEL="WARNING",
    )
    log = (data_dir.parent / "empty.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "sponsorbot", "run"], stdout=log, stderr=subprocess.STDOUT, env=env
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"`sponsorbot run` on an empty directory stopped; see {log.name}")
        try:
            # The address is the http://127.0.0.1 one this script just started.
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    stop(proc, signal.SIGTERM)
    sys.exit("`sponsorbot run` on an empty directory never answered")


def stop(proc: subprocess.Popen[Any], how: signal.Signals) -> None:
    """Stop a process this script started, and wait for it."""
    if proc.poll() is None:
        proc.send_signal(how)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def capture(page: Page, path: Path, full_page: bool = False, from_top: bool = True) -> None:
    """Write the page, from its top (or where it is scrolled to), once its fonts are drawn."""
    await page.evaluate("document.fonts.ready")
    if from_top:
        await page.evaluate("window.scrollTo(0, 0)")
    path.parent.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(path), full_page=full_page)
    print(f"  {path.relative_to(ROOT)}")


async def choose_language(page: Page, language: str) -> None:
    """Switch the panel's language with the header's button, as a member does."""
    if await page.get_attribute("html", "lang") != language:
        await page.click(f"header button[name=language][value={language}]")
        await expect(page.locator("html")).to_have_attribute("lang", language)


async def panel_shots(browser: Browser, demo: Demo) -> None:
    """Every panel page the guides show, in English and in Persian."""
    context = await browser.new_context(viewport=WIDE)
    page = await context.new_page()
    await page.goto(f"{demo.panel}/signin")
    await page.fill("#f-email", OWNER_EMAIL)
    await page.fill("#f-password", OWNER_PASSWORD)
    await page.click("main button.primary")
    await expect(page.locator("h1")).to_be_visible()
    await page.goto(f"{demo.panel}/bots")
    first = await page.locator("table.list tbody tr a[href^='/bots/']").first.get_attribute("href")
    assert first is not None
    bot = first.split("/")[2]
    # One uploader, added through its card as an owner would, so the content page shows one.
    await page.goto(f"{demo.panel}/bots/{bot}/content")
    await page.fill("#f-user_id", "4047659197")
    await page.fill("#f-note", "Sam (films)")
    await page.click("text=Add uploader")
    await expect(page.locator("#uploader-4047659197")).to_be_visible()
    shots = [
        PanelShot("bots", "/bots"),
        PanelShot("channels", f"/bots/{bot}/channels", full_page=True),
        PanelShot("content", f"/bots/{bot}/content", height=1500),
        PanelShot("settings", "/settings"),
        PanelShot("team", "/team"),
        PanelShot("tokens", "/tokens"),
        PanelShot("account", "/account", full_page=True),
        PanelShot("notifications", "/notifications", full_page=True),
        PanelShot("visitors", "/visitors", ("fa",), height=1100),
        PanelShot("shop-products", f"/bots/{bot}/shop/products", ("fa",), 900, True, SCREENSHOTS),
        PanelShot("shop-payments", "/shop/payments", ("fa",), 900, True, SCREENSHOTS),
    ]
    for language in ("en", "fa"):
        await choose_language(page, language)
        for shot in shots:
            if language not in shot.languages:
                continue
            await page.set_viewport_size({"width": WIDE["width"], "height": shot.height})
            await page.goto(demo.panel + shot.path)
            await capture(page, shot.folder / f"{shot.name}-{language}.png", shot.full_page)
    await choose_language(page, "en")
    await context.close()


async def setup_shot(browser: Browser, url: str) -> None:
    """The first-run page of an installation without an owner, in Persian."""
    context = await browser.new_context(viewport=WIDE)
    page = await context.new_page()
    await page.goto(f"{url}/setup")
    await choose_language(page, "fa")
    await page.focus("#f-code")
    await capture(page, GUIDE_IMAGES / "setup-fa.png")
    await context.close()


async def phone_shots(browser: Browser, demo: Demo) -> None:
    """A visitor meets the gate, joins, and gets the content: in English and in Persian."""
    sim = SimulatorClient(demo.sim)
    try:
        visitors = {
            "en": await sim.create_user("Sam", language_code="en"),
            "fa": await sim.create_user("سارا", language_code="fa"),
        }
    finally:
        await sim.close()
    # The phone link the demo printed opens its first bot, the one the start code is for.
    bot = re.search(r"[?&]bot=(\w+)", demo.phone)
    assert bot is not None, demo.phone
    for language, visitor in visitors.items():
        context = await browser.new_context(viewport=PHONE)
        page = await context.new_page()
        await page.goto(f"{demo.sim}/_sim/phone?user={visitor['id']}&bot={bot[1]}")
        await page.fill("#payload", demo.code)
        await page.click("#open")
        gate = page.locator(".msg.bot").last
        await expect(gate.locator("button.inline").first).to_be_visible()
        await capture(page, GUIDE_IMAGES / f"phone-gate-{language}.png")
        joins = gate.locator("button.inline", has_text="↗")
        for n in range(await joins.count()):
            await joins.nth(n).click()
            await expect(page.locator("#status")).to_contain_text("Joined")
        await gate.locator("button.inline").last.click()
        await expect(page.locator(".msg.bot", has_text="Episode 1")).to_be_visible(timeout=20_000)
        await page.wait_for_timeout(1500)  # the advertiser's banner that follows the content
        await capture(page, GUIDE_IMAGES / f"phone-delivered-{language}.png")
        await context.close()


async def team_shot(browser: Browser, demo: Demo) -> None:
    """The owner's own Telegram, linked to the panel: an order to review with its buttons."""
    context = await browser.new_context(viewport=PHONE)
    page = await context.new_page()
    await page.goto(demo.owner_phone)
    # Run first, before the panel shots switch the owner's language: the alert is in English.
    order = page.locator(".msg.bot", has_text="New order").last
    await expect(order).to_be_visible(timeout=30_000)
    await page.wait_for_timeout(1500)  # what else waited for the owner arrives with it
    # The chat's newest messages, where the order waits with its buttons.
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    await capture(page, GUIDE_IMAGES / "phone-team-en.png", from_top=False)
    await context.close()


async def shoot(demo: Demo, empty_url: str) -> None:
    """All the captures, in one chromium."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # The owner's chat first: the panel shots switch the owner's language back and
            # forth, and alerts come in the member's language.
            steps: list[Callable[[], Awaitable[None]]] = [
                lambda: team_shot(browser, demo),
                lambda: panel_shots(browser, demo),
                lambda: setup_shot(browser, empty_url),
                lambda: phone_shots(browser, demo),
            ]
            for step in steps:
                await step()
        finally:
            await browser.close()


def main() -> None:
    """Start the demo and an empty installation, capture, stop both."""
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    check_machine()
    with tempfile.TemporaryDirectory(prefix="sponsorbot-shots-") as scratch:
        began = time.monotonic()
        demo = start_demo(Path(scratch) / "demo")
        try:
            empty, empty_url = start_empty(Path(scratch) / "empty", demo.sim)
            try:
                print("writing:")
                asyncio.run(shoot(demo, empty_url))
            finally:
                stop(empty, signal.SIGTERM)
        finally:
            stop(demo.proc, signal.SIGINT)  # what Ctrl-C sends: the demo stops its children
        print(f"done in {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
