"""aiogram 3 and python-telegram-bot against the simulator, as a bot developer would point
them at it: every method of the registry with typical and edge arguments, every update kind
read from getUpdates and from a webhook, every error raised as the library's own class.

One simulator per library in this process (so one library's faults and limits never reach
the other), one client process per library (see the package's docstring); each case of
`cases.py` is a test of its own, judged from the client's line for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sponsorbot.simulator.botapi import METHODS
from tests.kit import simulated_telegram
from tests.simulator.conformance.cases import CALLS, PHASES, WEBHOOK_OFF, WEBHOOK_ON, case_ids
from tests.simulator.conformance.events import EVENTS
from tests.simulator.conformance.spec import Call, Event
from tests.simulator.conformance.venvs import VenvUnavailable, library_pythons

ROOT = Path(__file__).resolve().parents[3]
SIMULATOR_SOURCE = ROOT / "src" / "sponsorbot" / "simulator"
CLIENTS = {
    "aiogram": "tests.simulator.conformance.client_aiogram",
    "ptb": "tests.simulator.conformance.client_ptb",
}
# The class each library raises for each kind of error (PTB: a 401 is InvalidToken, a 5xx a
# NetworkError).
EXCEPTIONS = {
    "aiogram": {
        "bad_request": "TelegramBadRequest",
        "forbidden": "TelegramForbiddenError",
        "unauthorized": "TelegramUnauthorizedError",
        "conflict": "TelegramConflictError",
        "retry_after": "TelegramRetryAfter",
        "server_error": "TelegramServerError",
    },
    "ptb": {
        "bad_request": "BadRequest",
        "forbidden": "Forbidden",
        "unauthorized": "InvalidToken",
        "conflict": "Conflict",
        "retry_after": "RetryAfter",
        "server_error": "NetworkError",
    },
}
# Cases known to fail still: (library, case) -> why. Each must fail (strict).
KNOWN_FAILURES: dict[tuple[str, str], str] = {}
# The flood limits out of the way: cases send many messages to a chat at once.
SIMULATOR = {"per_bot_per_second": 100_000, "per_chat_per_second": 10_000}
SPECS: dict[str, Call | Event] = {
    **{c.id: c for c in (*CALLS, WEBHOOK_ON, WEBHOOK_OFF)},
    **{f"{phase}:{e.id}": e for phase in PHASES for e in EVENTS},
}


@dataclass
class Run:
    """One client's run: its line per case."""

    library: str
    version: str
    lines: dict[str, dict[str, Any]]
    finished: bool
    stderr: str


