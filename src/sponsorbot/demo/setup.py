"""Connect the demo's simulated world to the product, as an owner would.

Bots, channels, the gate and content go through the owner API (the same checks as a real
owner's: tokens are checked live, channels are inspected for the bot's rights). The panel's
owner account and the workspace's look are written through the panel's own account code.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from sponsorbot.demo.world import SimBot, World
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.accounts.security import hash_password
from sponsorbot.features.accounts.users import create_owner, new_setup_code, owner_exists
from sponsorbot.features.alerts.links import TeamLinks
from sponsorbot.loadtest.scenario import OwnerApi
from sponsorbot.simulator.client import SimulatorClient

OWNER_EMAIL = "demo@sponsorbot.example"
OWNER_PASSWORD = "sponsorbot-demo"
OWNER_NAME = "Demo Owner"
WORKSPACE_NAME = "Sponsorbot demo"
# Most of the made-up audience lives here; "more in the evening" means evening in Tehran.
TIME_ZONE = "Asia/Tehran"


@dataclass
class Content:
    """A content item as the product stored it."""

    id: int
    code: str


@dataclass
class ProductBot:
    """What the product knows of one demo bot after set-up."""

    sim: SimBot
    contents: list[Content]
    gate: list[tuple[int, bool]]  # (chat_id, a pending join request counts)


async def ensure_owner(pool: asyncpg.Pool) -> None:
    """The demo's owner account and the workspace's name and time zone (once)."""
    if await owner_exists(pool):
        return
    now = datetime.now(UTC)
    code = await new_setup_code(pool, now)
    if code is None:  # another process made the owner meanwhile
        return
    async with pool.acquire() as conn, conn.transaction():
        await create_owner(conn, code, OWNER_EMAIL, OWNER_NAME, hash_password(OWNER_PASSWORD), now)
        await conn.execute(
            "UPDATE workspace SET name = $1, time_zone = $2 WHERE id = 1", WORKSPACE_NAME, TIME_ZONE
        )


async def link_owner(pool: asyncpg.Pool, sim: SimulatorClient, owner_user: int, bot: str) -> None:
    """The demo's owner links their simulated Telegram account to the panel, as an owner does:
    a code from the Notifications page, sent to the bot. New orders, payments and bots in
    trouble then arrive in that chat (the phone page shows it) with their buttons."""
    owner = await pool.fetchval("SELECT id FROM users WHERE role = 'owner'")
    if owner is None or await pool.fetchval("SELECT 1 FROM team_links WHERE user_id = $1", owner):
        return
    bot_id = await pool.fetchval("SELECT id FROM bots WHERE username = $1", bot)
    code = await TeamLinks(pool).new_code(owner, bot_id, datetime.now(UTC))
    await sim.send_text(owner_user, bot, f"/start {code.start}")


async def api_token(pool: asyncpg.Pool) -> tuple[int, str]:
    """A short-lived owner API token for the set-up (revoked once it is done)."""
    row, token = await TokenService(pool).create("demo set-up", "owner")
    return int(row["id"]), token


async def revoke(pool: asyncpg.Pool, token_id: int) -> None:
    """Revoke the set-up token."""
    await TokenService(pool).revoke(token_id)


def _gate(bot: SimBot) -> list[tuple[int, bool]]:
    return [(c.chat_id, c.plan.join_request) for c in bot.channels]


async def connect_bot(sim: SimulatorClient, api: OwnerApi, bot: SimBot, fresh: bool) -> ProductBot:
    """Connect one bot: token, channels (checked live), gate, content; then take a right away.

    On a kept demo the bot and its content are in the database already; its channels are
    added again so the product makes its invite links in the new simulated world.
    """
    if fresh:
        await api.call("POST", "/bots", {"token": bot.token, "mode": "polling"})
    else:
        await api.call("POST", f"/bots/{bot.id}/resume", {})
    for channel in bot.channels:
        ref = f"@{channel.plan.username}" if channel.plan.username else str(channel.chat_id)
        await api.call("POST", f"/bots/{bot.id}/channels", {"ref": ref})
    gate = _gate(bot)
    entries = [{"chat_id": c, "request_counts": r} for c, r in gate]
    await api.call("PUT", f"/bots/{bot.id}/gate", {"channels": entries})
    contents: list[Content] = []
    if fresh:
        for (kind, words), file_id in zip(bot.plan.contents, bot.file_ids, strict=True):
            body: dict[str, object] = {"kind": kind, "protect_content": kind != "text"}
            if file_id is None:
                body["text"] = words
            else:
                body.update(file_id=file_id, caption=words)
            made = await api.call("POST", f"/bots/{bot.id}/contents", body)
            contents.append(Content(int(made["id"]), str(made["code"])))
    for channel in bot.channels:
        if channel.plan.loses_rights:
            # The bot was demoted after the channel joined the gate: the panel warns about it.
            await sim.remove_admin(channel.chat_id, bot.id)
            await api.call("POST", f"/bots/{bot.id}/channels/{channel.chat_id}/check", {})
    return ProductBot(bot, contents, gate)


async def stored_contents(pool: asyncpg.Pool, bot_id: int) -> list[Content]:
    """A kept demo's content items of one bot, oldest first."""
    rows = await pool.fetch("SELECT id, code FROM contents WHERE bot_id = $1 ORDER BY id", bot_id)
    return [Content(int(r["id"]), str(r["code"])) for r in rows]


async def connect(
    sim: SimulatorClient, api: OwnerApi, pool: asyncpg.Pool, world: World, fresh: bool
) -> list[ProductBot]:
    """Connect every demo bot (see `connect_bot`)."""
    bots: list[ProductBot] = []
    for sim_bot in world.bots:
        bot = await connect_bot(sim, api, sim_bot, fresh)
        if not fresh:
            bot.contents = await stored_contents(pool, sim_bot.id)
        bots.append(bot)
    return bots


# A kept demo meets a new simulated world: queues and message ids of the old one mean nothing
# there, and the simulator numbers its updates from the same start again, so the inbox's
# (bot_id, update_id) key would take the new updates for duplicates. The bots wait paused until
# the new world has them (a poll before that would get 401 and mark the token refused). A
# broadcast's recipients whose messages are dropped wait to be queued again.
FORGET_OLD_WORLD = """
UPDATE bots SET status = 'paused';
DELETE FROM inbox;
UPDATE broadcast_recipients r SET status = 'waiting', outbox_id = NULL
FROM outbox o
WHERE o.bot_id = r.bot_id AND o.id = r.outbox_id AND r.status = 'queued' AND o.status = 'pending';
DELETE FROM outbox WHERE status = 'pending';
DELETE FROM message_refs;
UPDATE bots SET poll_offset = 0;
UPDATE channels SET invite_link = NULL;
UPDATE people SET gate_content_id = NULL, gate_ref = NULL, gate_checks = 0
 WHERE gate_ref IS NOT NULL;
"""


async def forget_old_world(pool: asyncpg.Pool) -> None:
    """With the product stopped: drop what belonged to this simulator, pause the bots."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(FORGET_OLD_WORLD)


async def has_bots(pool: asyncpg.Pool) -> bool:
    """Whether a demo was set up in this database before."""
    return bool(await pool.fetchval("SELECT EXISTS (SELECT 1 FROM bots)"))
