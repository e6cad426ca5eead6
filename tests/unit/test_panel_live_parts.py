"""Parts of panel pages rendered on their own, for states a live run passes too quickly to
catch: a broadcast sent a moment ago."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sponsorbot.web.panel import i18n
from sponsorbot.web.panel.routes_broadcasts import NAMES
from sponsorbot.web.panel.web import make_environment

NOW = datetime(2026, 12, 4, 18, 0, tzinfo=UTC)


class _Viewer:
    def can(self, permission: str) -> bool:
        return True


def _broadcast(status: str, scheduled_at: datetime | None) -> dict[str, Any]:
    return {
        "id": 3,
        "bot_id": 42,
        "status": status,
        "paid": False,
        "scheduled_at": scheduled_at,
        "started_at": None,
        "created_at": NOW - timedelta(hours=1),
        "pause_reason": None,
        "progress": {"total": 0, "done": 0, "percent": 0, "rate_per_s": None},
        "sent": 0,
        "blocked": 0,
        "failed": 0,
        "unknown": 0,
        "queued": 0,
        "failures": [],
        "estimated_stars": None,
    }


def _live(b: dict[str, Any], lang: str = "en") -> str:
    i18n.use_language(lang)
    try:
        template = make_environment().get_template("_broadcast_live.html")
        return template.render(
            b=b,
            viewer=_Viewer(),
            csrf="x" * 32,
            now=NOW,
            lang=lang,
            when=lambda moment, with_time=True: moment.isoformat(),
            **NAMES,
        )
    finally:
        # The language is the process's until set again: later tests in this worker read it.
        i18n.use_language("en")


def test_a_broadcast_sent_a_moment_ago_says_starting_and_offers_no_second_send() -> None:
    html = _live(_broadcast("scheduled", NOW - timedelta(seconds=1)))
    assert "Starting…" in html and "Choosing the audience" in html
    assert "/send" not in html and "/edit" not in html
    assert "/cancel" in html  # it can still be stopped
    assert 'id="total"' not in html  # no "Audience 0" before the audience is chosen
    assert 'hx-trigger="every 2s"' in html
    persian = _live(_broadcast("scheduled", NOW - timedelta(seconds=1)), "fa")
    assert "در حال آغاز" in persian


def test_a_broadcast_scheduled_for_later_still_offers_send_now() -> None:
    html = _live(_broadcast("scheduled", NOW + timedelta(hours=2)))
    assert "Starting…" not in html and "Not started" in html
    assert 'action="/broadcasts/42/3/send"' in html and 'id="total"' in html
