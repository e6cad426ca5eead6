"""One truth for every figure: the statistics page, its CSVs, the campaign pages, the sponsor's
report and the raw rows agree, for the demo's month of history and for facts written late and
out of order, over ranges that cut across days in a half-hour zone (Asia/Tehran).

The demo's history is made and written by the demo's own code (demo/campaigns.py and
demo/history.py) into a database whose roll-up job had already run, as it has in the demo (the
product starts before the history is written). Then more facts arrive, dated days back and
shuffled. Every figure is compared with counting the raw rows, and with the same figure
wherever else it is shown.
"""

from __future__ import annotations

import csv
import io
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from sponsorbot.demo import campaigns as demo_campaigns
from sponsorbot.demo import history
from sponsorbot.demo import shop as demo_shop
from sponsorbot.demo.setup import OWNER_EMAIL, OWNER_PASSWORD, TIME_ZONE, Content, ProductBot
from sponsorbot.demo.world import PLANS, SPONSORS, SimBot, SimChannel, SimSponsor, World
from sponsorbot.features.stats.hours import Span, day_start, local_day
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.rollup import rewind, roll_up
from tests.integration.demokit import running_demo
from tests.integration.panel_kit import PanelApp, add_member, client, sign_in

BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1, $2, '', 'xxxx', 'polling', $2, '')
"""
CHANNEL = """
INSERT INTO channels (bot_id, chat_id, title, username, chat_type)
VALUES ($1, $2, $3, $4, 'channel')
"""
GATE = """
INSERT INTO gate_channels (bot_id, chat_id, position, request_counts) VALUES ($1, $2, $3, $4)
"""
CONTENT = """
INSERT INTO contents (bot_id, code, kind, items, caption, created_by)
VALUES ($1, $2, $3, $4::jsonb, $5, 'api:test') RETURNING id
"""
CAMPAIGN = """
INSERT INTO campaigns (name, chat_id, chat_title, chat_username, goal_kind, starts_at, retention,
                       position, status, report_token, created_by)
VALUES ($1, $2, $3, $4, $5, $6, make_interval(hours => $7), $8, 'running', $9, 'api:test')
RETURNING id
"""
CAMPAIGN_BOT = "INSERT INTO campaign_bots (campaign_id, bot_id, invite_link) VALUES ($1, $2, $3)"
EVENTS = """
INSERT INTO events (bot_id, at, kind, user_id, content_id, chat_id, data)
SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[],
                     $6::bigint[], $7::jsonb[])
"""
# The raw truth: events of a kind in [start, end), all bots or one.
RAW = """
SELECT kind, count(*) AS n FROM events
WHERE at >= $1 AND at < $2 AND ($3::bigint IS NULL OR bot_id = $3)
GROUP BY kind
"""
RAW_BY_CHAT = """
SELECT bot_id, chat_id, kind, count(*) AS n FROM events
WHERE at >= $1 AND at < $2 AND kind IN ('joined', 'left') GROUP BY 1, 2, 3
"""
# A campaign's first joins through its links per person, counted from the events alone.
FIRST_JOINS = """
SELECT count(DISTINCT e.user_id) FROM events e
JOIN campaign_bots cb ON cb.bot_id = e.bot_id AND cb.invite_link = e.data ->> 'link'
WHERE e.kind = 'joined' AND cb.campaign_id = $1
"""
# Distinct visitors of [start, end): the people of the facts that make someone a visitor.
RAW_VISITORS = """
SELECT count(DISTINCT (bot_id, user_id)) FROM sponsorbot_stat_facts($1, $2, NULL)
WHERE user_id IS NOT NULL AND kind IN
      ('started', 'gate_shown', 'gate_passed', 'content_sent', 'unknown_code', 'visitor_new')
