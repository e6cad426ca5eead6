"""The owner API's statistics body (it makes the OpenAPI document)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from sponsorbot.features.stats.overview import Metric


class Point(BaseModel):
    """One hour (a one-day range) or one day of the series, with the same position in the
    range before."""

    at: str = Field(description="ISO hour start with its offset, or an ISO date")
    value: int
    previous: int


class HeatCell(BaseModel):
    """Links opened in one hour of one weekday over the range (weekday 0 is Monday)."""

    weekday: int = Field(ge=0, le=6)
    hour: int = Field(ge=0, le=23)
    value: int


class ContentRow(BaseModel):
    """One content item's funnel over the range."""

    id: int
    bot_id: int | None = None
    code: str | None = None
    caption: str | None = None
    title: str | None = Field(
        None,
        description="its caption, else the text, caption or file name of its first part"
        " (none for a file sent without any: its code names it)",
    )
    started: int
    gate_shown: int
    gate_joined: int = Field(description="gates at which the person then joined a channel")
    gate_cleared: int = Field(description="passes after being shown the gate")
    gate_passed: int = Field(description="every pass, including people already members")
    content_sent: int


class ChannelRow(BaseModel):
    """One channel of one bot over the range."""

    bot_id: int
    chat_id: int
    title: str
    username: str | None = None
    gate_listed: int = Field(description="times a shown gate asked for this channel")
    joined: int
    join_request: int
    left: int


class CampaignRow(BaseModel):
    """One campaign over the range."""

    id: int
    name: str
    chat_title: str
    status: str
    gate_listed: int = Field(description="times its channel was shown in its bots' gates")
    campaign_joined: int = Field(
        description="credited joins through its invite links in the range (once per person)"
    )
    left: int = Field(
        description="leaves in the range that cost a credit (inside the retention window)"
    )


class StatsOut(BaseModel):
    """A range's figures, the range before it, and what the statistics page draws.

    Figures: visitors (distinct people per bot), visitor_new, returning, started (links
    opened), gate_shown, joined (channel joins), gate_passed, content_sent, blocked, sent
    (messages), throttled (429 answers).
    """

    zone: str
    first: date
    last: date
    previous_first: date
    previous_last: date
    bots: list[int]
    figures: dict[str, int]
    previous: dict[str, int]
    metric: Metric
    per: str = Field(description="hour for a one-day range, else day")
    series: list[Point]
    heatmap: list[HeatCell]
    funnel: dict[str, int]
    content: list[ContentRow]
    channels: list[ChannelRow]
    campaigns: list[CampaignRow]
