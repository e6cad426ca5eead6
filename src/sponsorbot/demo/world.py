"""The demo's simulated Telegram: bots, their channels, sponsors' channels, people and files.

The simulator keeps its world in memory, so every start of the demo builds it again. With the
same seed and the same calls in the same order, ids, tokens and file ids come out the same, so a
kept demo database still matches the new world. That holds only while nothing else draws on the
simulator's random numbers, so everything here happens before the product is given the bots.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sponsorbot.simulator.client import SimulatorClient

SEED = 1
LIVE_VISITORS = 300
# The month of history (history.py): about this many newcomers a day over all the bots. Each
# bot's newcomers are people of the simulator who started it, so what the bot sends them later
# (a broadcast) reaches them as it would reach real people.
PEOPLE_PER_DAY = 250
HISTORY_DAYS = 30


@dataclass(frozen=True)
class ChannelPlan:
    """One channel of a demo bot, as the simulator should make it."""

    title: str
    username: str | None = None
    join_request: bool = False
    loses_rights: bool = False


@dataclass(frozen=True)
class BotPlan:
    """One demo bot: its username, name, channels and content."""

    username: str
    name: str
    channels: tuple[ChannelPlan, ...]
    contents: tuple[tuple[str, str], ...]  # (kind, caption or text)
    share: float  # its part of the visitors
    earlier: int = 0  # people who started it before the month of history

    @property
    def newcomers(self) -> int:
        """The people the month of history brings to this bot."""
        return int(PEOPLE_PER_DAY * HISTORY_DAYS * self.share)


PLANS: tuple[BotPlan, ...] = (
    BotPlan(
        "cinema_vault_bot",
        "Cinema Vault",
        (
            ChannelPlan("Cinema News", "cinema_news_daily"),
            ChannelPlan("Cinema VIP (private)", join_request=True),
        ),
        (
            ("video", "Episode 1: the pilot"),
            ("video", "Episode 2: the storm"),
            ("video", "Episode 3: the return"),
            ("video", "Episode 4: the bridge"),
            ("video", "Season finale"),
            ("video", "Behind the scenes"),
            ("photo", "Poster, season 2"),
            ("photo", "فیلم هفته: پوستر"),
            ("document", "Subtitles (fa), episodes 1-5"),
            ("document", "Subtitles (en), episodes 1-5"),
            ("video", "قسمت اول با زیرنویس فارسی"),
            ("video", "قسمت دوم با زیرنویس فارسی"),
            ("text", "Release calendar: a new episode every Thursday at 20:00."),
            ("video", "Trailer, season 3"),
            ("photo", "Cast photo"),
            ("video", "Director's cut, part 1"),
        ),
        0.5,
        earlier=7000,
    ),
    BotPlan(
        "study_notes_bot",
        "Study Notes",
        (
            ChannelPlan("Study Daily", "study_daily_notes"),
            ChannelPlan("Tech Digest", "tech_digest_weekly"),
        ),
        (
            ("document", "Calculus I, complete notes (PDF)"),
            ("document", "Physics formulas sheet"),
            ("document", "جزوه شیمی آلی"),
            ("document", "English grammar in 50 pages"),
            ("document", "Konkur practice test 1"),
            ("document", "Konkur practice test 2"),
            ("video", "Lecture: derivatives in 20 minutes"),
            ("video", "Lecture: Newton's laws"),
            ("photo", "Periodic table (high resolution)"),
            ("text", "Study plan: 12 weeks to the exam, one page a day."),
            ("document", "Python for beginners (PDF)"),
            ("document", "آمار و احتمال، خلاصه فصل‌ها"),
            ("video", "Lecture: integrals"),
            ("document", "Answers, practice tests 1-2"),
        ),
        0.32,
    ),
    BotPlan(
        "music_box_bot",
        "Music Box",
        (
            ChannelPlan("Music Box FA", "music_box_fa"),
            ChannelPlan("Old Sponsor", "old_sponsor_beats", loses_rights=True),
        ),
        (
            ("document", "Album: Night Drive (MP3, 320k)"),
            ("document", "Single: Tehran Rain"),
            ("document", "آلبوم جدید، کیفیت بالا"),
            ("video", "Live concert, 2025"),
            ("document", "Playlist: Focus (12 tracks)"),
            ("photo", "Album cover art"),
            ("document", "Lyrics booklet (PDF)"),
            ("video", "Music video: Sunrise"),
            ("document", "Single: Caspian"),
            ("text", "New music every Monday and Friday."),
        ),
        0.18,
    ),
)


@dataclass(frozen=True)
class SponsorPlan:
    """A sponsor's public channel, where the named demo bots are admins who may invite: the
    channel of a campaign (demo/campaigns.py)."""

    title: str
    username: str
    bots: tuple[str, ...]  # usernames of the demo bots


SPONSORS: tuple[SponsorPlan, ...] = (
    SponsorPlan("English Daily", "english_daily_pod", ("study_notes_bot", "music_box_bot")),
    SponsorPlan("Movie Night FA", "movie_night_fa", ("cinema_vault_bot",)),
    SponsorPlan("Gadget Deals", "gadget_deals_ir", ("cinema_vault_bot", "study_notes_bot")),
    SponsorPlan("Ashpazi Recipes", "ashpazi_recipes", ("cinema_vault_bot",)),
)


@dataclass
class SimSponsor:
    """A sponsor's channel as the simulator made it, and the ids of its admin bots."""

    plan: SponsorPlan
    chat_id: int
    bot_ids: tuple[int, ...]


