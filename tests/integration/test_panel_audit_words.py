"""The audit log reads in plain words: changes as "Field: before → after" with no Python
dicts or None, the records it names linked to their pages, in English and in Persian."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sponsorbot.features.accounts.audit import Actor, Change, changes, record
from sponsorbot.features.accounts.users import set_language
from tests.integration.panel_kit import PanelApp, add_member, client, sign_in

AT = datetime(2026, 3, 20, 8, 0, tzinfo=UTC)


def test_changes_open_nested_fields_and_leave_out_what_did_not_change() -> None:
    before = {"post": {"paid": False, "text": "<b>Old</b>"}, "title": "Weekly"}
    after = {"post": {"paid": False, "text": "<b>New</b>"}, "title": "Weekly"}
    assert changes(before, after) == [Change("post.text", "<b>Old</b>", "<b>New</b>")]
    assert changes(None, {"id": 3, "ends_at": None}) == [
        Change("id", None, 3),
        Change("ends_at", None, None),
    ]


async def test_the_audit_page_says_what_changed_in_words_and_links_records(
    panel: PanelApp,
) -> None:
    email = await add_member(panel.pool, "owner")
    owner = Actor(None, "Sara", "127.0.0.1")
    await record(
        panel.pool, AT, owner, "shop.order_approved", "order:4",
        {"state": "submitted"}, {"state": "awaiting_payment"},
    )  # fmt: skip
    await record(
        panel.pool, AT, owner, "broadcast.change", "broadcast:999",
        {"post": {"paid": False, "text": "<b>Old news</b>"}},
        {"post": {"paid": False, "text": "<b>New news</b> today"}},
    )  # fmt: skip
    await record(
        panel.pool, AT, owner, "campaign.changed", "Autumn",
        {"ends_at": None, "goal_joins": 100},
        {"ends_at": "2026-04-01T12:00:00+00:00", "goal_joins": 200},
    )  # fmt: skip
    await record(panel.pool, AT, owner, "broadcast.send", "broadcast:999",
                 {"status": "draft"}, {"status": "scheduled"})  # fmt: skip
    await record(panel.pool, AT, Actor(None, "api:script", None), "api.add_bot", "/api/v1/bots",
                 None, {"route": "/bots", "method": "POST", "status": 201})  # fmt: skip
    async with client(panel.app) as http:
        await sign_in(http, email)
        page = (await http.get("/audit")).text
        rows = page[page.index("<tbody>") :]
        assert "{'" not in rows and "None" not in rows and "=" not in re.sub(r"<[^>]*>", "", rows)
        assert '<a href="/shop/orders/4"><bdi>Order #4</bdi></a>' in rows
        assert "Submitted" in rows and "Awaiting payment" in rows
        assert "New news today" in rows and "<b>" not in rows
        assert "Broadcast #999" in rows  # deleted since: named, not linked
        assert "Sent now" in rows and "Scheduled" not in rows
        assert "Goal:" in rows and "—" in rows  # no end date before
        assert "Through the API: bot added" in rows and "route" not in rows
        user_id = await panel.pool.fetchval("SELECT id FROM users WHERE email = $1", email)
        await set_language(panel.pool, user_id, "fa")
        persian = (await http.get("/audit")).text
        rows = persian[persian.index("<tbody>") :]
        assert "سفارش" in rows and "هدف:" in rows and "Goal" not in rows
        assert "ربات افزوده شد" in rows
