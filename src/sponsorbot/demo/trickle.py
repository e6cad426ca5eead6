"""Live simulated visitors: every second or two someone opens a content link.

They act as a person on the phone page would: open the link, and most of those who meet the
gate tap its join buttons (a running campaign's link among them) and then "I've joined". Now
and then someone leaves a channel (a campaign's too) or blocks a bot, so the live figures move
the way the history's do.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any

from sponsorbot.demo.setup import ProductBot
from sponsorbot.simulator.client import SimulatorClient, SimulatorError

log = logging.getLogger(__name__)

JOIN_SHARE = 0.65


class Trickle:
    """Sends live visitors until cancelled."""

    def __init__(
        self,
        sim: SimulatorClient,
        bots: list[ProductBot],
        visitors: list[int],
        seed: int,
        campaign_chats: dict[int, list[int]] | None = None,
    ) -> None:
        self.sim = sim
        self.bots = [b for b in bots if b.contents]
        self.visitors = visitors
        self.campaign_chats = campaign_chats or {}  # bot id → its running campaigns' channels
        self.rng = random.Random(seed)
        self.opened = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """One visitor every 0.7 to 2 seconds, for ever; their follow-ups run alongside."""
        try:
            while True:
                await asyncio.sleep(self.rng.uniform(0.7, 2.0))
                self._spawn(self._visit())
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _visit(self) -> None:
        rng = self.rng
        bot = rng.choices(self.bots, weights=[b.sim.plan.share for b in self.bots])[0]
        user = rng.choice(self.visitors)
        content = rng.choices(
            bot.contents, weights=[1 / (i + 1) ** 0.8 for i in range(len(bot.contents))]
        )[0]
        joins = rng.random() < JOIN_SHARE
        try:
            await self.sim.open_link(user, bot.sim.id, content.code)
            self.opened += 1
            if joins:
                await asyncio.sleep(rng.uniform(2.0, 6.0))
                await self._through_gate(user, bot)
            roll = rng.random()
            if roll < 0.03:
                await self._leave_one(user, bot)
            elif roll < 0.04:
                await self.sim.block_bot(user, bot.sim.id)
        except SimulatorError as exc:
            # A blocked bot, a join already made: people's taps fail like that on Telegram too.
            log.debug("a live visitor's action was refused: %s", exc)

    async def _through_gate(self, user: int, bot: ProductBot) -> None:
        """Tap every join button of the newest gate message, then "I've joined"."""
        gate = await self._gate_message(user, bot)
        if gate is None:
            return
        for row in gate["buttons"]:
            for button in row:
                if button.get("url"):
                    with contextlib.suppress(SimulatorError):  # already a member
                        await self.sim.open_url(user, button["url"])
                    await asyncio.sleep(self.rng.uniform(0.5, 2.0))
        for row in gate["buttons"]:
            for button in row:
                if button.get("callback_data"):
                    await self.sim.press_button(
                        user, bot.sim.id, gate["message_id"], button["callback_data"]
                    )
                    return

    async def _gate_message(self, user: int, bot: ProductBot) -> dict[str, Any] | None:
        for _ in range(10):
            messages = await self.sim.read_chat(user, bot.sim.id)
            for message in reversed(messages):
                if message["from"] == "bot" and not message["deleted"] and message["buttons"]:
                    found: dict[str, Any] = message
                    return found
            await asyncio.sleep(0.5)
        return None

    async def _leave_one(self, user: int, bot: ProductBot) -> None:
        public = [c.chat_id for c in bot.sim.channels if c.plan.username]
        public += self.campaign_chats.get(bot.sim.id, [])
        if public:
            await self.sim.leave(user, self.rng.choice(public))
