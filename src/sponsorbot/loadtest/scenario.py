"""What a load test does to the product: set bots up as an owner would, then send visitors."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import asyncpg

from sponsorbot.simulator.client import SimulatorClient

TICK_S = 0.01
# With --broadcast: made-up recipients are created in chunks of the simulator's bulk limit.
BULK = 100_000
# The recipients' language, and the broadcast's audience filter: the visitors have none, so
# the broadcast reaches the made-up recipients alone and no visitor gets a message that would
# be taken for their answer (or a duplicate of it).
RECIPIENTS_LANGUAGE = "fa"
PEOPLE = """
INSERT INTO people (bot_id, user_id, language)
SELECT $1, u, $3 FROM unnest($2::bigint[]) AS u
"""
# With joins, a visitor joins the second gate channel this long after opening the content
# link, as someone reading the gate message would; by then the /start that makes the bot know
# them is handled (and the person's updates are handled in order anyway).
JOIN_AFTER_S = 1.0


class SetupError(Exception):
    """The owner API refused a set-up step; the message says which."""


@dataclass
class LoadBot:
    """A bot set up for the load test: its ids, a content link's code and, with joins, where
    its visitors join: its campaign's invite link, or else the channel's @username."""

    sim_id: int
    username: str
    api_id: int
    code: str
    campaign_link: str | None = None
    join_chat: str | None = None


@dataclass
class Opened:
    """Visitors sent, by phase: user id → (bot id, time the link was opened)."""

    warmup: dict[int, tuple[int, float]] = field(default_factory=dict)
    measured: dict[int, tuple[int, float]] = field(default_factory=dict)
    failed: int = 0
    joins: int = 0  # joins the simulator accepted
    join_failures: int = 0
    # Joins still to come: they run on past the phase that sent their visitors, so the joins
    # keep coming, one second behind the visitors, from one phase into the next.
    joining: set[asyncio.Task[None]] = field(default_factory=set)

    async def joined(self) -> None:
        """Wait for the joins still to come."""
        while self.joining:
            await asyncio.gather(*self.joining)


class OwnerApi:
    """The owner JSON API, with a Bearer token, as an owner's script would use it."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base.rstrip("/") + "/api/v1"
        self.http = aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"})

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One request; a non-2xx answer is a SetupError naming the step."""
        async with self.http.request(method, self.base + path, json=body) as response:
            data = await response.json(content_type=None)
            if response.status >= 300:
                raise SetupError(f"{method} {path}: {response.status} {data}")
            return data

    async def close(self) -> None:
        """Close the HTTP session."""
        await self.http.close()


async def set_up_bot(
    sim: SimulatorClient, api: OwnerApi, n: int, campaign: bool = False, joins: bool = False
) -> LoadBot:
    """A bot in webhook mode with two gate channels and a video, through the owner API; with
    `campaign`, a running campaign on its second gate channel, which its visitors join through
    the campaign's link; with `joins` alone, they join that channel by its @username.

    The campaign's channel is one the gate has already, so a visitor costs the same two
    membership checks and one gate message with or without campaigns: the difference is the
    campaign's own work (its link in the gate, the joins through it credited)."""
    made = await sim.create_bot(f"load{n}_bot")
    channels = []
    for c in (1, 2):
        channel = await sim.create_channel(f"Load {n} sponsor {c}", username=f"load{n}_sponsor{c}")
        await sim.make_admin(channel["id"], made["id"], can_invite_users=True)
        channels.append(channel)
    bot = await api.call("POST", "/bots", {"token": made["token"], "mode": "webhook"})
    gate = []
    for channel in channels:
        added = await api.call(
            "POST", f"/bots/{bot['id']}/channels", {"ref": f"@{channel['username']}"}
        )
        gate.append(added["chat_id"])
    await api.call("PUT", f"/bots/{bot['id']}/gate", {"channel_ids": gate})
    # A video the bot can send by file_id: one a person sent it earlier.
    owner = await sim.create_user("Owner")
    file = await sim.send_file(owner["id"], made["username"], kind="video", file_name="v.mp4")
    content = await api.call(
        "POST",
        f"/bots/{bot['id']}/contents",
        {"kind": "video", "file_id": file["file_id"], "caption": "Load test video"},
    )
    link = None
    if campaign:
        made_campaign = await api.call(
            "POST",
            "/campaigns",
            {
                "name": f"Load test {n}",
                "channel": f"@{channels[1]['username']}",
                "bot_ids": [bot["id"]],
                "retention_hours": 24,
            },
        )
        link = str(made_campaign["links"][0]["invite_link"])
    chat = f"@{channels[1]['username']}" if joins and not campaign else None
    return LoadBot(made["id"], made["username"], bot["id"], content["code"], link, chat)