"""
FIGURES = ("started", "joined", "gate_passed", "content_sent", "gate_shown")
BASE_ID = 7_000_000_000


async def _demo(pool: asyncpg.Pool, dsn: str, now: datetime) -> list[int]:
    """The demo's bots, channels, content and campaigns as rows, then its month of history made
    and written by the demo's own code; the campaigns' ids."""
    bots: list[ProductBot] = []
    chat = -1_001_000_000_000
    sim_bots = []
    for n, plan in enumerate(PLANS):
        sim = SimBot(plan, BASE_ID + n, "token")
        await pool.execute(BOT, sim.id, plan.username)
        for place, channel in enumerate(plan.channels):
            chat -= 1
            sim.channels.append(SimChannel(channel, chat))
            await pool.execute(CHANNEL, sim.id, chat, channel.title, channel.username)
            await pool.execute(GATE, sim.id, chat, place, channel.join_request)
        contents = []
        for i, (kind, caption) in enumerate(plan.contents):
            items = f'[{{"kind": "{kind}", "file_id": "f{i}"}}]'
            # Every other item has no caption: the tables must still name it readably.
            text = caption if i % 2 == 0 else None
            code = f"c{n}x{i}"
            made = await pool.fetchval(CONTENT, sim.id, code, kind, items, text)
            contents.append(Content(int(made), code))
        sim_bots.append(sim)
        gate = [(c.chat_id, c.plan.join_request) for c in sim.channels]
        bots.append(ProductBot(sim, contents, gate))
    by_name = {b.plan.username: b.id for b in sim_bots}
    sponsors = []
    for sponsoring in SPONSORS:
        chat -= 1
        admins = tuple(by_name[b] for b in sponsoring.bots)
        sponsors.append(SimSponsor(sponsoring, chat, admins))
    world = World(1, 2, [], sim_bots, sponsors)
    planned = demo_campaigns.planned(world, now)
    ids = []
    for made in planned:
        wanted, window = made.plan, made.window
        sponsor = next(s for s in sponsors if s.chat_id == window.chat_id)
        campaign_id = await pool.fetchval(
            CAMPAIGN,
            wanted.name,
            window.chat_id,
            sponsor.plan.title,
            sponsor.plan.username,
            wanted.goal_kind,
            window.start,
            wanted.retention_hours,
            wanted.position,
            f"report-{wanted.sponsor}",
        )
        for bot_id in sorted(window.bot_ids):
            link = f"https://t.me/+{campaign_id}x{bot_id}"
            await pool.execute(CAMPAIGN_BOT, campaign_id, bot_id, link)
        ids.append(int(campaign_id))
    windows = [m.window for m in planned]
    since = now - timedelta(days=history.DAYS)
    made_history, outcomes = demo_campaigns.make_history(
        bots, since, now, 11, planned, windows, frozenset()
    )
    plain = await asyncpg.connect(dsn)
    try:
        await history.months(plain, since, now)
        async with plain.transaction():
            links = await demo_campaigns.links(plain, windows, ids)
            await history.write(plain, made_history, since, now, links)
            await demo_campaigns.save(plain, outcomes, ids, [])
    finally:
        await plain.close()
    return ids


async def _late(pool: asyncpg.Pool, now: datetime) -> None:
    """Facts that arrive late: dated up to ten days back, in no order, after the roll-up folded
    those days; their writer rewinds the roll-ups first (rollup.rewind)."""
    rng = random.Random(5)
    items: dict[int, list[int]] = {}
    for r in await pool.fetch("SELECT id, bot_id FROM contents ORDER BY id"):
        items.setdefault(int(r["bot_id"]), []).append(int(r["id"]))
    rows: list[tuple[Any, ...]] = []
    for _ in range(600):
        bot = rng.choice(sorted(items))
        at = now - timedelta(minutes=rng.randrange(10, 10 * 24 * 60), seconds=rng.random())
        kind = rng.choice(("started", "gate_passed", "content_sent", "joined", "left"))
        chat = -1_001_000_000_001 if kind in ("joined", "left") else None
        content = rng.choice(items[bot]) if chat is None else None
        rows.append((bot, at, kind, rng.randrange(1, 50), content, chat, None))
    rng.shuffle(rows)
    async with pool.acquire() as conn, conn.transaction():
        await rewind(conn, min(r[1] for r in rows))
        await conn.execute(EVENTS, *(list(col) for col in zip(*rows, strict=True)))


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))


async def _table(
    http: httpx.AsyncClient, table: str, span: Span, **more: str
) -> list[dict[str, str]]:
    query = {"range": "custom", "from": span.first.isoformat(), "to": span.last.isoformat()}
    got = await http.get("/stats.csv", params={**query, "table": table, **more})
    assert got.status_code == 200, got.text
    return _csv(got.text)


async def _check_span(
    panel: PanelApp, http: httpx.AsyncClient, span: Span, ids: list[int], problems: list[str]
) -> None:
    """Every statistics figure of `span` against the raw rows and against each other."""
    pool = panel.pool
    start, end = span.bounds(TIME_ZONE)
    name = f"{span.first}..{span.last}"
    raw = {str(r["kind"]): int(r["n"]) for r in await pool.fetch(RAW, start, end, None)}
    summary = {r["figure"]: int(r["value"]) for r in await _table(http, "summary", span)}
    for figure in FIGURES:
        if summary[figure] != raw.get(figure, 0):
            problems.append(
                f"{name}: statistics say {figure}={summary[figure]}, "
                f"the events hold {raw.get(figure, 0)}"
            )
        series = await _table(http, "series", span, metric=figure)
        total = sum(int(r[figure]) for r in series)
        if total != summary[figure]:
            problems.append(f"{name}: the {figure} chart adds up to {total}, not {summary[figure]}")
    query = {"range": "custom", "from": span.first.isoformat(), "to": span.last.isoformat()}
    _made, token = await panel.services.tokens.create("figures", "analyst")
    bearer = {"Authorization": f"Bearer {token}"}
    api = (await http.get("/api/v1/stats", params=query, headers=bearer)).json()
    if {k: api["figures"][k] for k in summary} != summary:
        problems.append(f"{name}: the owner API's figures differ from the page's")
    visitors = int(await pool.fetchval(RAW_VISITORS, start, end))
    if summary["visitors"] != visitors:
        problems.append(f"{name}: statistics say visitors={summary['visitors']}, not {visitors}")
    heat = sum(int(r["links_opened"]) for r in await _table(http, "heatmap", span))
    if heat != summary["started"]:
        problems.append(f"{name}: the heat map holds {heat} links opened, not {summary['started']}")
    per_bot: dict[str, int] = {}
    for bot in range(len(PLANS)):
        rows = await _table(http, "summary", span, bot=str(BASE_ID + bot))
        for r in rows:
            per_bot[r["figure"]] = per_bot.get(r["figure"], 0) + int(r["value"])
    for figure in FIGURES:
        if per_bot.get(figure, 0) != summary[figure]:
            problems.append(
                f"{name}: {figure} per bot adds up to {per_bot.get(figure, 0)}, "
                f"not {summary[figure]}"
            )
    channels = await _table(http, "channels", span)
    by_chat = {
        (int(r["bot_id"]), int(r["chat_id"]), str(r["kind"])): int(r["n"])
        for r in await pool.fetch(RAW_BY_CHAT, start, end)
    }
    for row in channels:
        for kind in ("joined", "left"):
            want = by_chat.get((int(row["bot_id"]), int(row["chat_id"]), kind), 0)
            if int(row[kind]) != want:
                problems.append(
                    f"{name}: channel {row['title']} shows {kind}={row[kind]}, events hold {want}"
                )
    joined = sum(int(r["joined"]) for r in channels)
    if joined != summary["joined"]:
        problems.append(f"{name}: channel joins add up to {joined}, not {summary['joined']}")
    contents = await _table(http, "content", span)
    opened = sum(int(r["started"]) for r in contents)
    with_item = await pool.fetchval(
        "SELECT count(*) FROM events WHERE kind = 'started' AND content_id IS NOT NULL"
        " AND at >= $1 AND at < $2",
        start,
        end,
    )
    if opened != with_item:
        problems.append(f"{name}: content opens add up to {opened}, events hold {with_item}")
    if any(not r.get("title") for r in contents):
        problems.append(f"{name}: the content CSV has rows without a title")
    service = panel.services.campaigns
    table = {int(r["campaign_id"]): r for r in await _table(http, "campaigns", span)}
    by_api = {c["id"]: (c["campaign_joined"], c["left"]) for c in api["campaigns"]}
    by_csv = {k: (int(r["campaign_joined"]), int(r["left"])) for k, r in table.items()}
    if by_api != by_csv:
        problems.append(f"{name}: campaigns in the owner API {by_api}, in the CSV {by_csv}")
    for campaign_id in ids:
        campaign = await service.get(campaign_id)
        hours = await service.hours(campaign, TIME_ZONE)
        inside = [h for h in hours if start <= h["hour"] < end]
        joins, leaves = sum(h["joins"] for h in inside), sum(h["leaves"] for h in inside)
        row = table.get(campaign_id, {"campaign_joined": "0", "left": "0"})
        if int(row["campaign_joined"]) != joins or int(row["left"]) != leaves:
            problems.append(
                f"{name}: campaign {campaign['name']!r} in statistics joined="
                f"{row['campaign_joined']} left={row['left']}; its own chart over the span"
                f" joined={joins} left={leaves}"
            )


async def _check_campaigns(
    panel: PanelApp, http: httpx.AsyncClient, ids: list[int], problems: list[str]
) -> None:
    """Each campaign over its whole life: its page, its chart, its report, its bots, the
    statistics' campaign table and the raw joins."""
    service = panel.services.campaigns
    today = local_day(datetime.now(UTC), TIME_ZONE)
    whole = Span(today - timedelta(days=history.DAYS + 2), today)
    table = {int(r["campaign_id"]): r for r in await _table(http, "campaigns", whole)}
    for campaign_id in ids:
        page = await service.get(campaign_id)
        name = page["name"]
        hours = await service.hours(page, TIME_ZONE)
        report = await service.report(str(page["report_token"]))
        shown = {
            "page": (page["joins"], page["left"]),
            "report": (report.campaign.joins, report.campaign.left),
            "chart": (sum(h["joins"] for h in hours), sum(h["leaves"] for h in hours)),
            "bots": (
                sum(b["joins"] for b in page["by_bot"]),
                sum(b["left"] for b in page["by_bot"]),
            ),
            "statistics": (
                int(table[campaign_id]["campaign_joined"]),
                int(table[campaign_id]["left"]),
            ),
            "events": (int(await panel.pool.fetchval(FIRST_JOINS, campaign_id)), page["left"]),
        }
        if len(set(shown.values())) != 1:
            problems.append(f"campaign {name!r}: (joins, left) differ: {shown}")
        detail = await http.get(f"/campaigns/{campaign_id}")
        assert detail.status_code == 200
        # The header reads as the start, not the last change of status.
        opening = "Started " if page["status"] == "running" else "since "
        if f'id="since">{opening}' not in detail.text:
            problems.append(f"campaign {name!r}: its header does not begin {opening!r}")


