"""A real worker process for tests: the engine with a recording handler.

Settings come from SPONSORBOT_* variables. TEST_DELAY_S makes the handler wait (read phase),
TEST_REPLY=1 makes it queue a reply. Each handled update is recorded in `test_record` in the
same transaction that marks it done.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from sponsorbot.config import Role, load_settings
from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import Context
from sponsorbot.logs import configure_logging
from sponsorbot.runtime import run_async, run_roles

RECORD = """
INSERT INTO test_record (bot_id, chat_key, update_id, pid, attempt)
VALUES ($1, $2, $3, $4, $5)
"""
TABLE = """
CREATE TABLE IF NOT EXISTS test_record (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id bigint NOT NULL, chat_key bigint NOT NULL, update_id bigint NOT NULL,
    pid integer NOT NULL, attempt integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
)
"""


def router() -> Router:
    """A handler for messages that records them and may reply."""
    delay = float(os.environ.get("TEST_DELAY_S", "0"))
    reply = os.environ.get("TEST_REPLY") == "1"
    pid = os.getpid()
    recording = Router("recording")

    @recording.message()
    async def record(message: dict[str, Any], ctx: Context) -> None:
        if delay:
            await asyncio.sleep(delay)
        chat = message["chat"]["id"]
        ctx.uow.write_in_order(
            RECORD, ctx.bot.id, message["from"]["id"], ctx.update_id, pid, ctx.attempt
        )
        if reply:
            ctx.uow.send(chat, "sendMessage", {"text": f"reply to {ctx.update_id}"})

    return recording


def main() -> None:
    """Run the worker role until SIGTERM."""
    settings = load_settings()
    configure_logging(settings.log_format, settings.log_level)
    run_async(run_roles(settings, frozenset([Role.WORKER]), router()))


if __name__ == "__main__":
    main()
