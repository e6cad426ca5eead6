"""Persian pages take dates in the Jalali calendar and numbers in Persian digits, without any
script: a broadcast scheduled on a Persian page goes out at the instant meant in the workspace's
zone (Asia/Tehran, UTC+03:30), the statistics and audit filters read Jalali days, number fields
show and take Persian digits, file inputs speak the page's language."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import asyncpg

from sponsorbot.features.calendar import from_jalali
from tests.integration.panel_kit import client
from tests.integration.test_panel_broadcasts import form, location_id, panel_env, signed_in

TEHRAN = ZoneInfo("Asia/Tehran")


def input_tag(html: str, name: str) -> str:
    found = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert found, f"no input named {name}"
    return found.group(0)


async def test_a_broadcast_scheduled_on_a_persian_page_goes_at_the_tehran_instant(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path, people=3) as env, client(env.app) as http:
        await pool.execute("UPDATE workspace SET time_zone = 'Asia/Tehran' WHERE id = 1")
        csrf = await signed_in(env, http)
        await http.post("/language", data={"csrf": csrf, "language": "fa"})

        compose = await http.get("/broadcasts/new")
        field = input_tag(compose.text, "scheduled_at")
        assert 'type="text"' in field and "۱۴۰۵/۰۹/۱۴ ۱۸:۳۰" in field  # a Jalali example
        assert 'type="datetime-local"' not in compose.text
        assert "انتخاب فایل" in compose.text and "فایلی انتخاب نشده است" in compose.text
        days = input_tag(compose.text, "active_days")
        assert 'type="text"' in days and 'inputmode="numeric"' in days

        # 1 Farvardin 1406, 09:30 in Tehran, typed with Persian digits, and a number likewise.
        typed = "۱۴۰۶/۰۱/۰۱ ۰۹:۳۰"
        answer = await http.post(
            "/broadcasts",
            data={
                "csrf": csrf,
                **form(env, action="schedule", scheduled_at=typed, active_days="۳۰"),
            },
        )
        broadcast_id = location_id(answer)
        row = await pool.fetchrow(
            "SELECT scheduled_at, audience FROM broadcasts WHERE id = $1", broadcast_id
        )
        meant = datetime(2027, 3, 21, 9, 30, tzinfo=TEHRAN)
        assert from_jalali(1406, 1, 1) == meant.date()
        assert row["scheduled_at"] == meant
        assert row["scheduled_at"].astimezone(UTC) == datetime(2027, 3, 21, 6, 0, tzinfo=UTC)

        edit = await http.get(f"/broadcasts/{env.bot['id']}/{broadcast_id}/edit")
        assert 'value="۱۴۰۶/۰۱/۰۱ ۰۹:۳۰"' in input_tag(edit.text, "scheduled_at")
        assert 'value="۳۰"' in input_tag(edit.text, "active_days")

        # Latin digits, without leading zeros, read the same.
        again = await http.post(
            f"/broadcasts/{env.bot['id']}/{broadcast_id}/edit",
            data={"csrf": csrf, **form(env, action="schedule", scheduled_at="1406/1/1 10:00")},
        )
        assert again.status_code == 303, again.text[-1500:]
        later = await pool.fetchval(
            "SELECT scheduled_at FROM broadcasts WHERE id = $1", broadcast_id
        )
        assert later == datetime(2027, 3, 21, 10, 0, tzinfo=TEHRAN)

        wrong = await http.post(
            "/broadcasts",
            data={"csrf": csrf, **form(env, action="schedule", scheduled_at="۱۴۰۶/۱۳/۰۱ ۰۹:۳۰")},
        )
        assert wrong.status_code == 422 and "۱۴۰۵/۱۰/۱۰ ۱۸:۰۰" in wrong.text

        await http.post("/language", data={"csrf": csrf, "language": "en"})
        english = await http.get(f"/broadcasts/{env.bot['id']}/{broadcast_id}/edit")
        field = input_tag(english.text, "scheduled_at")
        assert 'type="datetime-local"' in field and 'value="2027-03-21T10:00"' in field


async def test_statistics_and_audit_filters_take_jalali_days(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with panel_env(pool, db_dsn, tmp_path, people=1) as env, client(env.app) as http:
        await pool.execute("UPDATE workspace SET time_zone = 'Asia/Tehran' WHERE id = 1")
        csrf = await signed_in(env, http, role="owner")
        await http.post("/language", data={"csrf": csrf, "language": "fa"})

        stats = await http.get(
            "/stats", params={"range": "custom", "from": "۱۴۰۵/۰۹/۰۱", "to": "1405/09/10"}
        )
        assert stats.status_code == 200
        assert 'value="۱۴۰۵/۰۹/۰۱"' in input_tag(stats.text, "from")
        assert 'value="۱۴۰۵/۰۹/۱۰"' in input_tag(stats.text, "to")
        assert 'type="date"' not in stats.text

        audit = await http.get("/audit", params={"since": "۱۴۰۵/۰۹/۰۱", "until": "۱۴۰۵/۰۹/۱۰"})
        assert audit.status_code == 200
        assert 'value="۱۴۰۵/۰۹/۰۱"' in input_tag(audit.text, "since")

        await http.post("/language", data={"csrf": csrf, "language": "en"})
        english = await http.get(
            "/stats", params={"range": "custom", "from": "۱۴۰۵/۰۹/۰۱", "to": "2026-12-01"}
        )
        field = input_tag(english.text, "from")
        assert 'type="date"' in field and 'value="2026-11-22"' in field
