"""Campaigns in the panel over HTTP, and the sponsor's report page, against the simulator.

The crediting itself is tested through the engine in test_campaigns.py; here the figures are
written straight into campaign_members, so each page's numbers are known exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from sponsorbot.features.accounts import workspace
from sponsorbot.features.campaigns.service import Draft
from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in

REPORT = re.compile(r'id="report-link" readonly value="http://panel\.test(/r/[^"]+)"')
PERSIAN_DIGITS = set("۰۱۲۳۴۵۶۷۸۹")


@dataclass
class Setup:
    """Two bots on the simulator, both admins of the sponsor's channel."""

    bots: list[dict[str, Any]]
    channel: dict[str, Any]
    sim: Any


async def two_bots(panel: PanelApp, channel: str = "sponsornews") -> Setup:
    sim: Any = panel.sim
    bots = []
    for name in ("camp_a_bot", "camp_b_bot"):
        bot = await sim.create_bot(name)
        added = await panel.engine.bots.add(bot["token"], "polling")
        bots.append({**bot, "id": added["id"]})
    owner = await sim.create_user("Sponsor")
    made = await sim.create_channel("Sponsor news", username=channel, owner_id=owner["id"])
    for bot in bots:
        await sim.make_admin(made["id"], bot["id"])
    return Setup(bots, made, sim)


def form(setup: Setup, **fields: Any) -> dict[str, Any]:
    """The create form as a browser posts it (fields override)."""
    values: dict[str, Any] = {
        "name": "Winter sponsor",
        "channel": "@" + setup.channel["username"],
        "bot_ids": [str(b["id"]) for b in setup.bots],
        "goal_joins": "10",
        "goal_kind": "joins",
        "ends_at": "",
        "retention_hours": "1",
        "position": "first",
    }
    values.update(fields)
    return values


async def signed_in(panel: PanelApp, http: httpx.AsyncClient, role: str = "owner") -> str:
    await sign_in(http, await add_member(panel.pool, role))
    return await csrf_of(http, "/campaigns")


async def credit(
    pool: asyncpg.Pool, campaign_id: int, bot_id: int, user_id: int, **at: Any
) -> None:
    """One credited join (`joined` ago) through `bot_id`, and a leave (`left` ago) if given."""
    now = datetime.now(UTC)
    leaves = [now - at["left"]] if "left" in at else []
    await pool.execute(
        "INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, leaves)"
        " VALUES ($1, $2, $3, $4, $5::timestamptz[])",
        campaign_id,
        user_id,
        bot_id,
        now - at["joined"],
        leaves,
    )


async def with_figures(panel: PanelApp, setup: Setup, campaign_id: int) -> None:
    """Bot A: 3 joins (one left inside the 1 h window); bot B: 1 join. So 4 joins, 3 kept."""
    a, b = setup.bots[0]["id"], setup.bots[1]["id"]
    hours = timedelta(hours=2)
    await credit(panel.pool, campaign_id, a, 1001, joined=hours)
    await credit(panel.pool, campaign_id, a, 1002, joined=hours)
    await credit(
        panel.pool, campaign_id, a, 1003, joined=hours, left=timedelta(hours=1, minutes=30)
    )
    await credit(panel.pool, campaign_id, b, 1004, joined=hours)


async def kinds(pool: asyncpg.Pool) -> list[str]:
    rows = await pool.fetch("SELECT kind FROM audit_log WHERE kind LIKE 'campaign.%' ORDER BY id")
    return [r["kind"] for r in rows]


