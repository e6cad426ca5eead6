"""`sponsorbot demo`'s month of history is the funnel the live handlers write: every gate after
an open of the same item, every pass after a gate only once each channel it listed was joined,
the content right after every pass; its people have names; its sign-in page shows the demo's
account.

One demo serves every test here; only the history's rows are read (before the moment the demo
wrote it up to, from its state file), not the live visitors'.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

import aiohttp
import asyncpg
import pytest

from sponsorbot.demo.setup import OWNER_EMAIL, OWNER_PASSWORD
from tests.integration.demokit import running_demo

pytestmark = pytest.mark.slow


# A gate without an open of the same item by the same person just before it.
GATE_WITHOUT_OPEN = """
SELECT count(*) FROM events g
WHERE g.kind = 'gate_shown' AND g.at < $1 AND NOT EXISTS (
    SELECT 1 FROM events s
    WHERE s.bot_id = g.bot_id AND s.user_id = g.user_id AND s.kind = 'started'
      AND s.content_id = g.content_id AND s.at <= g.at AND s.at > g.at - interval '1 minute')
"""
# Each pass with the open it answers (the person's latest of that item) and the gate shown
# since that open, if any.
PASSES = """
WITH passes AS (
    SELECT p.bot_id, p.user_id, p.content_id, p.at, p.data,
           (SELECT max(s.at) FROM events s
            WHERE s.bot_id = p.bot_id AND s.user_id = p.user_id AND s.kind = 'started'
              AND s.content_id = p.content_id AND s.at <= p.at) AS opened
    FROM events p
    WHERE p.kind = 'gate_passed' AND p.at < $1
)
SELECT p.*, g.at AS shown, g.data -> 'missing' AS missing
FROM passes p
LEFT JOIN events g
  ON g.bot_id = p.bot_id AND g.user_id = p.user_id AND g.kind = 'gate_shown'
 AND g.content_id = p.content_id AND g.at >= p.opened AND g.at <= p.at
"""
# A channel a gate listed that the person did not join (nor ask to) before passing it.
PASSED_WITHOUT_JOINING = f"""
WITH gated AS ({PASSES})
SELECT count(*) FROM gated, jsonb_array_elements_text(gated.missing) AS m (chat)
WHERE gated.shown IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM events j
    WHERE j.bot_id = gated.bot_id AND j.user_id = gated.user_id
      AND j.kind IN ('joined', 'join_request') AND j.chat_id = m.chat::bigint
      AND j.at >= gated.shown AND j.at <= gated.at)
"""
# Per item: opens, gates, passes, passes after a gate, contents sent.
FUNNEL = f"""
WITH gated AS ({PASSES}),
after_gate AS (
    SELECT bot_id, content_id, count(*) AS n FROM gated WHERE shown IS NOT NULL GROUP BY 1, 2
), counts AS (
    SELECT bot_id, content_id,
           count(*) FILTER (WHERE kind = 'started') AS opened,
           count(*) FILTER (WHERE kind = 'gate_shown') AS gated,
           count(*) FILTER (WHERE kind = 'gate_passed') AS passed,
           count(*) FILTER (WHERE kind = 'content_sent') AS sent
    FROM events
    WHERE at < $1 AND content_id IS NOT NULL
      AND kind IN ('started', 'gate_shown', 'gate_passed', 'content_sent')
    GROUP BY 1, 2
)
SELECT c.*, coalesce(a.n, 0) AS passed_after_gate
FROM counts c LEFT JOIN after_gate a USING (bot_id, content_id)
"""
# A pass without the content sent with it.
PASSED_WITHOUT_CONTENT = """
SELECT count(*) FROM events p
WHERE p.kind = 'gate_passed' AND p.at < $1 AND NOT EXISTS (
    SELECT 1 FROM events c
    WHERE c.bot_id = p.bot_id AND c.user_id = p.user_id AND c.kind = 'content_sent'
      AND c.content_id = p.content_id AND c.at >= p.at AND c.at < p.at + interval '1 minute')
"""
# The first join (or request) at each gate names the item whose gate was open; a gate the
# person went through names it exactly once.
GATES_WITHOUT_ONE_JOIN = f"""
WITH gated AS ({PASSES})
SELECT count(*) FROM gated
WHERE gated.shown IS NOT NULL AND (
    SELECT count(*) FROM events j
    WHERE j.bot_id = gated.bot_id AND j.user_id = gated.user_id
      AND j.kind IN ('joined', 'join_request') AND j.content_id = gated.content_id
      AND j.at >= gated.shown AND j.at <= gated.at) <> 1
"""
# The funnel as the statistics count it, per item, over the whole history.
STAT_FUNNEL = """
SELECT dim, kind, sum(n) AS n FROM sponsorbot_stat_facts('-infinity', $1, NULL)
WHERE kind IN ('started', 'gate_shown', 'gate_joined', 'gate_cleared') AND dim <> ''
GROUP BY 1, 2
"""
# A credited member of the history whose join does not carry the campaign's link in that bot.
CREDIT_WITHOUT_LINK = """
SELECT count(*) FROM campaign_members m
JOIN campaigns c ON c.id = m.campaign_id
JOIN campaign_bots b ON b.campaign_id = m.campaign_id AND b.bot_id = m.bot_id
WHERE m.gate_joined_at < $1 AND NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.bot_id = m.bot_id AND e.user_id = m.user_id AND e.kind = 'joined'
      AND e.chat_id = c.chat_id AND e.at = m.gate_joined_at
      AND e.data ->> 'link' = b.invite_link)
