"""The libraries' virtual environments, made on first use and reused from the user's cache.

aiogram's is the load test peer's (`sponsorbot.loadtest.peer.peer_python`: aiogram 3 pins a
pydantic older than the product's). python-telegram-bot's is made here the same way, beside
it in ~/.cache/sponsorbot-peer/python-telegram-bot-22.8 (named after the pin, so another pin
makes another environment): under a lock, complete once its ready file (the version) is
written. It is made without pip of its own: the product's pip installs into it
(``pip --python``), which saves the seconds ensurepip takes. Both are made at once; with no
package index pip gives up at once and the conformance tests are skipped.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sponsorbot.loadtest.peer import PeerUnavailable, peer_python, venv_dir

PTB_REQUIREMENTS = ("python-telegram-bot==22.8",)
READY = "ready"


class VenvUnavailable(RuntimeError):
    """A library's environment cannot be made here (no package index, say)."""


def _run(args: list[str], timeout: float) -> str:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VenvUnavailable(f"{' '.join(args[:5])} ...: {exc}") from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise VenvUnavailable(f"{' '.join(args[:5])} ... exited with {done.returncode}:\n{tail}")
    return done.stdout.strip()


def ptb_dir() -> Path:
    """Where python-telegram-bot's environment lives: beside the aiogram peer's."""
    return venv_dir().parent / "-".join(r.replace("==", "-") for r in PTB_REQUIREMENTS)


def ptb_python() -> tuple[Path, str]:
    """The interpreter of python-telegram-bot's environment and PTB's version."""
    home = ptb_dir()
    python = home / "bin" / "python"
    ready = home / READY
    if python.exists() and ready.exists():
        return python, ready.read_text().strip()
    try:
        home.parent.mkdir(parents=True, exist_ok=True)
        with (home.parent / f".{home.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another test run may be making it right now
            if python.exists() and ready.exists():
                return python, ready.read_text().strip()
            shutil.rmtree(home, ignore_errors=True)  # a half-made one
            _run([sys.executable, "-m", "venv", "--without-pip", str(home)], timeout=60)
            pip = [sys.executable, "-m", "pip", "--python", str(python), "install"]
            quiet = ["--quiet", "--disable-pip-version-check", "--retries", "0", "--timeout", "10"]
            _run([*pip, *quiet, *PTB_REQUIREMENTS], 300)
            version = _run([str(python), "-c", "import telegram; print(telegram.__version__)"], 60)
            ready.write_text(version + "\n")
    except OSError as exc:
        raise VenvUnavailable(f"cannot make {home}: {exc}") from None
    return python, version


def library_pythons() -> dict[str, tuple[Path, str]]:
    """Each library's interpreter and version, the environments made side by side."""
    with ThreadPoolExecutor(2) as pool:
        aiogram = pool.submit(peer_python, lambda _: None)
        ptb = pool.submit(ptb_python)
        try:
            return {"aiogram": aiogram.result(), "ptb": ptb.result()}
        except PeerUnavailable as exc:
            raise VenvUnavailable(str(exc)) from None