async def test_create_list_and_detail_through_the_panel(panel: PanelApp) -> None:
    setup = await two_bots(panel)
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http)
        empty = await http.get("/campaigns")
        assert empty.status_code == 200 and "No campaigns yet" in empty.text
        new = await http.get("/campaigns/new")
        assert all(f'value="{b["id"]}"' in new.text for b in setup.bots)
        made = await http.post("/campaigns", data={"csrf": csrf, **form(setup)})
        assert made.status_code == 303, made.text
        campaign_id = int(made.headers["location"].split("?")[0].rsplit("/", 1)[1])
        assert "Campaign created." in (await http.get(made.headers["location"])).text
        await with_figures(panel, setup, campaign_id)

        listed = await http.get("/campaigns")
        assert "Winter sponsor" in listed.text and "Running" in listed.text
        assert "4 of 10 joins" in listed.text and 'value="40"' in listed.text  # the bar
        row = re.search(r"<tbody>(.*)</tbody>", listed.text, re.DOTALL)
        assert row is not None
        cells = re.findall(r'data-label="(Joins today|Kept|Left)">([^<]*)</td>', row[1])
        # The joins were 2 hours ago: in the first two hours of a (UTC) day they were yesterday.
        now = datetime.now(UTC)
        today = "4" if (now - timedelta(hours=2)).date() == now.date() else "0"
        assert cells == [("Joins today", today), ("Kept", "3"), ("Left", "1")]

        detail = await http.get(f"/campaigns/{campaign_id}")
        assert detail.status_code == 200
        campaign = await panel.services.campaigns.get(campaign_id)
        for link in campaign["links"]:
            assert link["invite_link"] in detail.text
            assert f"@{link['username']}" in detail.text
        assert "<svg" in detail.text and 'class="joins"' in detail.text
        assert 'class="leaves"' in detail.text
        assert REPORT.search(detail.text) is not None
        gate = await http.get(f"/bots/{setup.bots[0]['id']}/channels")
        assert "Campaign slots" in gate.text and "Winter sponsor" in gate.text
        assert campaign["links"][0]["invite_link"] in gate.text
    [created] = await panel.pool.fetch(
        "SELECT target, after FROM audit_log WHERE kind = 'campaign.created'"
    )
    assert created["target"] == "Winter sponsor"
    assert created["after"]["bot_ids"] == [b["id"] for b in setup.bots]


async def test_pause_resume_end_rotate_and_revoke(panel: PanelApp) -> None:
    setup = await two_bots(panel)
    campaigns = panel.services.campaigns
    draft = Draft("Spring sponsor", "@sponsornews", tuple(b["id"] for b in setup.bots))
    campaign = await campaigns.create(draft, "test")
    cid = campaign["id"]
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "editor")
        assert (await http.post(f"/campaigns/{cid}/pause", data={"csrf": csrf})).status_code == 303
        assert (await campaigns.get(cid))["status"] == "paused"
        page = await http.get(f"/campaigns/{cid}")
        assert f'action="/campaigns/{cid}/resume"' in page.text
        assert (await http.post(f"/campaigns/{cid}/resume", data={"csrf": csrf})).status_code == 303
        assert (await campaigns.get(cid))["status"] == "running"

        first = REPORT.search((await http.get(f"/campaigns/{cid}")).text)
        assert first is not None and (await http.get(first[1])).status_code == 200
        await http.post(f"/campaigns/{cid}/report/rotate", data={"csrf": csrf})
        second = REPORT.search((await http.get(f"/campaigns/{cid}")).text)
        assert second is not None and second[1] != first[1]
        assert (await http.get(first[1])).status_code == 404
        assert (await http.get(second[1])).status_code == 200
        await http.post(f"/campaigns/{cid}/report/revoke", data={"csrf": csrf})
        assert (await http.get(second[1])).status_code == 404
        withdrawn = await http.get(f"/campaigns/{cid}")
        assert REPORT.search(withdrawn.text) is None and "Make a new report link" in withdrawn.text

        assert (await http.post(f"/campaigns/{cid}/end", data={"csrf": csrf})).status_code == 303
        ended = await campaigns.get(cid)
        assert ended["status"] == "ended" and all(x["revoked_at"] for x in ended["links"])
        again = await http.post(f"/campaigns/{cid}/pause", data={"csrf": csrf})
        assert again.status_code == 409 and "cannot do that in its current state" in again.text
        gone = await http.post("/campaigns/999999/pause", data={"csrf": csrf})
        assert gone.status_code == 404
        huge = await http.get("/campaigns/" + "9" * 30)
        assert huge.status_code < 500, huge.status_code
        no_csrf = await http.post(f"/campaigns/{cid}/resume")
        assert no_csrf.status_code == 403
    assert await kinds(panel.pool) == [
        "campaign.paused",
        "campaign.resumed",
        "campaign.report_rotated",
        "campaign.report_revoked",
        "campaign.ended",
    ]
    audited = await panel.pool.fetch("SELECT target, before, after FROM audit_log")
    assert all(first[1].rsplit("/", 1)[1] not in str(tuple(r)) for r in audited)


