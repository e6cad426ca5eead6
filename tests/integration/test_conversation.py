"""Conversation state on the real database: written with the update, read once, expiring."""

from __future__ import annotations

from typing import Any, cast

import asyncpg

from sponsorbot.engine import conversation, janitor
from sponsorbot.engine.unit import BotInfo, Context, UnitOfWork

BOT = 4242
USER = 77


async def add_bot(pool: asyncpg.Pool) -> None:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, 'talk_bot', '', 'xxxx', 'polling', 'p', '')",
        BOT,
    )


def ctx(pool: asyncpg.Pool) -> Context:
    info = BotInfo(BOT, "talk_bot", "polling", "active")
    return Context(info, cast(Any, None), pool, UnitOfWork(BOT), chat_key=USER)


async def test_state_commits_with_the_update_and_reads_back(pool: asyncpg.Pool) -> None:
    await add_bot(pool)
    first = ctx(pool)
    assert await first.conversation() is None
    conversation.begin(first.uow, USER, "shop:hash", {"order": 12})
    assert await first.conversation() is None  # nothing is written before the commit
    await first.uow.commit(pool)

    second = ctx(pool)
    found = await second.conversation()
    assert found is not None
    assert (found.state, found.data) == ("shop:hash", {"order": 12})
    conversation.begin(second.uow, USER, "upload:batch", {"items": []})
    await second.uow.commit(pool)
    third = ctx(pool)
    replaced = await third.conversation()
    assert replaced is not None and replaced.state == "upload:batch"

    conversation.end(third.uow, USER)
    await third.uow.commit(pool)
    assert await ctx(pool).conversation() is None


async def test_an_expired_conversation_reads_as_none_and_the_janitor_drops_it(
    pool: asyncpg.Pool,
) -> None:
    await add_bot(pool)
    uow = UnitOfWork(BOT)
    conversation.begin(uow, USER, "shop:hash", ttl_s=0.0)
    await uow.commit(pool)
    assert await ctx(pool).conversation() is None
    await pool.execute("UPDATE conversations SET expires_at = now() - interval '2 days'")
    await janitor.sweep(pool, janitor.engine_sweeps(3600, 3600))
    assert await pool.fetchval("SELECT count(*) FROM conversations") == 0


def test_a_state_name_is_short_and_not_empty() -> None:
    for bad in ("", "x" * 65):
        try:
            conversation.begin(UnitOfWork(BOT), USER, bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