@dataclass
class SimChannel:
    """A channel as the simulator made it."""

    plan: ChannelPlan
    chat_id: int


@dataclass
class SimBot:
    """A bot as the simulator made it, with its channels and the file ids of its content."""

    plan: BotPlan
    id: int
    token: str
    channels: list[SimChannel] = field(default_factory=list)
    file_ids: list[str | None] = field(default_factory=list)  # None for a text item
    newcomers: list[int] = field(default_factory=list)  # the history's people, in order
    earlier: list[int] = field(default_factory=list)  # who started it before the history


@dataclass
class World:
    """The whole simulated side of the demo."""

    phone_user: int
    owner_user: int
    visitors: list[int]
    bots: list[SimBot]
    sponsors: list[SimSponsor] = field(default_factory=list)


async def build(sim: SimulatorClient) -> World:
    """Make the demo's world in a fresh simulator (same seed, same calls: same ids)."""
    phone = await sim.create_user("You", language_code="en")
    owner = await sim.create_user("Demo Owner", username="demo_owner", language_code="en")
    bots: list[SimBot] = []
    for plan in PLANS:
        made = await sim.create_bot(plan.username, first_name=plan.name)
        bot = SimBot(plan, int(made["id"]), str(made["token"]))
        for channel_plan in plan.channels:
            private = channel_plan.username is None
            chat = await sim.create_channel(
                channel_plan.title,
                username=channel_plan.username,
                private=private,
                join_request=channel_plan.join_request,
                owner_id=owner["id"],
            )
            await sim.make_admin(chat["id"], bot.id, can_invite_users=True)
            bot.channels.append(SimChannel(channel_plan, int(chat["id"])))
        for n, (kind, caption) in enumerate(plan.contents):
            if kind == "text":
                bot.file_ids.append(None)
                continue
            extension = {"video": "mp4", "photo": "jpg", "document": "pdf"}[kind]
            sent = await sim.send_file(
                owner["id"],
                bot.id,
                kind=kind,
                file_name=f"item{n + 1}.{extension}",
                caption=caption,
            )
            bot.file_ids.append(str(sent["file_id"]))
        bots.append(bot)
    sponsors: list[SimSponsor] = []
    by_name = {b.plan.username: b.id for b in bots}
    for sponsor in SPONSORS:
        chat = await sim.create_channel(
            sponsor.title, username=sponsor.username, owner_id=owner["id"]
        )
        admins = tuple(by_name[name] for name in sponsor.bots)
        for bot_id in admins:
            await sim.make_admin(chat["id"], bot_id, can_invite_users=True)
        sponsors.append(SimSponsor(sponsor, int(chat["id"]), admins))
    # Live visitors speak Persian more often than English, as the history's people do.
    persian = await sim.create_users(LIVE_VISITORS * 2 // 3, "بازدیدکننده", "fa")
    english = await sim.create_users(LIVE_VISITORS - len(persian), "Visitor", "en")
    visitors = [v for pair in zip(persian, english, strict=False) for v in pair]
    visitors += persian[len(english) :]
    # Last, so the ids made before are those of earlier versions (a kept demo still matches).
    for bot in bots:
        bot.newcomers = await sim.create_users(bot.plan.newcomers, "Member", started=bot.id)
        if bot.plan.earlier:
            bot.earlier = await sim.create_users(bot.plan.earlier, "Member", started=bot.id)
    return World(int(phone["id"]), int(owner["id"]), visitors, bots, sponsors)