async def add_recipients(
    sim: SimulatorClient, pool: asyncpg.Pool, bot: LoadBot, count: int
) -> list[int]:
    """`count` made-up people who started the bot earlier: a chat with it in the simulator and
    a row in `people`, as the bot's audience of long standing; their ids."""
    users: list[int] = []
    while len(users) < count:
        chunk = await sim.create_users(
            min(BULK, count - len(users)),
            "Subscriber",
            RECIPIENTS_LANGUAGE,
            started=bot.username,
        )
        await pool.execute(PEOPLE, bot.api_id, chunk, RECIPIENTS_LANGUAGE)
        users.extend(chunk)
    return users


BROADCAST_POST: dict[str, Any] = {
    "text": "<b>Load test news</b>: a new episode is out.",
    "media_kind": None,
    "file_id": None,
    "buttons": [],
    "protect": False,
    "silent": False,
    "paid": False,
}


async def start_broadcast(api: OwnerApi, bot: LoadBot) -> int:
    """Create a broadcast to the bot's made-up recipients and send it now; its id."""
    made = await api.call(
        "POST",
        f"/bots/{bot.api_id}/broadcasts",
        {
            "title": "Load test broadcast",
            "post": BROADCAST_POST,
            "audience": {
                "active_days": None,
                "language": RECIPIENTS_LANGUAGE,
                "campaign_id": None,
                "passed": False,
            },
            "send": "now",
            "scheduled_at": None,
        },
    )
    return int(made["id"])


async def send_visitors(
    sim: SimulatorClient,
    bots: list[LoadBot],
    users: list[int],
    rate: float,
    seconds: float,
    into: dict[int, tuple[int, float]],
    opened: Opened,
) -> None:
    """Open content links at a steady rate (open loop: a slow bot does not slow the rate).

    Each visitor is new, so each is shown the gate: two membership checks and a message.
    Visitors due in the same 10 ms tick go to the simulator in one request, so the load
    generator costs little of the machine it measures. Where the bot has a campaign, each
    visitor then joins its channel through the campaign's link (JOIN_AFTER_S later), or with
    joins alone, the bot's second gate channel by its @username.
    """
    count = int(rate * seconds)
    start = time.monotonic()
    tasks: set[asyncio.Task[None]] = set()
    sent = 0

    async def batch(group: list[tuple[int, LoadBot]]) -> None:
        try:
            await sim.open_links([(u, b.sim_id, b.code) for u, b in group])
        except Exception:  # counted, not fatal: the report says how many
            opened.failed += len(group)
            for user, _ in group:
                into.pop(user, None)
            return
        joining = [(u, b) for u, b in group if b.campaign_link or b.join_chat]
        if joining:
            task = asyncio.create_task(join(joining))
            opened.joining.add(task)
            task.add_done_callback(opened.joining.discard)

    async def join(joining: list[tuple[int, LoadBot]]) -> None:
        await asyncio.sleep(JOIN_AFTER_S)
        done = await asyncio.gather(
            *(sim.join(u, b.join_chat, b.campaign_link) for u, b in joining),
            return_exceptions=True,
        )
        failed = sum(isinstance(d, BaseException) for d in done)  # counted, not fatal
        opened.joins += len(done) - failed
        opened.join_failures += failed

    while sent < count:
        due = min(count, int((time.monotonic() - start) * rate) + 1)
        group = [(users[i], bots[i % len(bots)]) for i in range(sent, due)]
        sent = due
        now = time.time()
        for user, bot in group:
            into[user] = (bot.sim_id, now)
        task = asyncio.create_task(batch(group))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        await asyncio.sleep(max(0.0, start + sent / rate - time.monotonic(), TICK_S))
    if tasks:
        await asyncio.gather(*tasks)