ALL_TIME = """
SELECT content_id, kind, count(*) AS n FROM events
WHERE bot_id = $1 AND content_id IS NOT NULL
  AND kind IN ('started', 'gate_shown', 'gate_passed', 'content_sent')
GROUP BY 1, 2
"""


async def _check_all_time(pool: asyncpg.Pool, problems: list[str]) -> None:
    """The content list's all-time counts (the roll-up's totals) against the raw events."""
    report = Report(pool)
    for n in range(len(PLANS)):
        bot = BASE_ID + n
        raw = {
            (int(r["content_id"]), str(r["kind"])): int(r["n"])
            for r in await pool.fetch(ALL_TIME, bot)
        }
        ids = sorted({c for c, _ in raw})
        shown = await report.content_totals(bot, ids)
        for (content, kind), want in raw.items():
            got = shown.get(content, {}).get(kind, 0)
            if got != want:
                problems.append(f"content {content}: all-time {kind}={got}, events hold {want}")


async def _everything(panel: PanelApp, http: httpx.AsyncClient, ids: list[int]) -> list[str]:
    today = local_day(datetime.now(UTC), TIME_ZONE)
    spans = [
        Span(today - timedelta(days=6), today),
        Span(today - timedelta(days=29), today),
        Span(today - timedelta(days=20), today - timedelta(days=10)),
        Span(today - timedelta(days=3), today - timedelta(days=3)),
        # The day after a campaign ended (demo/campaigns.py: 9 days ago), inside its window.
        Span(today - timedelta(days=8), today - timedelta(days=8)),
    ]
    problems: list[str] = []
    for span in spans:
        await _check_span(panel, http, span, ids, problems)
    await _check_campaigns(panel, http, ids, problems)
    await _check_all_time(panel.pool, problems)
    return problems