"""
CREDITS = """
SELECT c.status, count(*) AS n FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
WHERE m.gate_joined_at < $1 GROUP BY c.status
"""
NAMES = """
SELECT count(*) AS people,
       count(*) FILTER (WHERE first_name IS NULL) AS nameless,
       count(*) FILTER (WHERE username IS NULL) AS no_username,
       count(*) FILTER (WHERE last_name IS NULL) AS no_last_name,
       count(*) FILTER (WHERE first_name ~ '[آ-ی]') AS persian_script,
       count(*) FILTER (WHERE first_name ~ '^[A-Za-z]+$') AS latin
FROM people WHERE first_seen < $1
"""
# Usernames are Telegram's own: one person's, in every bot.
SHARED_USERNAMES = """
SELECT count(*) FROM (
    SELECT username FROM people WHERE username IS NOT NULL
    GROUP BY username HAVING count(DISTINCT user_id) > 1) AS shared
"""


@dataclass
class Demo:
    """A running demo: its panel, the end of its history and a pool on its database."""

    panel: str
    until: datetime
    pool: asyncpg.Pool


@pytest.fixture(scope="module")
async def demo(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Demo]:
    async with running_demo(tmp_path_factory.mktemp("history") / "demo") as run:
        state = json.loads((run.data_dir / "demo.json").read_text())
        yield Demo(run.panel, datetime.fromisoformat(state["history_until"]), run.pool)


async def test_every_gate_follows_an_open_and_every_pass_the_joins(demo: Demo) -> None:
    pool, until = demo.pool, demo.until
    assert await pool.fetchval(GATE_WITHOUT_OPEN, until) == 0
    passes = await pool.fetch(PASSES, until)
    assert passes and all(p["opened"] is not None for p in passes)
    after_gate = [p for p in passes if p["shown"] is not None]
    assert 0 < len(after_gate) < len(passes)  # some met no gate: they had joined before
    assert all(json.loads(p["data"])["checks"] >= 2 for p in after_gate)
    assert all(json.loads(p["data"])["checks"] == 1 for p in passes if p["shown"] is None)
    # The gate lists the channels it asked for (the statistics count them per channel).
    assert all(json.loads(p["missing"]) for p in after_gate)
    assert await pool.fetchval(PASSED_WITHOUT_JOINING, until) == 0
    assert await pool.fetchval(PASSED_WITHOUT_CONTENT, until) == 0
    assert await pool.fetchval(GATES_WITHOUT_ONE_JOIN, until) == 0


async def test_each_items_funnel_narrows(demo: Demo) -> None:
    rows = await demo.pool.fetch(FUNNEL, demo.until)
    assert rows
    for r in rows:
        funnel = dict(r)
        direct = r["passed"] - r["passed_after_gate"]
        assert r["opened"] >= r["gated"] >= r["passed_after_gate"], funnel
        assert r["opened"] >= r["gated"] + direct, funnel  # an open meets a gate or passes
        assert r["passed"] == r["sent"], funnel
    # The most opened item of each bot went the whole way, many times.
    best: dict[int, dict[str, int]] = {}
    for r in rows:
        if r["opened"] > best.get(r["bot_id"], {"opened": -1})["opened"]:
            best[r["bot_id"]] = dict(r)
    assert len(best) == 3
    assert all(r["gated"] > 100 and r["passed_after_gate"] > 50 for r in best.values()), best
    # The statistics' funnel of every item narrows: opened ≥ gated ≥ joined ≥ cleared.
    steps: dict[str, dict[str, int]] = {}
    for r in await demo.pool.fetch(STAT_FUNNEL, demo.until):
        steps.setdefault(r["dim"], {})[r["kind"]] = int(r["n"])
    assert steps
    order = ("started", "gate_shown", "gate_joined", "gate_cleared")
    for item, counts in steps.items():
        values = [counts.get(k, 0) for k in order]
        assert values == sorted(values, reverse=True), (item, counts)


async def test_campaign_joins_carry_the_campaigns_links(demo: Demo) -> None:
    assert await demo.pool.fetchval(CREDIT_WITHOUT_LINK, demo.until) == 0
    credits = {r["status"]: r["n"] for r in await demo.pool.fetch(CREDITS, demo.until)}
    assert set(credits) == {"running", "reached", "ended", "paused"}, credits


async def test_the_history_people_have_names(demo: Demo) -> None:
    names = dict(await demo.pool.fetchrow(NAMES, demo.until))
    assert names["people"] > 5000, names
    assert names["nameless"] == 0, names
    share = {k: names[k] / names["people"] for k in ("no_username", "no_last_name")}
    assert 0.2 < share["no_username"] < 0.6 and 0.1 < share["no_last_name"] < 0.5, names
    assert names["persian_script"] > 0 and names["latin"] > 0, names
    assert await demo.pool.fetchval(SHARED_USERNAMES) == 0


async def test_the_demos_sign_in_page_shows_its_account(demo: Demo) -> None:
    async with aiohttp.ClientSession() as http, http.get(f"{demo.panel}/signin") as response:
        assert response.status == 200
        page = await response.text()
    box = re.search(r'<div class="notice" id="demo-account".*?</div>', page, re.DOTALL)
    assert box, page
    assert "This is the demo" in box[0]
    assert OWNER_EMAIL in box[0] and OWNER_PASSWORD in box[0]
