"""The visitors page and its owner API on a real database: search by id, username and name (a
name's % and _ taken literally), a visitor's profile with gate state, campaigns and content
received, the timeline a page at a time, the empty states, Persian, and that any member reads
it while nothing can change it.

The rows are written straight into the tables, in the shapes the features write them, so every
figure on the pages is known exactly.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from sponsorbot.features.errors import NotFound
from sponsorbot.features.stats import visitors
from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in
from tests.integration.test_panel_roles import api_routes

NOW = datetime.now(UTC).replace(microsecond=0)
SPONSOR_LINK = "https://t.me/+sponsorLink"
BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1, $2, '', 'xxxx', 'polling', $2, '')
"""
PERSON = """
INSERT INTO people (bot_id, user_id, username, first_name, last_name, language, first_seen,
                    last_seen, blocked_at, gate_content_id, gate_checks)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
"""
EVENT = """
INSERT INTO events (bot_id, at, kind, user_id, content_id, chat_id, data)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
"""


async def person(
    pool: asyncpg.Pool,
    bot_id: int,
    user_id: int,
    username: str | None = None,
    first: str | None = None,
    last: str | None = None,
    *,
    seen_ago: timedelta = timedelta(hours=1),
    language: str | None = "en",
    blocked: bool = False,
    gate: int | None = None,
    checks: int = 0,
) -> None:
    """A person as `people.seen` and the gate leave them."""
    await pool.execute(
        PERSON,
        bot_id,
        user_id,
        username,
        first,
        last,
        language,
        NOW - timedelta(days=30) - seen_ago,  # the newest come first in an empty search
        NOW - seen_ago,
        NOW - timedelta(minutes=5) if blocked else None,
        gate,
        checks,
    )


async def event(
    pool: asyncpg.Pool,
    user_id: int,
    kind: str,
    ago: timedelta,
    *,
    bot_id: int = 1,
    content: int | None = None,
    chat: int | None = None,
    data: Any = None,
) -> int:
    """An event as the gate records it; its id."""
    found: int = await pool.fetchval(EVENT, bot_id, NOW - ago, kind, user_id, content, chat, data)
    return found


async def content(pool: asyncpg.Pool, code: str, caption: str | None, items: list[Any]) -> int:
    found: int = await pool.fetchval(
        "INSERT INTO contents (bot_id, code, kind, items, caption, created_by)"
        " VALUES (1, $1, $2, $3, $4, 'test') RETURNING id",
        code,
        items[0]["kind"],
        items,
        caption,
    )
    return found


async def campaign(
    pool: asyncpg.Pool, name: str, chat_id: int, link: str, member: dict[str, Any]
) -> int:
    """A campaign of bot 1 on `chat_id` whose link is `link`, and one member row."""
    campaign_id: int = await pool.fetchval(
        "INSERT INTO campaigns (name, chat_id, chat_title, created_by)"
        " VALUES ($1, $2, 'Sponsor channel', 'test') RETURNING id",
        name,
        chat_id,
    )
    await pool.execute(
        "INSERT INTO campaign_bots (campaign_id, bot_id, invite_link) VALUES ($1, 1, $2)",
        campaign_id,
        link,
    )
    await pool.execute(
        "INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, outside_at,"
        " leaves) VALUES ($1, $2, $3, $4, $5, $6::timestamptz[])",
        campaign_id,
        member["user_id"],
        member.get("bot_id"),
        member.get("gate_joined_at"),
        member.get("outside_at"),
        member.get("leaves", []),
    )
    return campaign_id


async def people(pool: asyncpg.Pool) -> None:
    """Two bots; Sara on both, Sam, and two people whose names hold % and _."""
    await pool.execute(BOT, 1, "alpha_bot")
    await pool.execute(BOT, 2, "beta_bot")
    await person(pool, 1, 111, "SaraK", "Sara", "Karimi", seen_ago=timedelta(minutes=10))
    await person(pool, 2, 111, "SaraK", "Sara", "Karimi", seen_ago=timedelta(minutes=20))
    await person(pool, 1, 222, "sam_99", "Sam", None, seen_ago=timedelta(minutes=30))
    await person(pool, 1, 333, None, "100% real", "under_score", seen_ago=timedelta(minutes=40))
    await person(pool, 1, 444, None, "100x real", "underXscore", seen_ago=timedelta(minutes=50))


def keys(rows: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(r["bot_id"], r["user_id"]) for r in rows]


