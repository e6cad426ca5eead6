"""/metrics through prometheus-client: a custom collector over a cached snapshot.

A scrape reads the snapshot, which is refreshed at most every `ttl_s` seconds: the per-bot
queue figures cost a look at each bot's backlog, which must not happen on every scrape during
an incident (docs/adr/0019-metrics.md). What an operator alerts on:

- per bot: waiting updates and the oldest one's age, in hand, dead, outbox depth, messages
  given up after network errors, sends and 429s of the last minute, and a `problem` flag
  (another program polls the token, the token cannot be decrypted);
- `sponsorbot_answer_seconds`, a histogram per bot of the time from an update's arrival to
  the first message sent for it, counted from what was sent since the previous refresh
  (cumulative in this process: counters start again when it restarts);
- the leases each worker holds, by kind (send, poll, job, worker).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import asyncpg
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from sponsorbot.db.pool import on_citus
from sponsorbot.features.stats.health import METRICS
from sponsorbot.features.stats.queries import bot_status

BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
PROBLEMS = "SELECT id, problem FROM bots WHERE problem IS NOT NULL"
LEASES = """
SELECT owner, split_part(name, ':', 1) AS kind, count(*) AS n FROM leases
WHERE expires_at > now() GROUP BY 1, 2
"""
# The first reply to each update sent since $1 (a visitor's answer), and the time it took.
# The outbox's finished index keeps this to what was sent since the last refresh.
ANSWERS = """
SELECT DISTINCT ON (o.inbox_id) o.inbox_id, o.bot_id,
       extract(epoch FROM o.sent_at - i.received_at)::float8 AS seconds
FROM outbox o JOIN inbox i ON i.bot_id = o.bot_id AND i.id = o.inbox_id
WHERE o.status = 'sent' AND o.sent_at > $1 AND o.sent_at <= $2 AND o.inbox_id IS NOT NULL
  AND o.priority < 10
ORDER BY o.inbox_id, o.id
"""
NOW = "SELECT now()"


class _Histogram:
    """One bot's cumulative answer times."""

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1
                break
        else:
            self.counts[-1] += 1
        self.total += seconds

    def buckets(self) -> list[tuple[str, float]]:
        running, out = 0, []
        for bound, n in zip([*map(str, BUCKETS), "+Inf"], self.counts, strict=True):
            running += n
            out.append((bound, float(running)))
        return out


class Metrics(Collector):
    """The figures /metrics serves, refreshed from the database at most every `ttl_s`."""

    def __init__(self, pool: asyncpg.Pool, ttl_s: float = 10.0) -> None:
        self.pool = pool
        self.ttl_s = ttl_s
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)
        self._lock = asyncio.Lock()
        self._taken = -float("inf")
        self._bots: list[dict[str, Any]] = []
        self._problems: dict[int, str] = {}
        self._leases: list[dict[str, Any]] = []
        self._answers: dict[int, _Histogram] = {}
        self._since: datetime | None = None
        self._counted: set[int] = set()  # updates answered in the last window
        self._citus: bool | None = None  # whether the database is a Citus coordinator

    async def render(self) -> bytes:
        """The exposition text, from a snapshot no older than `ttl_s`."""
        async with self._lock:
            if time.monotonic() - self._taken >= self.ttl_s:
                await self._refresh()
                self._taken = time.monotonic()
        return generate_latest(self.registry)

    async def _refresh(self) -> None:
        async with self.pool.acquire() as conn:
            now: datetime = await conn.fetchval(NOW)
            if self._citus is None:
                self._citus = await on_citus(conn)
            self._bots = await bot_status(conn, self._citus)
            self._problems = {r["id"]: r["problem"] for r in await conn.fetch(PROBLEMS)}
            self._leases = [dict(r) for r in await conn.fetch(LEASES)]
            if self._since is None:
                # Counting starts now: what was sent before this process began is not replayed.
                self._since = now
                return
            counted: set[int] = set()
            for row in await conn.fetch(ANSWERS, self._since, now):
                counted.add(row["inbox_id"])
                # A reply whose update was answered in the last window is not its first.
                if row["inbox_id"] not in self._counted:
                    self._answers.setdefault(row["bot_id"], _Histogram()).observe(row["seconds"])
            self._counted, self._since = counted, now

    def collect(self) -> Iterator[Any]:
        """The series, for prometheus-client (called by generate_latest)."""
        labels = ["bot", "username"]
        for key, name, help_text in METRICS:
            family = GaugeMetricFamily(name, help_text, labels=labels)
            for r in self._bots:
                family.add_metric([str(r["id"]), r["username"]], float(r[key]))
            yield family
        failed = GaugeMetricFamily(
            "sponsorbot_outbox_given_up",
            "Messages given up after hours of network errors (sponsorbot redrive sends them)",
            labels=labels,
        )
        active = GaugeMetricFamily(
            "sponsorbot_bot_active",
            "1 when the bot is active, 0 when paused or its token was refused",
            labels=[*labels, "status"],
        )
        problem = GaugeMetricFamily(
            "sponsorbot_bot_problem",
            "1 while the bot has a problem needing the owner (conflict, token_unreadable)",
            labels=[*labels, "problem"],
        )
        for r in self._bots:
            ids = [str(r["id"]), r["username"]]
            failed.add_metric(ids, float(r["given_up"]))
            active.add_metric([*ids, r["status"]], 1.0 if r["status"] == "active" else 0.0)
            if r["id"] in self._problems:
                problem.add_metric([*ids, self._problems[r["id"]]], 1.0)
        yield from (failed, active, problem)
        leases = GaugeMetricFamily(
            "sponsorbot_leases", "Leases each worker holds, by kind", labels=["owner", "kind"]
        )
        for lease in self._leases:
            leases.add_metric([lease["owner"], lease["kind"]], float(lease["n"]))
        yield leases
        answers = HistogramMetricFamily(
            "sponsorbot_answer_seconds",
            "From an update's arrival to the first message sent for it",
            labels=labels,
        )
        names = {r["id"]: r["username"] for r in self._bots}
        for bot_id, histogram in self._answers.items():
            answers.add_metric(
                [str(bot_id), names.get(bot_id, "")], histogram.buckets(), histogram.total
            )
        yield answers
