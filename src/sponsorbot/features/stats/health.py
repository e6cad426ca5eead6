"""Per-bot health: the series /metrics serves (metrics.py), a table for `sponsorbot status`."""

from __future__ import annotations

from typing import Any

METRICS: list[tuple[str, str, str]] = [
    ("waiting", "sponsorbot_inbox_waiting", "Updates waiting to be handled"),
    ("oldest_s", "sponsorbot_inbox_oldest_waiting_seconds", "Age of the oldest waiting update"),
    ("in_hand", "sponsorbot_inbox_in_hand", "Updates being handled now"),
    ("dead", "sponsorbot_inbox_dead", "Updates set aside after their last attempt"),
    ("outbox", "sponsorbot_outbox_waiting", "Bot API calls waiting to be sent"),
    ("sent_1m", "sponsorbot_sent_last_minute", "Calls sent in the current and last minute"),
    ("throttled_1m", "sponsorbot_429_last_minute", "429 answers in the current and last minute"),
]


def status_table(rows: list[dict[str, Any]]) -> str:
    """The figures as a plain table for `sponsorbot status`."""
    if not rows:
        return "no bots yet: connect one with its @BotFather token on the panel's Bots page (/bots)"
    head = (
        "bot",
        "mode",
        "token",
        "waiting",
        "oldest",
        "in hand",
        "dead",
        "outbox",
        "sent/1m",
        "429/1m",
    )
    body = [
        (
            f"@{r['username']} ({r['id']})",
            r["mode"],
            r["status"],
            str(r["waiting"]),
            f"{float(r['oldest_s']):.1f}s",
            str(r["in_hand"]),
            str(r["dead"]),
            str(r["outbox"]),
            str(r["sent_1m"]),
            str(r["throttled_1m"]),
        )
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in [head, *body]
    )