async def test_search_by_id_username_and_name(pool: asyncpg.Pool) -> None:
    await people(pool)

    async def find(query: str, bots: list[int] | None = None) -> list[tuple[int, int]]:
        rows, more = await visitors.search(pool, query, bots, 1, 50)
        assert not more
        return keys(rows)

    # An id: the person on every bot that knows them, most recently seen first.
    assert await find("111") == [(1, 111), (2, 111)]
    assert await find(" 111 ", [2]) == [(2, 111)]
    assert await find("۱۱۱") == [(1, 111), (2, 111)]  # typed with Persian digits
    assert await find("11") == []  # an id is exact
    for nobody in ("0", "9223372036854775808", "99999999999999999999999999"):
        assert await find(nobody) == []  # past a bigint: no match, no error
    # "@": a username prefix, in any case, and nothing else.
    assert await find("@sar") == [(1, 111), (2, 111)]
    assert await find("@SARA") == [(1, 111), (2, 111)]
    assert await find("@ara") == []  # a prefix, not anywhere in the name
    assert await find("@sa", [1]) == [(1, 111), (1, 222)]
    assert await find("@Sam ") == [(1, 222)]
    assert await find("@no such") == []
    # Other text: a username prefix or part of the first and last names.
    assert await find("sam_") == [(1, 222)]
    assert await find("karimi") == [(1, 111), (2, 111)]
    assert await find("ra kar") == [(1, 111), (2, 111)]  # across first and last name
    assert await find("%") == [(1, 333)]  # literally, not "anything"
    assert await find("0% r") == [(1, 333)]
    assert await find("r_s") == [(1, 333)]  # _ is not "any character"
    assert await find("\\") == []
    assert await find("kar\x00imi") == [(1, 111), (2, 111)]
    assert await find("@") == keys((await visitors.search(pool, "", None, 1, 50))[0])


async def test_an_empty_query_pages_through_the_newest_visitors(pool: asyncpg.Pool) -> None:
    assert await visitors.search(pool, "", None, 1, 50) == ([], False)
    await people(pool)
    first, more = await visitors.search(pool, "", None, 1, 2)
    assert keys(first) == [(1, 111), (2, 111)] and more
    second, more = await visitors.search(pool, "", None, 2, 2)
    assert keys(second) == [(1, 222), (1, 333)] and more
    third, more = await visitors.search(pool, "", None, 3, 2)
    assert keys(third) == [(1, 444)] and not more
    only_b, _more = await visitors.search(pool, "", [2], 1, 50)
    assert keys(only_b) == [(2, 111)]
    assert await visitors.search(pool, "", [], 1, 50) == ([], False)


async def story(pool: asyncpg.Pool) -> dict[str, Any]:
    """Sara's month on bot 1: a gate with two channels, one a campaign's, passed after a second
    check; two items received; she left the channel; the odd event of every other kind."""
    await people(pool)
    catalogue = await content(
        pool, "WinterCat01", "Winter catalogue", [{"kind": "document", "file_id": "f1"}]
    )
    secret = await content(pool, "Pass0002", None, [{"kind": "text", "text": "Password: 1234"}])
    news, sponsor = -1001000000001, -1001000000002
    await pool.execute(
        "INSERT INTO channels (bot_id, chat_id, title, chat_type) VALUES (1, $1, $2, 'channel')",
        news,
        "Ada's <news>",
    )
    spring = await campaign(
        pool,
        "Spring sponsor",
        sponsor,
        SPONSOR_LINK,
        {
            "user_id": 111,
            "bot_id": 1,
            "gate_joined_at": NOW - timedelta(days=9),
            "leaves": [NOW - timedelta(days=2)],
        },
    )
    elsewhere = await campaign(
        pool,
        "Autumn sponsor",
        -1001000000003,
        "https://t.me/+autumn",
        {"user_id": 111, "outside_at": NOW - timedelta(days=20)},
    )
    await campaign(  # a member row with a leave only: not a campaign she joined
        pool, "Old sponsor", -1001000000004, "https://t.me/+old", {"user_id": 111, "leaves": [NOW]}
    )
    day = timedelta(days=1)
    ids = [
        await event(pool, 111, "started", 10 * day, content=catalogue),
        await event(pool, 111, "gate_shown", 10 * day, content=catalogue,
                    data={"missing": [news, sponsor]}),
        await event(pool, 111, "joined", 9 * day, content=catalogue, chat=news),
        await event(pool, 111, "joined", 9 * day, content=catalogue, chat=sponsor,
                    data={"link": SPONSOR_LINK}),
        await event(pool, 111, "gate_passed", 9 * day, content=catalogue, data={"checks": 2}),
        await event(pool, 111, "content_sent", 9 * day, content=catalogue),
        await event(pool, 111, "started", 5 * day, content=secret),
        await event(pool, 111, "content_sent", 5 * day, content=secret),
        await event(pool, 111, "content_sent", 4 * day, content=catalogue),
        await event(pool, 111, "left", 3 * day, chat=news, data={"status": "left"}),
        await event(pool, 111, "gate_shown", 2 * day, content=secret, data=3),  # an old row
        await event(pool, 111, "started", day),
        await event(pool, 111, "unknown_code", day, data={"code": "<b>zzz</b>"}),
        await event(pool, 111, "join_request", day / 2, chat=-1009),
        await event(pool, 111, "channel_unknown", day / 4, chat=news,
                    data={"reason": "Bad Request: member list is inaccessible"}),
    ]  # fmt: skip
    await event(pool, 111, "content_sent", day, bot_id=2, content=None)  # Sara on the other bot
    return {
        "ids": ids,
        "catalogue": catalogue,
        "secret": secret,
        "news": news,
        "spring": spring,
        "elsewhere": elsewhere,
    }