async def test_an_analyst_reads_but_cannot_change(panel: PanelApp) -> None:
    setup = await two_bots(panel)
    draft = Draft("Read only", "@sponsornews", (setup.bots[0]["id"],))
    cid = (await panel.services.campaigns.create(draft, "test"))["id"]
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "analyst")
        listed = await http.get("/campaigns")
        assert "Read only" in listed.text and 'href="/campaigns/new"' not in listed.text
        page = await http.get(f"/campaigns/{cid}")
        assert page.status_code == 200
        assert "/pause" not in page.text and "/report/revoke" not in page.text
        for path in ("pause", "end", "report/rotate", "report/revoke", "edit"):
            answer = await http.post(f"/campaigns/{cid}/{path}", data={"csrf": csrf})
            assert answer.status_code == 403, path
        assert (await http.get("/campaigns/new")).status_code == 403
        made = await http.post("/campaigns", data={"csrf": csrf, **form(setup)})
        assert made.status_code == 403
    assert (await panel.services.campaigns.get(cid))["status"] == "running"
    assert await panel.pool.fetchval("SELECT count(*) FROM campaigns") == 1


async def test_bad_input_shows_the_form_again_with_the_error_beside_the_field(
    panel: PanelApp,
) -> None:
    setup = await two_bots(panel)
    sim = setup.sim
    stranger = await sim.create_bot("not_admin_bot")
    stranger_id = (await panel.engine.bots.add(stranger["token"], "polling"))["id"]
    past = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"name": "  "}, "name", "Give the campaign a name"),
        ({"goal_joins": "lots"}, "goal_joins", "whole number of joins"),
        ({"goal_joins": "0"}, "goal_joins", "whole number of joins"),
        ({"bot_ids": []}, "bots", "Choose at least one bot"),
        ({"ends_at": "next week"}, "ends_at", "like 2026-12-31 18:00"),
        ({"ends_at": past}, "ends_at", "end date in the future"),
        ({"retention_hours": "0"}, "retention_hours", "retention window is 1 to"),
        ({"retention_hours": "-5"}, "retention_hours", "retention window is 1 to"),
        ({"goal_kind": "likes"}, "goal_joins", "whole number of joins"),
        ({"position": "middle"}, "position", "first or last"),
        ({"channel": "not a channel at all"}, "channel", "@name, a t.me link"),
        ({"bot_ids": [str(stranger_id)]}, "channel", "@not_admin_bot is not an administrator"),
        ({"bot_ids": ["999999"]}, "bots", "Choose bots from the list"),
        ({"bot_ids": ["9" * 30]}, "bots", "Choose at least one bot"),
        ({"ends_at": "0001-01-01T00:00"}, "ends_at", "end date in the future"),
        ({"name": "\x00"}, "name", "Give the campaign a name"),
    ]
    async with client(panel.app) as http:
        csrf = await signed_in(panel, http, "editor")
        for fields, field, text in cases:
            values = form(setup, **{"name": "Typed name", **fields})
            answer = await http.post("/campaigns", data={"csrf": csrf, **values})
            assert 400 <= answer.status_code < 500, (fields, answer.status_code)
            assert f'id="e-{field}"' in answer.text, (fields, answer.text[-2000:])
            assert text in answer.text, fields
            if "name" not in fields:
                assert 'value="Typed name"' in answer.text, fields  # what was typed stays
            assert 'value="@sponsornews"' in answer.text or "channel" in fields
        assert await panel.pool.fetchval("SELECT count(*) FROM campaigns") == 0

        made = await http.post("/campaigns", data={"csrf": csrf, **form(setup)})
        cid = int(made.headers["location"].split("?")[0].rsplit("/", 1)[1])
        twice = await http.post("/campaigns", data={"csrf": csrf, **form(setup, name="Again")})
        assert twice.status_code == 409 and "“Winter sponsor” already runs" in twice.text

        edit = await http.get(f"/campaigns/{cid}/edit")
        assert 'value="Winter sponsor"' in edit.text and 'name="channel"' not in edit.text
        bad = await http.post(
            f"/campaigns/{cid}/edit",
            data={"csrf": csrf, **form(setup, name="Renamed", goal_joins="-3")},
        )
        assert bad.status_code == 422 and 'id="e-goal_joins"' in bad.text
        assert 'value="Renamed"' in bad.text
        good = await http.post(
            f"/campaigns/{cid}/edit",
            data={"csrf": csrf, **form(setup, name="Renamed", goal_joins="", position="last")},
        )
        assert good.status_code == 303
    changed = await panel.services.campaigns.get(cid)
    assert (changed["name"], changed["goal_joins"], changed["position"]) == (
        "Renamed",
        None,
        "last",
    )
    [entry] = await panel.pool.fetch(
        "SELECT before, after FROM audit_log WHERE kind = 'campaign.changed'"
    )
    assert entry["before"] == {"name": "Winter sponsor", "goal_joins": 10, "position": "first"}
    assert entry["after"] == {"name": "Renamed", "goal_joins": None, "position": "last"}


