"""The broadcast form: what its fields say, read into a draft, and a draft written back into
its fields."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from starlette.datastructures import FormData

from sponsorbot.features.broadcasts.post import Button, Post, check_url
from sponsorbot.features.broadcasts.rules import Status
from sponsorbot.features.broadcasts.service import MAX_ACTIVE_DAYS, Audience, Broadcast, Draft
from sponsorbot.features.errors import Invalid
from sponsorbot.web.panel.fields import is_id, local_input, moment_of, text_of
from sponsorbot.web.panel.i18n import gettext as _


def read_buttons(raw: str, errors: dict[str, str]) -> tuple[tuple[Button, ...], ...]:
    """Rows of buttons typed one row a line, each `Text | https://link`, several in a row
    joined by `;;`; an error under "buttons" for one that is not written so."""
    rows = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        row = []
        for cell in line.split(";;"):
            label, bar, url = cell.rpartition("|")
            if not bar or not label.strip() or not url.strip():
                errors["buttons"] = _("Write each button as Text | https://link.")
                return ()
            try:
                check_url(url)  # the service's own rule, asked here to name the button
            except Invalid:
                text = _("The link of the button “%(text)s” is not a full address like https://…")
                errors["buttons"] = text % {"text": label.strip()}
                return ()
            row.append(Button(label.strip(), url.strip()))
        rows.append(tuple(row))
    return tuple(rows)


def buttons_text(rows: list[list[dict[str, str]]]) -> str:
    """Stored buttons as the form's textarea writes them."""
    return "\n".join(" ;; ".join(f"{b['text']} | {b['url']}" for b in row) for row in rows)


def read_audience(values: Mapping[str, Any], errors: dict[str, str]) -> Audience:
    """The audience filters of the form (or of the count's query); the service checks the
    ranges."""
    days = text_of(values, "active_days").strip()
    if days and not (days.isdigit() and len(days) <= 9):
        errors["active_days"] = _(
            "A whole number of days, 1 to %(n)s, or empty for anyone.", n=MAX_ACTIVE_DAYS
        )
    campaign = text_of(values, "campaign_id")
    return Audience(
        active_days=int(days) if days.isdigit() and len(days) <= 9 else None,
        language=text_of(values, "language") or None,
        campaign_id=int(campaign) if is_id(campaign) else None,
        passed=values.get("passed") == "on",
    )


def read_form(form: FormData, zone: str) -> tuple[Draft, datetime | None, dict[str, str]]:
    """The draft a form describes, when to send it, and the errors of fields that are not
    even well formed."""
    errors: dict[str, str] = {}
    post = Post(
        text=text_of(form, "text"),
        media_kind=text_of(form, "media_kind").strip() or None,
        file_id=text_of(form, "file_id").strip() or None,
        buttons=read_buttons(text_of(form, "buttons"), errors),
        protect=form.get("protect") == "on",
        silent=form.get("silent") == "on",
        paid=form.get("paid") == "on",
    )
    draft = Draft(text_of(form, "title"), post, read_audience(form, errors))
    return draft, moment_of(text_of(form, "scheduled_at"), zone, errors, "scheduled_at"), errors


def form_values(form: FormData | None, broadcast: Broadcast | None, zone: str) -> dict[str, Any]:
    """What the form fields show: what was typed, else the broadcast, else the defaults."""
    if form is not None:
        return {k: v for k, v in form.items() if isinstance(v, str) and k != "csrf"}
    if broadcast is None:
        return {}
    post, audience = broadcast.post, broadcast.audience
    return {
        "bot_id": str(broadcast.bot_id),
        "title": broadcast.title,
        "text": post["text"],
        "media_kind": post["media_kind"] or "",
        "file_id": post["file_id"] or "",
        "buttons": buttons_text(post["buttons"]),
        **{k: "on" for k in ("protect", "silent", "paid") if post[k]},
        "active_days": audience["active_days"] or "",
        "language": audience["language"] or "",
        "campaign_id": str(audience["campaign_id"] or ""),
        **({"passed": "on"} if audience["passed"] else {}),
        "scheduled_at": local_input(broadcast.scheduled_at, zone)
        if broadcast.status == Status.SCHEDULED
        else "",
    }