async def test_a_visitor_with_gate_campaigns_content_and_timeline(pool: asyncpg.Pool) -> None:
    made = await story(pool)
    sara = await visitors.visitor(pool, 1, 111, 5)
    assert sara["bot_username"] == "alpha_bot" and sara["username"] == "SaraK"
    assert sara["first_name"] == "Sara" and sara["language"] == "en"
    gate = sara["gate"]
    assert gate["state"] == "passed" and gate["passes"] == 1
    assert gate["last_passed_at"] == NOW - timedelta(days=9) and gate["content_id"] is None

    joined = {c["name"]: c for c in sara["campaigns"]}
    assert list(joined) == ["Spring sponsor", "Autumn sponsor"]  # the latest join first
    spring, autumn = joined["Spring sponsor"], joined["Autumn sponsor"]
    assert spring["via"] == "gate" and spring["joined_at"] == NOW - timedelta(days=9)
    assert spring["left_at"] == NOW - timedelta(days=2)
    assert autumn["via"] == "outside" and autumn["left_at"] is None

    received = sara["received"]
    assert received["total"] == 3 and received["distinct_items"] == 2
    items = [(i["content_id"], i["title"], i["code"], i["times"]) for i in received["items"]]
    assert items == [
        (made["catalogue"], "Winter catalogue", "WinterCat01", 2),
        (made["secret"], "Password: 1234", "Pass0002", 1),
    ]

    # The timeline, newest first, five at a time, each event once (some share a moment).
    seen: list[int] = []
    page, before = sara["timeline"]["items"], sara["timeline"]["next_before"]
    while True:
        seen += [e["id"] for e in page]
        if before is None:
            break
        page, before = await visitors.timeline(pool, 1, 111, before, 5)
    assert len(seen) == len(made["ids"]) and set(seen) == set(made["ids"])
    assert seen[0] == made["ids"][-1] and seen[-1] == made["ids"][0]
    every = {e["id"]: e for e in (await visitors.timeline(pool, 1, 111, None, 100))[0]}
    shown, old_shown = every[made["ids"][1]], every[made["ids"][10]]
    assert shown["missing"] == 2 and old_shown["missing"] == 3
    assert shown["content_title"] == "Winter catalogue"
    via_link = every[made["ids"][3]]
    assert (
        via_link["campaign_name"] == "Spring sponsor" and via_link["campaign_id"] == made["spring"]
    )
    assert via_link["chat_title"] == "Sponsor channel"  # not a channel of the bot: the campaign's
    assert every[made["ids"][2]]["chat_title"] == "Ada's <news>"
    assert every[made["ids"][2]]["campaign_id"] is None
    assert every[made["ids"][4]]["checks"] == 2
    assert every[made["ids"][12]]["code"] == "<b>zzz</b>"
    assert every[made["ids"][14]]["reason"].startswith("Bad Request")
    assert await visitors.timeline(pool, 1, 111, 10**15, 5) == ([], None)  # not an event of hers
    other_bots = await visitors.timeline(pool, 2, 111, None, 5)
    assert [e["kind"] for e in other_bots[0]] == ["content_sent"]

    # At a gate now: that is the state, whatever she passed before.
    await pool.execute(
        "UPDATE people SET gate_content_id = $1, gate_checks = 3"
        " WHERE bot_id = 1 AND user_id = 111",
        made["secret"],
    )
    gate = (await visitors.visitor(pool, 1, 111, 5))["gate"]
    assert gate["state"] == "at_gate" and gate["checks"] == 3 and gate["passes"] == 1
    assert gate["content_title"] == "Password: 1234"
    rows, _more = await visitors.search(pool, "111", None, 1, 50)
    assert [(r["gate"], r["received"], r["campaigns"]) for r in rows] == [
        ("at_gate", 3, 2),
        ("never", 1, 0),
    ]
    sam = await visitors.visitor(pool, 1, 222, 5)
    assert sam["gate"]["state"] == "never" and sam["campaigns"] == []
    assert sam["received"] == {"total": 0, "distinct_items": 0, "items": []}
    assert sam["timeline"] == {"items": [], "next_before": None}

    with pytest.raises(NotFound) as unknown_person:
        await visitors.visitor(pool, 2, 222, 5)
    assert unknown_person.value.code == "visitor_missing"
    with pytest.raises(NotFound) as unknown_bot:
        await visitors.timeline(pool, 9, 111, None, 5)
    assert unknown_bot.value.code == "bot_missing"