async def test_the_report_shows_the_figures_and_nothing_else_of_the_workspace(
    panel: PanelApp,
) -> None:
    setup = await two_bots(panel)
    await workspace.save(panel.pool, "Acme Uploads", "Asia/Tehran", "en")
    campaigns = panel.services.campaigns
    ids = tuple(b["id"] for b in setup.bots)
    campaign = await campaigns.create(
        Draft("Winter sponsor", "@sponsornews", ids, 10, "joins", retention_hours=1), "x"
    )
    await with_figures(panel, setup, campaign["id"])
    other_channel = await setup.sim.create_channel("Rival news", username="rivalnews")
    await setup.sim.make_admin(other_channel["id"], setup.bots[0]["id"])
    await campaigns.create(Draft("Secret rival deal", "@rivalnews", ids[:1]), "x")
    path = f"/r/{campaign['report_token']}"
    async with client(panel.app) as http:
        page = await http.get(path)
        assert page.status_code == 200
        assert page.headers["cache-control"] == "no-store"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert "noindex" in page.headers["x-robots-tag"]
        text = page.text
        assert "Winter sponsor" in text and "Sponsor news" in text
        assert re.search(r'id="joins">4<', text) and re.search(r'id="kept">3<', text)
        assert re.search(r'id="left">1<', text)
        assert "4 of 10 joins" in text and "<svg" in text
        assert "@camp_a_bot" in text and "@camp_b_bot" in text
        for secret in (
            "Secret rival deal",
            "Acme Uploads",
            *(b["token"] for b in setup.bots),
            *(link["invite_link"] for link in campaign["links"]),
            'href="/bots',
            'href="/campaigns',
            "Sign out",
            'name="csrf"',
        ):
            assert secret not in text, secret

        persian = await http.get(path + "?lang=fa")
        assert '<html lang="fa" dir="rtl">' in persian.text and "گزارش حامی" in persian.text
        assert PERSIAN_DIGITS & set(persian.text)
        assert "۱۴۰" in persian.text  # a Jalali year
        browser = await http.get(path, headers={"Accept-Language": "de;q=1, fa-IR;q=0.8, en;q=0.5"})
        assert '<html lang="fa"' in browser.text
        english = await http.get(path, headers={"Accept-Language": "en-US,fa;q=0.5"})
        assert '<html lang="en"' in english.text

        # Signed in or not, the report is the same page: no panel around it.
        await signed_in(panel, http)
        assert 'href="/bots' not in (await http.get(path)).text

        missing = await http.get("/r/not-a-token")
        assert missing.status_code == 404 and "Report not available" in missing.text
        assert missing.headers["referrer-policy"] == "no-referrer"
        assert "Acme Uploads" not in missing.text
        await campaigns.revoke_report(campaign["id"])
        assert (await http.get(path)).status_code == 404
