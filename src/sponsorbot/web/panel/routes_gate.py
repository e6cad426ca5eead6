"""One bot's channels, gate and content: the same feature services the owner API calls."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from sponsorbot.engine.bots import BotNotFound
from sponsorbot.features import Features
from sponsorbot.features.content import NewContent
from sponsorbot.features.errors import FeatureError, Invalid, NotFound, Refused
from sponsorbot.telegram import TelegramError
from sponsorbot.web.panel.audit import record
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.security import qr_svg
from sponsorbot.web.panel.web import Viewer, actor_of, panel_of, redirect, render, require

router = APIRouter(include_in_schema=False, tags=["panel"])
View = Annotated[Viewer, Depends(require("view"))]
Edit = Annotated[Viewer, Depends(require("content"))]
PAGE = 20
# Per item: gated (shown the gate), passed (through it), sent (content delivered).
COUNTS = """
SELECT content_id, kind, count(*) AS n FROM events
WHERE bot_id = $1 AND content_id = ANY($2) AND kind IN ('gate_shown', 'gate_passed', 'content_sent')
GROUP BY 1, 2
"""


def _features(request: Request) -> Features:
    features: Features = request.app.state.features
    return features


def _channel_error(exc: Exception) -> str:
    """A refusal in the viewer's language, naming the right to grant when one is missing."""
    if isinstance(exc, Refused) and "can_invite_users" in exc.details.get("missing", []):
        return _(
            "The bot lacks the right “Invite users via link” there: grant it in the "
            "channel's administrators, then add the channel again."
        )
    if isinstance(exc, Refused) and exc.details.get("missing"):
        return _("The bot is not an administrator there: make it one, then add the channel again.")
    if isinstance(exc, Refused):
        return _(
            "Telegram cannot show this chat to the bot. For a private channel, add the bot as "
            "an administrator first."
        )
    if isinstance(exc, Invalid):
        return _("Use @name, a t.me link, a post link or an id like -100…; channels only.")
    if isinstance(exc, NotFound):
        return _("Not found")
    return _("Telegram could not be reached. Try again in a minute.")


def _missing_text(missing: list[str]) -> str:
    if "administrator" in missing:
        return _("Make the bot an administrator of this channel.")
    return _("Give the bot the right “Invite users via link”.")


async def _channels_page(
    request: Request, viewer: Viewer, bot_id: int, errors: dict[str, str], status: int = 200
) -> Response:
    features = _features(request)
    try:
        bot = await panel_of(request).bots.get(bot_id)
        channels, _total = await features.channels.list(bot_id, 200, 0)
        gate = await features.settings.gate(bot_id)
    except (BotNotFound, NotFound):
        return render(request, viewer, "not_found.html", status=404)
    in_gate = {g["chat_id"]: (i, g) for i, g in enumerate(gate)}
    rows: list[dict[str, Any]] = []
    for c in channels:
        position, entry = in_gate.get(c["chat_id"], (None, None))
        rows.append(
            {
                **c,
                "in_gate": position is not None,
                "position": (position + 1) if position is not None else len(rows) + 1,
                "request_counts": bool(entry and entry.get("request_counts")),
                "advice": _missing_text(list(c["missing"])) if c["status"] != "ok" else "",
            }
        )
    rows.sort(key=lambda r: (not r["in_gate"], r["position"]))
    context = {"bot": bot, "channels": rows, "errors": errors}
    return render(request, viewer, "channels.html", context, status)


@router.get("/bots/{bot_id}/channels")
async def channels_page(request: Request, bot_id: int, viewer: View) -> Response:
    """A bot's channels with their rights check, and which of them form the gate."""
    return await _channels_page(request, viewer, bot_id, {})