async def test_the_panel_pages_for_an_analyst(panel: PanelApp) -> None:
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "analyst"))
        empty = await http.get("/visitors")
        assert empty.status_code == 200 and "No visitors yet" in empty.text
        assert 'href="/visitors" aria-current="page"' in empty.text

        made = await story(panel.pool)
        for n in range(60):  # enough events for an "older" page of the timeline
            await event(panel.pool, 111, "started", timedelta(days=20, minutes=n))
        listed = await http.get("/visitors")
        assert listed.status_code == 200
        text = listed.text
        for name in ("Sara Karimi", "@SaraK", "Sam", "100% real under_score", "@alpha_bot"):
            assert name in text, name
        assert 'href="/visitors/1/111"' in text and 'href="/visitors/2/111"' in text
        assert 'id="f-bot"' in text  # two bots: the filter is offered

        only_b = await http.get("/visitors", params={"bot": "2"})
        assert 'href="/visitors/2/111"' in only_b.text and "/visitors/1/111" not in only_b.text
        nobody = await http.get("/visitors", params={"q": "<i>ghost</i>"})
        assert "No one matches “&lt;i&gt;ghost&lt;/i&gt;”" in nobody.text
        assert "<i>ghost" not in nobody.text
        found = await http.get("/visitors", params={"q": "@sam"})
        assert "/visitors/1/222" in found.text and "/visitors/1/111" not in found.text
        for odd in ("junk", "²", "9" * 5000, "0"):
            quiet = await http.get("/visitors", params={"bot": "2", "q": "", "page": odd})
            assert quiet.status_code == 200 and 'href="/visitors/2/111"' in quiet.text

        page = await http.get("/visitors/1/111")
        assert page.status_code == 200
        text = page.text
        for words in (
            "Passed the gate",  # the state's badge
            "Spring sponsor",
            "Through this bot",
            "Outside the gate",
            "“<bdi>Winter catalogue</bdi>”",
            "“<bdi>Password: 1234</bdi>”",
            "Joined “<bdi>Ada&#39;s &lt;news&gt;</bdi>”",
            "through the campaign “Spring sponsor”",
            "2 channels to join",
            "3 channels to join",
            "after 2 checks",
            "code is unknown: &lt;b&gt;zzz&lt;/b&gt;",
            "member list is inaccessible",
            f'href="/campaigns/{made["spring"]}"',
            'href="/bots/1/content?q=WinterCat01"',
        ):
            assert words in text, words
        assert "Old sponsor" not in text  # a leave without a join is no campaign joined
        older = re.search(r'href="(/visitors/1/111\?before=\d+)#timeline"', text)
        assert older, "an older page of the timeline"
        second = await http.get(older[1])
        assert second.status_code == 200 and "Newest" in second.text
        assert "Sara" in second.text and "Opened a link" in second.text

        assert (await http.get("/visitors/1/999")).status_code == 404
        assert (await http.get("/visitors/7/111")).status_code == 404
        # An id no bigint holds is no visitor: the not-found page, not a validation error.
        huge = await http.get("/visitors/1/99999999999999999999")
        assert huge.status_code == 404 and "Not found" in huge.text

        csrf = await csrf_of(http, "/visitors")
        await http.post("/language", data={"csrf": csrf, "language": "fa", "next": "/visitors"})
        persian = await http.get("/visitors/1/111")
        assert '<html lang="fa" dir="rtl">' in persian.text
        assert re.search(r"[۰-۹]{4}/[۰-۹]{2}/[۰-۹]{2} [۰-۹]{2}:[۰-۹]{2}", persian.text)  # Jalali
        assert ">۲<" in persian.text  # the times an item was received
        assert "@SaraK" in persian.text and ">111<" in persian.text  # ids keep their digits


