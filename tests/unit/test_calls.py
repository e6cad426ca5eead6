"""Call builders: Bot API method names and parameters, None left out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sponsorbot.engine import calls
from sponsorbot.engine.unit import PRIORITY_LATER, UnitOfWork


def test_builders_give_bot_api_names_and_params() -> None:
    markup = {"inline_keyboard": [[{"text": "Join", "url": "https://t.me/x"}]]}
    m = calls.send_message(5, "<b>hi</b>", markup=markup, ref="r1")
    assert (m.method, m.chat_id, m.ref) == ("sendMessage", 5, "r1")
    assert m.params == {
        "chat_id": 5,
        "text": "<b>hi</b>",
        "parse_mode": "HTML",
        "reply_markup": markup,
    }
    plain = calls.send_message(5, "x", parse_mode=None, protect=False)
    assert plain.params == {"chat_id": 5, "text": "x", "protect_content": False}
    doc = calls.send_media(5, "document", "FID", caption="c", protect=True)
    assert doc.method == "sendDocument"
    assert doc.params == {"chat_id": 5, "document": "FID", "caption": "c", "protect_content": True}
    assert calls.send_media(5, "photo", "P").params == {"chat_id": 5, "photo": "P"}
    edit = calls.edit_message_text(5, 9, "t")
    assert edit.params == {"chat_id": 5, "message_id": 9, "text": "t", "parse_mode": "HTML"}
    answer = calls.answer_callback(5, "cq", "ok", alert=True)
    assert answer.params == {
        "chat_id": 5,
        "callback_query_id": "cq",
        "text": "ok",
        "show_alert": True,
    }


def test_a_delete_names_a_message_one_way_only() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    later = calls.delete_message(5, uses_ref="c:1", not_before=at, priority=PRIORITY_LATER)
    assert (later.uses_ref, later.not_before, later.priority) == ("c:1", at, PRIORITY_LATER)
    assert later.params == {"chat_id": 5}
    assert calls.delete_message(5, 9).params == {"chat_id": 5, "message_id": 9}
    with pytest.raises(ValueError):
        calls.delete_message(5)
    with pytest.raises(ValueError):
        calls.delete_message(5, 9, uses_ref="c:1")


def test_queued_and_sent_calls_land_in_the_unit_of_work_in_order() -> None:
    uow = UnitOfWork(1)
    uow.queue(calls.send_message(5, "a"))
    uow.send(5, "sendMessage", {"text": "b"})
    assert [c.params["text"] for c in uow.calls] == ["a", "b"]
