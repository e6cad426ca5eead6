"""Sponsor campaigns: create, list, read with figures, change, pause, resume, end, and the
sponsor's report link."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request

from sponsorbot.features.campaigns.queries import Campaign
from sponsorbot.features.campaigns.rules import Status
from sponsorbot.features.campaigns.service import Draft
from sponsorbot.web.api.auth import actor_name
from sponsorbot.web.api.deps import BotFilter, Editor, Limit, Offset, Reader, RowId, Service
from sponsorbot.web.api.models import CampaignIn, CampaignOut, CampaignPatch, Page
from sponsorbot.web.deps import report_url

router = APIRouter()


def with_report_url(request: Request, campaign: Campaign) -> CampaignOut:
    """The campaign as the API answers it, with the address of its report page (None when
    revoked)."""
    shown = {
        name: getattr(campaign, name) for name in CampaignOut.model_fields if name != "report_url"
    }
    shown["report_url"] = report_url(request, campaign.report_token)
    return CampaignOut.model_validate(shown, from_attributes=True)


@router.post(
    "/campaigns",
    status_code=201,
    response_model=CampaignOut,
    summary="Create a campaign (every bot must be an admin of the channel with can_invite_users)",
)
async def create_campaign(
    body: CampaignIn, request: Request, who: Editor, features: Service
) -> CampaignOut:
    draft = Draft(**body.model_dump(exclude={"bot_ids"}), bot_ids=tuple(body.bot_ids))
    campaign = await features.campaigns.create(draft, actor_name(who))
    return with_report_url(request, campaign)


@router.get("/campaigns", response_model=Page[CampaignOut], summary="List campaigns")
async def list_campaigns(
    request: Request,
    who: Reader,
    features: Service,
    status: Status | None = None,
    bot_id: BotFilter = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Page[CampaignOut]:
    rows, total = await features.campaigns.page(limit, offset, status, bot_id)
    items = [with_report_url(request, r) for r in rows]
    return Page(items=items, total=total, limit=limit, offset=offset)


@router.get("/campaigns/{campaign_id}", response_model=CampaignOut, summary="One campaign")
async def get_campaign(
    campaign_id: RowId, request: Request, who: Reader, features: Service
) -> CampaignOut:
    return with_report_url(request, await features.campaigns.get(campaign_id))


@router.patch("/campaigns/{campaign_id}", response_model=CampaignOut, summary="Change a campaign")
async def change_campaign(
    campaign_id: RowId, body: CampaignPatch, request: Request, who: Editor, features: Service
) -> CampaignOut:
    changes = body.model_dump(exclude_none=True, exclude={"clear_goal", "clear_ends_at"})
    if body.clear_goal:
        changes["goal_joins"] = None
    if body.clear_ends_at:
        changes["ends_at"] = None
    return with_report_url(request, await features.campaigns.change(campaign_id, changes))


@router.post(
    "/campaigns/{campaign_id}/{action}",
    response_model=CampaignOut,
    summary="Pause, resume or end a campaign; rotate or revoke its report link",
)
async def act_on_campaign(
    campaign_id: RowId,
    action: Literal["pause", "resume", "end", "rotate-report", "revoke-report"],
    request: Request,
    who: Editor,
    features: Service,
) -> CampaignOut:
    service = features.campaigns
    acts = {
        "pause": service.pause,
        "resume": service.resume,
        "end": service.end,
        "rotate-report": service.rotate_report,
        "revoke-report": service.revoke_report,
    }
    return with_report_url(request, await acts[action](campaign_id))