@router.post("/bots/{bot_id}/channels")
async def channels_add(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Add a channel by any reference form; checked live before it is saved."""
    ref = str((await request.form()).get("ref", "")).strip()
    if not ref:
        return await _channels_page(
            request, viewer, bot_id, {"ref": _("Paste @name, a t.me link or an id.")}, 422
        )
    try:
        channel = await _features(request).channels.add(bot_id, ref)
    except (FeatureError, TelegramError, BotNotFound, OSError) as exc:
        return await _channels_page(request, viewer, bot_id, {"ref": _channel_error(exc)}, 422)
    panel = panel_of(request)
    await record(
        panel.pool,
        panel.config.clock(),
        actor_of(request, viewer),
        "channel.added",
        channel["title"],
        after={"chat_id": channel["chat_id"], "bot_id": bot_id},
    )
    return redirect(request, f"/bots/{bot_id}/channels")


@router.post("/bots/{bot_id}/channels/{chat_id}/check")
async def channels_check(request: Request, bot_id: int, chat_id: int, viewer: Edit) -> Response:
    """Check the bot's rights in one channel again, now."""
    try:
        await _features(request).channels.check(bot_id, chat_id)
    except (FeatureError, TelegramError, BotNotFound, OSError) as exc:
        errors = {f"c{chat_id}": _channel_error(exc)}
        return await _channels_page(request, viewer, bot_id, errors, 422)
    return redirect(request, f"/bots/{bot_id}/channels")


@router.post("/bots/{bot_id}/gate")
async def gate_save(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Save which channels form the gate, in which order, and whether join requests count."""
    form = await request.form()
    chosen = {int(str(v)) for v in form.getlist("gate") if str(v).lstrip("-").isdigit()}
    counts = {int(str(v)) for v in form.getlist("requests") if str(v).lstrip("-").isdigit()}

    def position(chat_id: int) -> float:
        raw = str(form.get(f"pos_{chat_id}", ""))
        return float(raw) if raw.isdigit() else 1e9

    entries = [(c, c in counts) for c in sorted(chosen, key=position)]
    features = _features(request)
    try:
        before = await features.settings.gate(bot_id)
        after = await features.settings.set_gate(bot_id, entries)
    except (FeatureError, TelegramError, BotNotFound, OSError) as exc:
        return await _channels_page(request, viewer, bot_id, {"gate": _channel_error(exc)}, 422)
    panel = panel_of(request)
    await record(
        panel.pool,
        panel.config.clock(),
        actor_of(request, viewer),
        "gate.changed",
        f"bot {bot_id}",
        before={"channels": [g["chat_id"] for g in before]},
        after={"channels": [g["chat_id"] for g in after]},
    )
    return redirect(request, f"/bots/{bot_id}/channels")


# -- content -----------------------------------------------------------------------------------


async def _content_page(
    request: Request, viewer: Viewer, bot_id: int, errors: dict[str, str], status: int = 200
) -> Response:
    page = request.query_params.get("page", "1")
    number = max(int(page), 1) if page.isdigit() else 1
    try:
        bot = await panel_of(request).bots.get(bot_id)
        items, total = await _features(request).contents.list(bot_id, PAGE, (number - 1) * PAGE)
    except (BotNotFound, NotFound):
        return render(request, viewer, "not_found.html", status=404)
    counts = await panel_of(request).pool.fetch(COUNTS, bot_id, [i["id"] for i in items])
    by_item: dict[int, dict[str, int]] = {}
    for row in counts:
        by_item.setdefault(row["content_id"], {})[row["kind"]] = int(row["n"])
    for item in items:
        item["qr"] = qr_svg(item["link"])
        item["counts"] = by_item.get(item["id"], {})
    context: dict[str, Any] = {
        "bot": bot,
        "items": items,
        "errors": errors,
        "page": number,
        "pages": max((total + PAGE - 1) // PAGE, 1),
        "total": total,
    }
    return render(request, viewer, "content.html", context, status)


@router.get("/bots/{bot_id}/content")
async def content_page(request: Request, bot_id: int, viewer: View) -> Response:
    """A bot's content, newest first, with links and QR codes."""
    return await _content_page(request, viewer, bot_id, {})


@router.post("/bots/{bot_id}/content")
async def content_create(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Create a text item (files are added by sending them to the bot, or by the API)."""
    form = await request.form()
    text = str(form.get("text", "")).strip()
    minutes = str(form.get("auto_delete", "0")).strip() or "0"
    errors: dict[str, str] = {}
    if not text or len(text) > 4096:
        errors["text"] = _("Write the text to hand out (up to 4096 characters).")
    if not minutes.isdigit() or int(minutes) > 7 * 24 * 60:
        errors["auto_delete"] = _("Minutes from 0 (never) to 10080 (a week).")
    if errors:
        return await _content_page(request, viewer, bot_id, errors, 422)
    new = NewContent(
        kind="text",
        items=[{"kind": "text", "text": text}],
        created_by=f"panel:{viewer.user.id}",
        protect=form.get("protect") == "on",
        auto_delete_s=int(minutes) * 60,
    )
    try:
        item = await _features(request).contents.create(bot_id, new)
    except (FeatureError, BotNotFound) as exc:
        return await _content_page(request, viewer, bot_id, {"text": _channel_error(exc)}, 422)
    panel = panel_of(request)
    await record(
        panel.pool,
        panel.config.clock(),
        actor_of(request, viewer),
        "content.created",
        item["link"],
        after={
            "id": item["id"],
            "kind": "text",
            "protect": new.protect,
            "auto_delete_s": new.auto_delete_s,
        },
    )
    return redirect(request, f"/bots/{bot_id}/content")


@router.post("/bots/{bot_id}/content/{content_id}/toggle")
async def content_toggle(request: Request, bot_id: int, content_id: int, viewer: Edit) -> Response:
    """Turn a content item's link on or off."""
    contents = _features(request).contents
    try:
        before = await contents.get(bot_id, content_id)
        after = await contents.update(bot_id, content_id, {"enabled": not before["enabled"]})
    except (FeatureError, BotNotFound):
        return render(request, viewer, "not_found.html", status=404)
    panel = panel_of(request)
    await record(
        panel.pool,
        panel.config.clock(),
        actor_of(request, viewer),
        "content.enabled" if after["enabled"] else "content.disabled",
        after["link"],
        before={"enabled": before["enabled"]},
        after={"enabled": after["enabled"]},
    )
    return redirect(request, f"/bots/{bot_id}/content")
