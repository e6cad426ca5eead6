"""One bot's channels and gate: the same feature services the owner API calls."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import Edit, View
from sponsorbot.web.panel.errors import REFUSED, describe
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_campaigns import names as campaign_names
from sponsorbot.web.panel.web import Viewer, audit, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])
SLOTS = 100  # campaigns of one status read for a gate page; more would be no gate at all
LIVE = ("running", "scheduled", "paused")


def _missing_text(missing: list[str]) -> str:
    if "administrator" in missing:
        return _("Make the bot an administrator of this channel.")
    return _("Give the bot the right “Invite users via link”.")


async def _channels_page(
    request: Request, viewer: Viewer, bot_id: int, errors: dict[str, str], status: int = 200
) -> Response:
    features = services_of(request)
    bot = await services_of(request).bots.get(bot_id)
    channels, _total = await features.channels.list(bot_id, 200, 0)
    gate = await features.bot_settings.gate(bot_id)
    in_gate = {g["chat_id"]: (i, g) for i, g in enumerate(gate)}
    rows: list[dict[str, Any]] = []
    for c in channels:
        position, entry = in_gate.get(c["chat_id"], (None, None))
        rows.append(
            {
                **c,
                "in_gate": position is not None,
                "position": (position + 1) if position is not None else None,
                "request_counts": bool(entry and entry.get("request_counts")),
                "advice": _missing_text(list(c["missing"])) if c["status"] != "ok" else "",
            }
        )
    rows.sort(key=lambda r: (not r["in_gate"], r["position"] or 0))
    for number, row in enumerate(rows, start=1):
        row["position"] = number  # channels outside the gate follow it, in the order they came
    context = {
        "bot": bot,
        "channels": rows,
        "errors": errors,
        "slots": await _campaign_slots(request, bot_id),
        **campaign_names(),
    }
    return render(request, viewer, "channels.html", context, status)


async def _campaign_slots(request: Request, bot_id: int) -> list[dict[str, Any]]:
    """The bot's campaigns that hold (or will hold) a place in its gate, with its link."""
    service = services_of(request).campaigns
    slots = []
    for status in LIVE:  # by status: finished campaigns, however many, do not crowd these out
        campaigns, _total = await service.page(SLOTS, 0, status=status, bot_id=bot_id)
        for campaign in campaigns:
            link = next((x for x in campaign["links"] if x["bot_id"] == bot_id), None)
            slots.append({**campaign, "invite_link": link["invite_link"] if link else None})
    # Running ones first (they are in the gate now), the first place before the last.
    slots.sort(key=lambda c: (c["status"] != "running", c["position"] != "first"))
    return slots


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
        channel = await services_of(request).channels.add(bot_id, ref)
    except REFUSED as exc:
        return await _channels_page(request, viewer, bot_id, {"ref": describe(exc)}, 422)
    await audit(
        request,
        viewer,
        "channel.added",
        channel["title"],
        after={"chat_id": channel["chat_id"], "bot_id": bot_id},
    )
    return redirect(request, f"/bots/{bot_id}/channels")


@router.post("/bots/{bot_id}/channels/{chat_id}/check")
async def channels_check(request: Request, bot_id: int, chat_id: int, viewer: Edit) -> Response:
    """Check the bot's rights in one channel again, now."""
    try:
        await services_of(request).channels.check(bot_id, chat_id)
    except REFUSED as exc:
        errors = {f"c{chat_id}": describe(exc)}
        return await _channels_page(request, viewer, bot_id, errors, 422)
    return redirect(request, f"/bots/{bot_id}/channels")


@router.post("/bots/{bot_id}/gate")
async def gate_save(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Save which channels form the gate, in which order, and whether join requests count."""
    form = await request.form()
    # In page order (dict keys keep it, and drop repeats): channels ticked without an order
    # number join the gate in the order the owner sees them.
    chosen = list(
        dict.fromkeys(int(str(v)) for v in form.getlist("gate") if str(v).lstrip("-").isdigit())
    )
    counts = {int(str(v)) for v in form.getlist("requests") if str(v).lstrip("-").isdigit()}

    def position(chat_id: int) -> float:
        raw = str(form.get(f"pos_{chat_id}", ""))
        return float(raw) if raw.isdigit() else 1e9

    entries = [(c, c in counts) for c in sorted(chosen, key=position)]
    features = services_of(request)
    try:
        before = await features.bot_settings.gate(bot_id)
        after = await features.bot_settings.set_gate(bot_id, entries)
    except REFUSED as exc:
        return await _channels_page(request, viewer, bot_id, {"gate": describe(exc)}, 422)
    await _audit_gate(request, viewer, bot_id, before, after)
    return redirect(request, f"/bots/{bot_id}/channels")


def _gate_summary(gate: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "channels": [g["chat_id"] for g in gate],
        "requests_count": [g["chat_id"] for g in gate if g["request_counts"]],
    }


async def _audit_gate(
    request: Request,
    viewer: Viewer,
    bot_id: int,
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
) -> None:
    if _gate_summary(before) == _gate_summary(after):
        return
    await audit(
        request,
        viewer,
        "gate.changed",
        f"bot {bot_id}",
        before=_gate_summary(before),
        after=_gate_summary(after),
    )


@router.post("/bots/{bot_id}/gate/order")
async def gate_order(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Put the gate's channels in the order given (the drag-and-drop list posts it by script).

    Only the order changes: which channels are in the gate and whether their join requests
    count stay as saved. Channels not named keep their place after the named ones.
    """
    form = await request.form()
    order = [int(str(v)) for v in form.getlist("order") if str(v).lstrip("-").isdigit()]
    rank = {chat_id: i for i, chat_id in enumerate(order)}
    features = services_of(request)
    try:
        before = await features.bot_settings.gate(bot_id)
        ordered = sorted(before, key=lambda g: rank.get(g["chat_id"], len(rank) + g["position"]))
        after = await features.bot_settings.set_gate(
            bot_id, [(g["chat_id"], g["request_counts"]) for g in ordered]
        )
    except REFUSED as exc:
        return await _channels_page(request, viewer, bot_id, {"gate": describe(exc)}, 422)
    await _audit_gate(request, viewer, bot_id, before, after)
    return Response(status_code=204)  # the page already shows the new order
