"""What the panel says when a feature refuses: one tuple of refusals, one text per refusal.

Services raise `FeatureError`s with a stable `code`; here each code becomes a sentence in the
viewer's language (the service's English message is the fallback). A refusal a route does not
catch becomes a page: "not found" for `NotFound`, else the sentence on a card.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from sponsorbot.features.errors import Conflict, FeatureError, Invalid, NotFound, Refused, TooLarge
from sponsorbot.telegram import TelegramError
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import Viewer, render, viewer_of

# What a call to a feature service may end in besides its answer: its own refusal, Telegram's,
# or the network's.
REFUSED: tuple[type[Exception], ...] = (FeatureError, TelegramError, OSError)
STATUS: tuple[tuple[type[FeatureError], int], ...] = (
    (NotFound, 404),
    (Conflict, 409),
    (TooLarge, 413),
    (Invalid, 422),
    (Refused, 422),
)


def megabytes(size: int) -> str:
    """A size in whole megabytes, for the viewer."""
    return f"{size / (1024 * 1024):.0f}"


def _texts() -> dict[str, str]:
    # Built per call: gettext answers in the language of the request being served.
    return {
        "token_malformed": _(
            "This is not a bot token. It looks like 123456789:AAH… — copy it from @BotFather."
        ),
        "bot_exists": _("This bot is already connected."),
        "webhook_unavailable": _(
            "Webhook mode needs a public https address (SPONSORBOT_PUBLIC_URL). Use polling."
        ),
        "token_refused": _(
            "Telegram refused this token. Check it in @BotFather, or create a new one."
        ),
        "webhook_refused": _(
            "Telegram refused the webhook. Check SPONSORBOT_PUBLIC_URL (HTTPS, a valid "
            "certificate)."
        ),
        "channel_ref": _("Use @name, a t.me link, a post link or an id like -100…; channels only."),
        "chat_hidden": _(
            "Telegram cannot show this chat to the bot. For a private channel, add the bot as "
            "an administrator first."
        ),
        "no_storage_chat": _("Set the bot's storage chat first: uploaded files are kept there."),
        "empty_file": _("Choose a file that is not empty."),
        "storage_refused": _(
            "Telegram refused the file in the storage chat. Check that the bot is an "
            "administrator there and may post."
        ),
        "caption_too_long": _("A caption holds up to 1024 characters."),
        "text_length": _("Write the text to hand out (up to 4096 characters)."),
        "auto_delete_range": _(
            "Minutes from 0 (never) to 2820 (47 hours): Telegram lets a bot delete its "
            "messages only within 48 hours."
        ),
        "token_name": _("Name the token (1 to 100 characters), e.g. after the script using it."),
        "unknown_role": _("Choose a role no higher than your own."),
        "role_too_high": _("Choose a role no higher than your own."),
        "gate_twice": _("A channel appears twice in the gate."),
        "unknown_channels": _("Add these channels to the bot first."),
        "campaign_name": _("Give the campaign a name of 1 to 200 characters."),
        "campaign_goal": _("The goal is a whole number of joins, at least 1 (or empty for none)."),
        "campaign_position": _("Choose first or last in the gate."),
        "campaign_retention": _("The retention window is 1 to %(n)s hours.", n=24 * 90),
        "campaign_ends": _("Choose an end date in the future, or none."),
        "campaign_bots": _("Choose at least one bot for the campaign."),
        "campaign_status": _("Choose a status from the list."),
        "campaign_missing": _("This campaign does not exist."),
        "report_missing": _("This report link does not exist or was withdrawn."),
        "campaign_finished": _("A finished campaign cannot be changed."),
        "campaign_state": _("The campaign cannot do that in its current state."),
    }


def describe(exc: BaseException) -> str:
    """The refusal in the viewer's language."""
    if not isinstance(exc, FeatureError):
        return _("Telegram could not be reached. Try again in a minute.")
    if exc.code == "rights_missing" and exc.details.get("bot"):
        lacking = exc.details.get("bots") or [exc.details]
        return " ".join(
            _campaign_rights(str(row["bot"]), list(row.get("missing", []))) for row in lacking
        )
    if exc.code == "campaign_overlap":
        name = exc.details.get("name")
        if not name:
            return _("Another campaign already runs on this channel in one of these bots.")
        # Filled in after translation: a name's digits stay as the owner typed them.
        text = _("The campaign “%(name)s” already runs on this channel in one of these bots.")
        return text % {"name": str(name)}
    if exc.code == "rights_missing":
        if "administrator" in exc.details.get("missing", []):
            return _(
                "The bot is not an administrator there: make it one, then add the channel again."
            )
        return _(
            "The bot lacks the right “Invite users via link” there: grant it in the "
            "channel's administrators, then add the channel again."
        )
    if exc.code == "too_large":
        limit = int(exc.details.get("limit", 0))
        return _(
            "The file is larger than %(mb)s MB, the most a bot may upload.", mb=megabytes(limit)
        )
    if exc.code == "gate_full":
        return _("A gate holds at most %(n)s channels.", n=exc.details.get("most", 0))
    known = _texts().get(exc.code or "")
    if known is not None:
        return known
    if isinstance(exc, NotFound):
        return _("Not found")
    return exc.message


def _campaign_rights(bot: str, missing: list[str]) -> str:
    """A campaign's channel check failed in one of its bots: which bot, which right."""
    if "administrator" in missing:
        text = _(
            "@%(bot)s is not an administrator of this channel: make it one, with the right "
            "“Invite users via link”."
        )
    else:
        text = _(
            "@%(bot)s lacks the right “Invite users via link” in this channel: grant it "
            "in the channel's administrators."
        )
    # Filled in after translation: the bot's username keeps its Latin digits in Persian.
    return text % {"bot": bot}


def text_problem(problem: dict[str, Any]) -> str:
    """Why one of the owner's visitor texts cannot be used (from `set_texts`' refusal)."""
    code = problem.get("problem")
    if code == "too_long":
        return _("Up to %(n)s characters.", n=problem.get("limit", 0))
    if code == "unbalanced":
        return _("A { or } is unbalanced; write {{ and }} for a brace.")
    allowed = list(problem.get("allowed", []))
    if not allowed:
        return _("This text takes no placeholders in braces.")
    names = ", ".join("{" + name + "}" for name in allowed)
    return _("Only these placeholders work here: %(names)s", names=names)


def status_of(exc: BaseException) -> int:
    """The HTTP status a page answering this refusal carries."""
    if isinstance(exc, FeatureError):
        return next((status for cls, status in STATUS if isinstance(exc, cls)), 422)
    return 503


async def refusal_page(request: Request, exc: Exception) -> Response:
    """A refusal no route caught: the not-found page, or the refusal on a card."""
    viewer: Viewer | None = getattr(request.state, "viewer", None)
    assert viewer is not None  # panel routes resolve the viewer before they call a service
    if isinstance(exc, NotFound):
        return render(request, viewer, "not_found.html", status=404)
    context = {"message": describe(exc)}
    return render(request, viewer, "refused.html", context, status=status_of(exc))


async def not_found_page(request: Request) -> Response:
    """The panel's not-found page, for an address no page has or an id that is not one (the
    viewer is read here: no route ran to read it)."""
    viewer = await viewer_of(request)
    return render(request, viewer, "not_found.html", status=404)


def bad_path(exc: RequestValidationError) -> bool:
    """Whether a request failed on its path (/campaigns/abc): the page does not exist."""
    return any(tuple(e.get("loc", ()))[:1] == ("path",) for e in exc.errors())
