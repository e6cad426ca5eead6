"""The statistics page, its CSV export, the owner API's statistics and the dashboard's hourly
bars, over a real database, in a half-hour zone."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, timedelta

import asyncpg

from sponsorbot.features.stats.hours import hour_start, last_hours
from sponsorbot.features.stats.rollup import roll_up
from tests.integration.panel_kit import PanelApp, add_member, client, sign_in

BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1, $2, '', 'xxxx', 'polling', $2, '')
"""
SENDS = """
INSERT INTO send_stats (bot_id, minute, sent, throttled)
SELECT 7, m, (extract(minute FROM m)::int % 5) + 1, 0
FROM generate_series($1::timestamptz, $2::timestamptz, interval '7 minutes') AS m
"""
EVENTS = """
INSERT INTO events (bot_id, at, kind, user_id, content_id)
SELECT 7, $1::timestamptz + make_interval(mins => i * 13), k, 100 + i % 9, 1
FROM generate_series(0, 200) AS i, unnest(ARRAY['started', 'gate_passed', 'content_sent']) AS k
"""
BAR = re.compile(r'data-hour="([^"]+)" data-value="(\d+)"')


async def _tehran(panel: PanelApp) -> None:
    await panel.pool.execute("UPDATE workspace SET time_zone = 'Asia/Tehran' WHERE id = 1")
    await panel.pool.execute(BOT, 7, "tehran_bot")
    now = panel.clock()
    for month in (now - timedelta(days=40), now, now + timedelta(days=31)):
        await panel.pool.execute("SELECT sponsorbot_events_month($1)", month)
    await panel.pool.execute(SENDS, now - timedelta(hours=30), now)
    await panel.pool.execute(EVENTS, now - timedelta(days=20))


async def test_the_dashboards_bars_match_the_raw_sends_hour_by_hour_in_tehran(
    panel: PanelApp, pool: asyncpg.Pool
) -> None:
    await _tehran(panel)
    now = panel.clock()
    # Fold part of the day, so the bars read roll-ups and the live tail both.
    await roll_up(pool, now=now - timedelta(hours=9, minutes=10))
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "analyst"))
    page = await http.get("/")
    assert page.status_code == 200
    bars = BAR.findall(page.text)
    hours = last_hours(now, "Asia/Tehran", 24)
    assert [datetime.fromisoformat(h) for h, _ in bars] == hours
    assert all(h.minute == 30 for h in hours)  # Tehran's hours start at :30 UTC
    raw = {
        r["hour"]: int(r["n"])
        for r in await pool.fetch(
            "SELECT date_trunc('hour', minute, 'Asia/Tehran') AS hour, sum(sent) AS n"
            " FROM send_stats GROUP BY 1"
        )
    }
    assert [int(v) for _, v in bars] == [raw.get(h, 0) for h in hours]
    assert sum(int(v) for _, v in bars) > 0


async def test_the_statistics_page_in_both_languages_with_every_range(
    panel: PanelApp, pool: asyncpg.Pool
) -> None:
    await _tehran(panel)
    await roll_up(pool, now=panel.clock())
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "analyst"))
    for query in ("", "?range=today", "?range=30d&metric=content_sent", "?range=7d&bot=7"):
        page = await http.get("/stats" + query)
        assert page.status_code == 200, query
        assert "<svg" in page.text
    month = await http.get("/stats?range=30d")
    opened = re.search(r'data-figure="started">\s*<dt>[^<]*</dt>\s*<dd>([\d,]+)</dd>', month.text)
    assert opened is not None
    raw = await pool.fetchval(
        "SELECT count(*) FROM events WHERE kind = 'started' AND at >= $1",
        hour_start(panel.clock(), "Asia/Tehran").replace(hour=20, minute=30) - timedelta(days=30),
    )
    assert int(opened.group(1).replace(",", "")) == raw
    await pool.execute("UPDATE users SET language = 'fa'")
    persian = await http.get("/stats?range=30d")
    assert persian.status_code == 200
    assert '<html lang="fa" dir="rtl">' in persian.text and "آمار" in persian.text
    assert "۱۴۰۴/" in persian.text  # Jalali dates: 2026-02 is 1404 in the Persian calendar


async def test_a_custom_range_says_what_is_wrong_and_shows_a_week(
    panel: PanelApp, pool: asyncpg.Pool
) -> None:
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "analyst"))
    page = await http.get("/stats?range=custom&from=2026-01-01&to=nonsense")
    assert page.status_code == 200
    assert "Choose both dates" in page.text
    long = await http.get("/stats?range=custom&from=2020-01-01&to=2026-01-01")
    assert "Choose both dates" in long.text
    wrong_bot = await http.get("/stats?bot=99999999999999999999999")
    assert wrong_bot.status_code == 200


async def test_every_table_exports_as_csv(panel: PanelApp, pool: asyncpg.Pool) -> None:
    await _tehran(panel)
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "analyst"))
    for table in ("summary", "series", "heatmap", "content", "channels", "campaigns"):
        got = await http.get(f"/stats.csv?range=30d&table={table}")
        assert got.status_code == 200
        assert got.headers["content-type"].startswith("text/csv")
        assert got.text.startswith("\ufeff")
        assert f"stats-{table}-" in got.headers["content-disposition"]
    summary = (await http.get("/stats.csv?range=30d&table=summary")).text
    assert "\nstarted," in summary.replace("\r\n", "\n")


async def test_a_channel_title_that_reads_as_a_formula_is_exported_as_text(
    panel: PanelApp, pool: asyncpg.Pool
) -> None:
    await _tehran(panel)
    title = '=HYPERLINK("https://evil.example","Open")'
    await pool.execute(
        "INSERT INTO channels (bot_id, chat_id, title, chat_type) VALUES (7, -1001, $1, 'channel')",
        title,
    )
    await pool.execute(
        "INSERT INTO events (bot_id, at, kind, user_id, chat_id)"
        " VALUES (7, $1, 'joined', 100, -1001)",
        panel.clock() - timedelta(days=2),
    )
    http = client(panel.app)
    await sign_in(http, await add_member(pool, "analyst"))
    got = await http.get("/stats.csv?range=30d&table=channels")
    rows = list(csv.reader(io.StringIO(got.text.removeprefix("\ufeff"))))
    assert rows[0][:3] == ["bot_id", "chat_id", "title"]
    assert [r[:4] for r in rows[1:]] == [["7", "-1001", "'" + title, "0"]]


async def test_the_owner_api_gives_the_same_figures(panel: PanelApp, pool: asyncpg.Pool) -> None:
    await _tehran(panel)
    await roll_up(pool, now=datetime.now(UTC))
    token = await _reader_token(panel)
    http = client(panel.app)
    headers = {"Authorization": f"Bearer {token}"}
    got = await http.get("/api/v1/stats?range=30d&bot_id=7", headers=headers)
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["zone"] == "Asia/Tehran"
    assert body["bots"] == [7]
    assert len(body["series"]) == 30
    assert set(body["figures"]) >= {"visitors", "started", "gate_passed", "sent", "throttled"}
    assert (await http.get("/api/v1/stats?bot_id=424242", headers=headers)).status_code == 404
    assert (await http.get("/api/v1/stats?range=custom", headers=headers)).status_code == 422
    assert (await http.get("/api/v1/stats?bot_id=-1", headers=headers)).status_code == 422
    assert (await http.get("/api/v1/stats?range=week", headers=headers)).status_code == 422
    assert (await http.get("/api/v1/stats")).status_code == 401


async def _reader_token(panel: PanelApp) -> str:
    _, token = await panel.services.tokens.create("stats reader", "analyst")
    return token