async def _running(panel: PanelApp, pool: asyncpg.Pool) -> datetime:
    """The product as it runs before the demo writes its month: the panel's clock at now, the
    zone set, the months' partitions made and the job folded up to now; now."""
    now = datetime.now(UTC).replace(microsecond=0)
    panel.clock.now = now
    await pool.execute("UPDATE workspace SET time_zone = $1 WHERE id = 1", TIME_ZONE)
    for ahead in range(-2, 2):
        await pool.execute("SELECT sponsorbot_events_month($1)", now + timedelta(days=31 * ahead))
    await roll_up(pool, now=now)
    return now


async def test_every_figure_agrees_everywhere_for_the_demo_history_and_late_facts(
    panel: PanelApp, pool: asyncpg.Pool, db_dsn: str
) -> None:
    now = await _running(panel, pool)
    assert await pool.fetchval("SELECT done_until FROM stats_rollup") is not None
    ids = await _demo(pool, db_dsn, now)
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "owner"))

    found = await _everything(panel, http, ids)
    await roll_up(pool, now=now + timedelta(minutes=5))
    found += await _everything(panel, http, ids)
    await _late(pool, now)
    found += await _everything(panel, http, ids)
    # The job folds part of it: the pages read roll-ups and the raw tail at once.
    await roll_up(pool, now=now - timedelta(days=4, hours=5))
    found += await _everything(panel, http, ids)
    await roll_up(pool, now=now + timedelta(minutes=5))
    found += await _everything(panel, http, ids)
    assert not found, "\n".join(dict.fromkeys(found))


