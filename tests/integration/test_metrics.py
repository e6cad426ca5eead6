"""/metrics: prometheus-client over a cached snapshot, served to this machine or with a token."""

from __future__ import annotations

import ipaddress

import asyncpg
from pydantic import SecretStr
from starlette.requests import Request

from sponsorbot.features.stats.metrics import Metrics
from sponsorbot.web.app import may_scrape
from tests.integration.test_janitor import BOT, add_bot


def request(host: str, **headers: str) -> Request:
    raw = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "client": (host, 5000), "headers": raw, "method": "GET"})


def test_metrics_go_to_this_machine_or_to_the_token_bearer() -> None:
    """L1: /metrics answered anyone, naming bots and their traffic."""
    token = SecretStr("m" * 32)
    assert may_scrape(request("127.0.0.1"), None)
    assert may_scrape(request("::1"), token)
    assert not may_scrape(request("203.0.113.9"), None)
    # A reverse proxy on this machine passes everyone's requests on from 127.0.0.1.
    assert not may_scrape(request("127.0.0.1", x_forwarded_for="203.0.113.9"), None)
    assert may_scrape(request("203.0.113.9", authorization=f"Bearer {'m' * 32}"), token)
    assert not may_scrape(request("203.0.113.9", authorization="Bearer wrong"), token)
    # A proxy that adds no header at all is known by its address.
    proxies = (ipaddress.ip_network("127.0.0.1/32"),)
    assert not may_scrape(request("127.0.0.1"), None, proxies)


async def test_a_scrape_reads_a_snapshot_and_answer_times_are_a_histogram(
    pool: asyncpg.Pool,
) -> None:
    """L1: each scrape counted the whole backlog; now at most one look per `ttl_s`."""
    await add_bot(pool)
    metrics = Metrics(pool, ttl_s=3600)
    first = (await metrics.render()).decode()
    assert f'sponsorbot_inbox_waiting{{bot="{BOT}",username="clean_bot"}} 0.0' in first
    inbox_id = await pool.fetchval(
        "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, received_at)"
        " VALUES ($1, 1, 'message', 5, '{}', now() - interval '2 seconds') RETURNING id",
        BOT,
    )
    cached = (await metrics.render()).decode()
    assert f'sponsorbot_inbox_waiting{{bot="{BOT}",username="clean_bot"}} 0.0' in cached

    # Two replies to the update: one answer, of about two seconds.
    for _ in range(2):
        await pool.execute(
            "INSERT INTO outbox (bot_id, chat_id, method, params, inbox_id, status, sent_at)"
            " VALUES ($1, 5, 'sendMessage', '{}', $2, 'sent', clock_timestamp())",
            BOT,
            inbox_id,
        )
    metrics.ttl_s = 0.0
    fresh = (await metrics.render()).decode()
    labels = f'bot="{BOT}",username="clean_bot"'
    assert f"sponsorbot_inbox_waiting{{{labels}}} 1.0" in fresh
    assert f"sponsorbot_answer_seconds_count{{{labels}}} 1.0" in fresh
    bucket = 'sponsorbot_answer_seconds_bucket{{bot="{}",le="{}",username="clean_bot"}} {}'
    assert bucket.format(BOT, "1.0", "0.0") in fresh
    assert bucket.format(BOT, "2.5", "1.0") in fresh
    again = (await metrics.render()).decode()
    assert f"sponsorbot_answer_seconds_count{{{labels}}} 1.0" in again
