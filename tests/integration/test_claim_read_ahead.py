"""The claim reads what a router asked to read ahead (Router.read_ahead), on the real database."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from sponsorbot.engine import conversation, inbox
from sponsorbot.engine.conversation import Conversation
from sponsorbot.engine.inbox import CLAIM, claim_with
from sponsorbot.features.gate.visitor import START_AHEAD

BOT = 81
USER = 5001
CODE = "Abc123xyz0"


def _start(update_id: int, text: str, user: int = USER) -> dict[str, Any]:
    chat = {"id": user, "type": "private"}
    message = {"message_id": update_id, "from": {"id": user}, "chat": chat, "text": text}
    return {"update_id": update_id, "message": message}


@pytest.fixture
async def content(pool: asyncpg.Pool) -> int:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, 'ahead_bot', '', 'xxxx', 'webhook', $2, '')",
        BOT,
        "A" * 32,
    )
    content_id: int = await pool.fetchval(
        "INSERT INTO contents (bot_id, code, kind, items, created_by)"
        " VALUES ($1, $2, 'text', $3, 'test') RETURNING id",
        BOT,
        CODE,
        [{"kind": "text", "text": "hello"}],
    )
    await pool.execute(
        "INSERT INTO people (bot_id, user_id, gate_content_id, gate_ref, gate_checks)"
        " VALUES ($1, $2, $3, 'gate:old', 2)",
        BOT,
        USER,
        content_id,
    )
    await pool.execute(
        "INSERT INTO join_requests (bot_id, user_id, chat_id, status)"
        " VALUES ($1, $2, -100, 'pending')",
        BOT,
        USER,
    )
    return content_id


async def _claim_one(pool: asyncpg.Pool, update: dict[str, Any], sql: str) -> inbox.InboxRow:
    assert await inbox.store_update(pool, BOT, update)
    [row] = await inbox.claim(pool, [BOT], 8, 60.0, None, sql)
    await pool.execute("UPDATE inbox SET status = 'done' WHERE id = $1", row.id)
    return row


async def test_a_start_link_comes_with_its_content_and_the_person_s_gate(
    pool: asyncpg.Pool, content: int
) -> None:
    sql = claim_with((("message", START_AHEAD),))
    row = await _claim_one(pool, _start(1, f"/start {CODE}"), sql)
    ahead = row.ahead
    assert ahead["looked_up"] == CODE and ahead["looked_up_for"] == USER
    assert ahead["id"] == content and ahead["enabled"] is True
    assert ahead["items"] == [{"kind": "text", "text": "hello"}]
    assert (ahead["gate_content_id"], ahead["gate_ref"], ahead["gate_checks"]) == (
        content,
        "gate:old",
        2,
    )
    assert ahead["pending"] == [-100]


async def test_an_unknown_code_reads_no_content_and_other_messages_read_nothing(
    pool: asyncpg.Pool, content: int
) -> None:
    sql = claim_with((("message", START_AHEAD),))
    unknown = await _claim_one(pool, _start(2, "/start Nope000000"), sql)
    assert unknown.ahead["looked_up"] == "Nope000000" and unknown.ahead["id"] is None
    for n, text in enumerate(["hello", "/start", "/start short", f"/start {CODE} more"], 3):
        assert (await _claim_one(pool, _start(n, text), sql)).ahead is None
    # Without read-aheads the claim is the plain one.
    assert claim_with(()) == CLAIM
    assert (await _claim_one(pool, _start(9, f"/start {CODE}"), CLAIM)).ahead is None


async def test_an_odd_payload_never_fails_the_claim(pool: asyncpg.Pool, content: int) -> None:
    sql = claim_with((("message", START_AHEAD),))
    odd: list[Any] = [{"text": 5}, "text", {"text": ["/start", CODE]}, None]
    for n, message in enumerate(odd, 20):
        row = await _claim_one(pool, {"update_id": n, "message": message}, sql)
        assert row.ahead is None


@pytest.mark.parametrize("sql", [CLAIM, claim_with((("message", START_AHEAD),))])
async def test_the_claim_reads_the_persons_open_conversation(
    pool: asyncpg.Pool, content: int, sql: str
) -> None:
    row = await _claim_one(pool, _start(1, "hello"), sql)
    assert row.talk == {}
    assert Conversation.of_claim(row.talk) is None

    await pool.execute(
        "INSERT INTO conversations (bot_id, user_id, state, data, expires_at)"
        " VALUES ($1, $2, 'shop:hash', '{\"order\": 7}', now() + interval '1 hour')",
        BOT,
        USER,
    )
    row = await _claim_one(pool, _start(2, "hello"), sql)
    talk = Conversation.of_claim(row.talk or {})
    read = Conversation.of(
        await pool.fetchrow(conversation.READ, BOT, USER)  # what the handler would read
    )
    assert talk == read
    assert talk is not None and (talk.state, talk.data) == ("shop:hash", {"order": 7})

    # Expired: as closed as conversation.READ finds it.
    await pool.execute("UPDATE conversations SET expires_at = now() - interval '1 second'")
    row = await _claim_one(pool, _start(3, "hello"), sql)
    assert row.talk == {}