async def test_the_demo_month_fills_every_day_of_the_charts_and_the_heat_map(
    panel: PanelApp, pool: asyncpg.Pool, db_dsn: str
) -> None:
    now = await _running(panel, pool)
    await _demo(pool, db_dsn, now)
    await roll_up(pool, now=now + timedelta(minutes=5))
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "owner"))
    today = local_day(now, TIME_ZONE)
    month = Span(today - timedelta(days=28), today - timedelta(days=1))
    for metric in ("started", "joined", "gate_passed"):
        series = await _table(http, "series", month, metric=metric)
        empty = [r["day"] for r in series if int(r[metric]) == 0]
        assert not empty, f"{metric}: no bar on {empty}"
    heat = await _table(http, "heatmap", month)
    assert len([r for r in heat if int(r["links_opened"]) > 0]) >= 160  # of 168 hours a week
    page = await http.get("/stats?range=30d")
    assert "No data in this range" not in page.text


async def test_a_fold_while_a_page_reads_is_seen_wholly_or_not_at_all(
    pool: asyncpg.Pool,
) -> None:
    await pool.execute(BOT, BASE_ID, "fold_bot")
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    await pool.execute("UPDATE workspace SET time_zone = $1 WHERE id = 1", TIME_ZONE)
    await pool.execute("SELECT sponsorbot_events_month($1)", now)
    moments = [now - timedelta(hours=h, minutes=7) for h in range(48)]
    await pool.execute(
        EVENTS,
        [BASE_ID] * len(moments),
        moments,
        ["started"] * len(moments),
        list(range(len(moments))),
        [None] * len(moments),
        [None] * len(moments),
        [None] * len(moments),
    )
    await roll_up(pool, now=now - timedelta(hours=30))
    report = Report(pool)
    today = local_day(now, TIME_ZONE)
    span = Span(today - timedelta(days=2), today)
    scope = await report.scope(None, span)
    # The job folds the rest between the page's first read and its figures.
    await roll_up(pool, now=now + timedelta(minutes=5))
    start, end = span.bounds(TIME_ZONE)
    want = sum(start <= m < end for m in moments)
    assert (await report.totals(scope))["started"] == want
    assert sum((await report.daily(scope, ["started"])).get("started", {}).values()) == want
    assert sum((await report.heat(scope)).values()) == want


@pytest.mark.parametrize("day", [date(2026, 3, 20), date(2026, 9, 22)])
def test_a_tehran_day_starts_at_half_past_the_utc_hour(day: date) -> None:
    assert day_start(day, TIME_ZONE).minute == 30


