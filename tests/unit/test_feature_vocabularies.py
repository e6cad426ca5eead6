"""The campaigns' and broadcasts' vocabularies: every quoted word in their SQL is a status of
the feature's `rules.py` or a word known not to be one, so the SQL and the enums cannot drift."""

from __future__ import annotations

import re
from types import ModuleType

import pytest

from sponsorbot.engine.outbox import UNKNOWN
from sponsorbot.features.broadcasts import queries as broadcast_queries
from sponsorbot.features.broadcasts import rules as broadcast_rules
from sponsorbot.features.campaigns import credit
from sponsorbot.features.campaigns import queries as campaign_queries
from sponsorbot.features.campaigns import rules as campaign_rules
from sponsorbot.features.campaigns import service as campaign_service
from sponsorbot.features.campaigns.watch import MOVE_TO, next_status

# Quoted words in the features' SQL that are not one of their statuses, and what each is.
NOT_STATES = {
    "channel": "channels.chat_type",
    "ok": "channels.status (a channel check, not a campaign)",
    "{}": "an empty text[]",
    "1 hour": "an interval",
    "day": "date_trunc's field",
    "hour": "date_trunc's field",
    "5 seconds": "an interval",
    "30 days": "an interval",
    "": "no error",
    "Forbidden:%": "a LIKE pattern on Telegram's error",
    "chat_id": "a jsonb key",
    "id": "pg_get_serial_sequence's column",
    "outbox": "pg_get_serial_sequence's table",
    "pending": "outbox.status",
    "en": "people.language",
    "gate_passed": "events.kind",
    UNKNOWN: "the outbox's error for a message whose fate is unknown",
}
QUOTED = re.compile(r"'([^']*)'")


def sql_words(module: ModuleType) -> set[str]:
    """Every quoted word in the module's SQL constants."""
    found: set[str] = set()
    for name, value in vars(module).items():
        if name.isupper() and isinstance(value, str) and re.search(r"\b(SELECT|UPDATE)\b", value):
            found |= set(QUOTED.findall(value))
    return found


@pytest.mark.parametrize(
    ("modules", "vocabulary"),
    [
        ((campaign_service, campaign_queries, credit), set(campaign_rules.Status)),
        (
            (broadcast_queries,),
            set(broadcast_rules.Status) | set(broadcast_rules.Recipient),
        ),
    ],
    ids=["campaigns", "broadcasts"],
)
def test_every_quoted_word_in_the_sql_is_a_status_or_known_not_to_be_one(
    modules: tuple[ModuleType, ...], vocabulary: set[str]
) -> None:
    words = set().union(*(sql_words(m) for m in modules))
    assert words - vocabulary - set(NOT_STATES) == set()
    # The SQL does name statuses (the scan reads the right constants).
    assert len(words & vocabulary) >= 4


def test_a_renamed_status_would_be_caught() -> None:
    words = sql_words(campaign_queries)
    renamed = set(campaign_rules.Status) - {"paused"} | {"held"}
    assert words - renamed - set(NOT_STATES) == {"paused"}


@pytest.mark.parametrize("rules", [campaign_rules, broadcast_rules], ids=["campaigns", "bcasts"])
def test_moves_go_between_statuses(rules: ModuleType) -> None:
    for name, (sources, to) in rules.MOVES.items():
        assert sources, name
        assert to not in sources or name == "send", name  # a scheduled one may be moved
        assert not set(sources) - set(rules.Status), name


def test_finished_campaigns_have_no_moves_out() -> None:
    for status in campaign_rules.FINISHED:
        assert not any(status in move.sources for move in campaign_rules.MOVES.values())


def test_finished_broadcasts_have_no_moves_out() -> None:
    for status in broadcast_rules.FINISHED:
        assert not any(broadcast_rules.can(m, status) for m in broadcast_rules.MOVES)
    assert broadcast_rules.can("cancel", "sending") and not broadcast_rules.can("pause", "draft")


def test_the_watch_job_moves_by_the_table() -> None:
    for to, move in MOVE_TO.items():
        assert campaign_rules.MOVES[move].to is to


def test_statuses_compare_as_their_words() -> None:
    campaign = {"status": "running", "ends_at": None, "goal_joins": 5, "progress": 5}
    assert next_status(campaign, None) == "reached"
    assert "running" in campaign_rules.STATUSES
    assert broadcast_rules.Status("done") is broadcast_rules.Status.DONE