async def _run_client(library: str, python: Path, version: str, url: str) -> Run:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    proc = await asyncio.create_subprocess_exec(
        str(python),
        "-m",
        CLIENTS[library],
        url,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    except TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
    lines: dict[str, dict[str, Any]] = {}
    finished = False
    noise = []
    for text in out.decode().splitlines():
        try:
            line = json.loads(text)
        except ValueError:  # something the library printed
            noise.append(text)
            continue
        if line.get("done"):
            finished = True
        else:
            lines[line["case"]] = line
    stderr = "\n".join([*noise, err.decode()])
    return Run(library, version, lines, finished, stderr)


@pytest.fixture(scope="module")
async def runs() -> dict[str, Run]:
    """Both clients' runs, side by side, each against its own simulator."""
    try:
        pythons = await asyncio.to_thread(library_pythons)
    except VenvUnavailable as exc:
        pytest.skip(f"a library's virtual environment cannot be made here: {exc}")
    async with contextlib.AsyncExitStack() as stack:
        urls = [
            (await stack.enter_async_context(simulated_telegram(**SIMULATOR))).url for _ in CLIENTS
        ]
        done = await asyncio.gather(
            *(
                _run_client(library, *pythons[library], url)
                for library, url in zip(CLIENTS, urls, strict=True)
            )
        )
    return {run.library: run for run in done}


def _short(sent: Any) -> str:
    text = json.dumps(sent, ensure_ascii=False)
    return text if len(text) <= 3000 else text[:3000] + "..."


def _call_verdict(library: str, call: Call, line: dict[str, Any]) -> list[str]:
    expect, raised, sent = call.expect, line["exception"], line["sent"] or {}
    if expect.error is None:
        if raised is not None:
            return [f"raised {raised}: {line['message']}"]
        found = expect.check(sent["result"]) if expect.check else None
        return [found] if found else []
    wanted = EXCEPTIONS[library][expect.error]
    problems = []
    if raised != wanted:
        problems.append(f"raised {raised} ({line['message']}), Telegram's answer raises {wanted}")
    got = sent.get("description")
    if expect.description is not None and got != expect.description:
        problems.append(f"description {got!r}, Telegram says {expect.description!r}")
    if expect.error == "retry_after":
        sent_after = sent.get("parameters", {}).get("retry_after")
        if line["retry_after"] != sent_after or not sent_after:
            problems.append(f"retry_after read as {line['retry_after']}, sent {sent_after}")
        if expect.retry_after is not None and sent_after != expect.retry_after:
            problems.append(f"retry_after {sent_after}, expected {expect.retry_after}")
    return problems


def verdict(library: str, case: str, line: dict[str, Any]) -> list[str]:
    """What is wrong in one client line, judged against the case's expectation."""
    raised = line["exception"] or ""
    if raised.startswith("driver:"):
        return [f"the suite could not set the case up: {raised[7:]}: {line['message']}"]
    if raised.startswith("client:"):
        return [f"{library} refused the arguments itself: {line['message']}"]
    problems: list[str] = []
    if line["parse_error"]:
        problems.append(f"{library} could not read it: {raised}: {line['message']}")
    problems += line["problems"]
    spec = SPECS[case]
    if isinstance(spec, Call):
        if not line["parse_error"]:
            problems += _call_verdict(library, spec, line)
        return problems
    if raised and not line["parse_error"]:
        problems.append(f"raised {raised}: {line['message']}")
    if line["kinds"] != list(spec.kinds) and not line["parse_error"]:
        problems.append(f"updates {line['kinds']}, expected {list(spec.kinds)}")
    sent = line["sent"]
    bodies = sent.get("result") if isinstance(sent, dict) else sent
    if spec.check is not None and bodies:
        found = spec.check(bodies)
        problems += [found] if found else []
    return problems


def _params() -> list[Any]:
    out = []
    for case in case_ids():
        for library in CLIENTS:
            reason = KNOWN_FAILURES.get((library, case))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(library, case, marks=marks, id=f"{library}-{case}"))
    return out


@pytest.mark.parametrize(("library", "case"), _params())
async def test_case(runs: dict[str, Run], library: str, case: str) -> None:
    run = runs[library]
    line = run.lines.get(case)
    assert line is not None, f"{library} never got to {case}:\n{run.stderr[-3000:]}"
    problems = verdict(library, case, line)
    assert not problems, "\n".join(
        [
            f"{library} {run.version}, {case}:",
            *problems,
            f"the simulator sent: {_short(line['sent'])}",
        ]
    )


@pytest.mark.parametrize("library", CLIENTS)
async def test_the_client_read_everything_without_a_parse_error(
    runs: dict[str, Run], library: str
) -> None:
    run = runs[library]
    assert run.finished, f"{library} did not finish:\n{run.stderr[-3000:]}"
    assert sorted(run.lines) == sorted(case_ids())
    unread = [case for case, line in run.lines.items() if line["parse_error"] or line["problems"]]
    assert unread == []


def test_every_method_of_the_registry_has_cases() -> None:
    covered = {call.method.lower() for call in CALLS}
    assert set(METHODS) - covered == set()


def test_every_kind_of_update_the_simulator_sends_has_events() -> None:
    sent = {
        kind
        for source in SIMULATOR_SOURCE.glob("*.py")
        for kind in re.findall(r"\.emit\(\s*\w+,\s*\"(\w+)\"", source.read_text())
    }
    assert sent, "no emit(bot, kind, ...) found: the simulator's updates moved"
    assert sent - {kind for event in EVENTS for kind in event.kinds} == set()