async def test_the_owner_api_pages_and_refuses_bad_input(panel: PanelApp) -> None:
    await story(panel.pool)
    _row, token = await panel.services.tokens.create("reader", "analyst")
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=panel.app), base_url="http://api.test", headers=headers
    ) as api:
        first = await api.get("/api/v1/visitors", params={"per_page": 2})
        assert first.status_code == 200, first.text
        body = first.json()
        assert [(v["bot_id"], v["user_id"]) for v in body["items"]] == [(1, 111), (2, 111)]
        assert body["has_more"] and body["page"] == 1 and body["per_page"] == 2
        assert body["items"][0]["gate"] == "passed" and body["items"][0]["received"] == 3
        last = (await api.get("/api/v1/visitors", params={"per_page": 2, "page": 3})).json()
        assert [v["user_id"] for v in last["items"]] == [444] and not last["has_more"]
        found = await api.get("/api/v1/visitors", params={"q": "@sar", "bot_id": 2})
        assert [(v["bot_id"], v["user_id"]) for v in found.json()["items"]] == [(2, 111)]
        for params in (
            {"per_page": 101},
            {"page": 0},
            {"page": visitors.MAX_PAGE + 1},
            {"bot_id": 2**63},
            {"q": "x" * 101},
        ):
            refused = await api.get("/api/v1/visitors", params=params)
            assert refused.status_code == 422 and refused.json()["error"], params

        one = await api.get("/api/v1/bots/1/visitors/111")
        assert one.status_code == 200, one.text
        sara = one.json()
        assert sara["gate"]["state"] == "passed" and sara["received"]["total"] == 3
        assert [c["via"] for c in sara["campaigns"]] == ["gate", "outside"]
        assert len(sara["timeline"]["items"]) == 15 and sara["timeline"]["next_before"] is None

        pages: list[int] = []
        paging: dict[str, Any] = {"limit": 4}
        while True:
            got = (await api.get("/api/v1/bots/1/visitors/111/timeline", params=paging)).json()
            pages.append(len(got["items"]))
            if got["next_before"] is None:
                break
            paging["before"] = got["next_before"]
        assert pages == [4, 4, 4, 3]

        for path in ("/api/v1/bots/1/visitors/999", "/api/v1/bots/7/visitors/111/timeline"):
            missing = await api.get(path)
            assert missing.status_code == 404 and missing.json()["error"], path
        for path, params in (
            ("/api/v1/bots/1/visitors/99999999999999999999", {}),
            ("/api/v1/bots/0/visitors/111", {}),
            ("/api/v1/bots/1/visitors/111/timeline", {"limit": 101}),
            ("/api/v1/bots/1/visitors/111/timeline", {"before": 2**63}),
        ):
            refused = await api.get(path, params=params)
            assert refused.status_code == 422 and refused.json()["error"], path
        assert (await api.post("/api/v1/visitors")).status_code == 405
        assert (await api.delete("/api/v1/bots/1/visitors/111")).status_code == 405
        anonymous = await api.get("/api/v1/visitors", headers={"Authorization": ""})
        assert anonymous.status_code == 401


async def test_nothing_changes_a_visitor(panel: PanelApp) -> None:
    pages = [r for r in api_routes(panel.app.routes) if "panel" in r.tags and "visitors" in r.path]
    assert {r.path for r in pages} >= {"/visitors", "/visitors/{bot_id}/{user_id}"}
    assert all(r.methods == {"GET"} for r in pages), [(r.path, r.methods) for r in pages]
    api = {p: set(ops) for p, ops in panel.app.openapi()["paths"].items() if "visitors" in p}
    assert set(api) >= {
        "/api/v1/visitors",
        "/api/v1/bots/{bot_id}/visitors/{user_id}",
        "/api/v1/bots/{bot_id}/visitors/{user_id}/timeline",
    }
    assert all(ops == {"get"} for ops in api.values()), api