PRODUCT = """
INSERT INTO shop_products (bot_id, kind, title, price_usdt, joins, days)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, kind, title, price_usdt::text AS price_usdt, joins, days
"""
PAID_VS_PAYMENTS = """
SELECT o.id, o.state, o.paid_usdt, o.created_at,
       (SELECT coalesce(sum(t.credited_usdt), 0) FROM shop_transfers t
        WHERE t.order_id = o.id AND t.state = 'credited') AS transfers,
       (SELECT coalesce(sum(p.credited_usdt), 0) FROM shop_payments p
        WHERE p.order_id = o.id AND p.status = 'credited') AS payments,
       (SELECT min(l.at) FROM shop_order_log l WHERE l.order_id = o.id) AS first_step,
       (SELECT array_agg(l.actor ORDER BY l.id) FROM shop_order_log l
        WHERE l.order_id = o.id) AS actors
FROM shop_orders o ORDER BY o.id
"""


async def test_the_demo_shops_finished_orders_are_paid_by_their_payments(
    panel: PanelApp, pool: asyncpg.Pool
) -> None:
    await pool.execute(BOT, BASE_ID, "shop_bot")
    email = await add_member(pool, "owner")
    owner = await pool.fetchval("SELECT id FROM users WHERE email = $1", email)
    products = [
        dict(
            await pool.fetchrow(
                PRODUCT,
                BASE_ID,
                p["kind"],
                p["title"],
                p["price_usdt"],
                p.get("joins"),
                p.get("days"),
            )
        )
        for p in demo_shop.PRODUCTS
    ]
    now = datetime.now(UTC).replace(microsecond=0)
    address = b"\x41" + bytes(20)
    await demo_shop._history(pool, BASE_ID, products[0], products[2], [11, 12, 13], address, now)
    rows = await pool.fetch(PAID_VS_PAYMENTS)
    assert [r["state"] for r in rows] == ["completed", "expired", "refunded"]
    for r in rows:
        assert r["paid_usdt"] == r["transfers"] == r["payments"] > 0, dict(r)
        assert r["created_at"] <= r["first_step"], dict(r)
        people = [a for a in r["actors"] if a.startswith("panel:")]
        assert people and set(people) == {f"panel:{owner}"}, r["actors"]
    audited = await pool.fetch("SELECT kind, target FROM audit_log ORDER BY id")
    approvals = [a["target"] for a in audited if a["kind"] == "shop.order_approved"]
    assert approvals == [f"order:{r['id']}" for r in rows]
    http = client(panel.app)
    await sign_in(http, email)
    listed = await http.get("/shop/payments")
    assert listed.status_code == 200
    for r in rows:
        page = await http.get(f"/shop/orders/{r['id']}")
        assert "No hash has been sent for this order" not in page.text
        assert "· Gate slot ·" not in page.text and "· Banner ·" not in page.text
    completed = await http.get(f"/shop/orders/{rows[0]['id']}")
    assert 'id="delivered">512 joins<' in completed.text


@pytest.mark.slow
async def test_the_running_demo_shows_its_month_everywhere(tmp_path: Path) -> None:
    """`sponsorbot demo` itself: its product folds while the month is written, and the month
    still shows on every day of the charts and the heat map; its orders are paid by their
    payments."""
    async with (
        running_demo(tmp_path / "demo") as demo,
        httpx.AsyncClient(base_url=demo.panel, timeout=30) as http,
    ):
        signed = await sign_in(http, OWNER_EMAIL, OWNER_PASSWORD)
        assert signed.status_code == 303, signed.text
        today = local_day(datetime.now(UTC), TIME_ZONE)
        month = Span(today - timedelta(days=28), today - timedelta(days=1))
        for metric in ("started", "joined", "gate_passed"):
            series = await _table(http, "series", month, metric=metric)
            empty = [r["day"] for r in series if int(r[metric]) == 0]
            assert not empty, f"{metric}: no bar on {empty}"
        heat = await _table(http, "heatmap", month)
        assert len([r for r in heat if int(r["links_opened"]) > 0]) >= 160
        start, end = month.bounds(TIME_ZONE)
        raw = {str(r["kind"]): int(r["n"]) for r in await demo.pool.fetch(RAW, start, end, None)}
        summary = {r["figure"]: int(r["value"]) for r in await _table(http, "summary", month)}
        assert {k: summary[k] for k in FIGURES} == {k: raw.get(k, 0) for k in FIGURES}
        orders = await demo.pool.fetch(PAID_VS_PAYMENTS)
        assert orders
        for r in orders:
            assert r["paid_usdt"] == r["transfers"] == r["payments"], dict(r)
            assert r["created_at"] <= r["first_step"], dict(r)
